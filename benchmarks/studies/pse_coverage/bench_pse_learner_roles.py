"""Which nuisance role carries the `threshold` bias? Less-shrunk boosting for the propensities only, for every role, or for
the regressions only, paired with the package defaults on the same samples and folds (the default coverage study's seeds).

Each replication draws the `sim_nonlinear` sample of `bench_pse_coverage_nonlinear.py` (seeds [2026, n, rep, design index])
and cross-fits three times on the same folds (`seed=rep`):
  EE  the package defaults (boosting, min_samples_leaf 40, L2 1, patience 10)
  PL  less-shrunk boosting (min_samples_leaf 20, no L2, patience 30, up to 1000 rounds) for the propensities only
  LL  less-shrunk boosting for every role (propensities, outcome, pseudo-outcome regressions)
  EL  the default propensities with LL's regressions (so LL vs EL isolates the propensities, EL vs EE the regressions)
  TT  the exact nuisances (`nonlinear_nuisances`), the oracle
Each is a DR estimate with its influence-function SE (clip 0.01).
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_learner_roles.py DESIGN N REP_FROM REP_TO     e.g. threshold 5000 0 60
     .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_learner_roles.py --summarise DESIGN N
Resumable: draws go to benchmarks/studies/pse_coverage/results/pse_learner_roles_{DESIGN}_{N}_draws.csv (or under $PSE_BENCH_OUT) after every
replication; the table pse_learner_roles_{DESIGN}_{N}.{csv,md} is written at the end.
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import derived_rng, markdown_table
from trustml_nb.pse import crossfit_gmf
from trustml_nb.pse_simulator import NONLINEAR_DESIGNS, WORLDS, nonlinear_nuisances, population_truth, sim_nonlinear

sys.path.insert(0, str(Path(__file__).parent))
from bench_pse_e2_learner import CLIP, effects  # noqa: E402

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
LOOSE = dict(max_iter=1000, learning_rate=0.05, max_leaf_nodes=8, min_samples_leaf=20, l2_regularization=0.0,
             early_stopping=True, validation_fraction=0.2, n_iter_no_change=30)


def one_rep(design, n, rep, T):
    df = sim_nonlinear(n, design, seed=derived_rng(2026, n, rep, list(NONLINEAR_DESIGNS).index(design))).data
    x, y = df.x.to_numpy(), df.y.to_numpy()
    blocks = [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()]
    tp, tm = nonlinear_nuisances(df, design, T)
    tp = [np.clip(p, CLIP, 1 - CLIP) for p in tp]
    by = NONLINEAR_DESIGNS[design]['binary']
    pl = {'propensity': HistGradientBoostingClassifier(**LOOSE, random_state=rep)}
    ll = {**pl, 'outcome': (HistGradientBoostingClassifier if by else HistGradientBoostingRegressor)(**LOOSE, random_state=rep),
          'pseudo': HistGradientBoostingRegressor(**LOOSE, random_state=rep)}
    with threadpool_limits(1):
        cf = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP)
        cl = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP, learners=ll)
        cp = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP, learners=pl)
    combos = {'EE': (cf.propensities, cf.regressions), 'PL': (cp.propensities, cp.regressions),
              'LL': (cl.propensities, cl.regressions), 'TT': (tp, tm), 'EL': (cf.propensities, cl.regressions)}
    return [dict(rep=rep, combo=combo, effect=eff, est=est, se=se)
            for combo, (P, M) in combos.items() for eff, est, se in effects(x, y, P, M, T)]


def summarise(d, truth):
    "Per (effect, combo): bias/SD, SE/SD, coverage, SD; and the paired shift of the estimate against EE with its MC SE."
    d = d.assign(truth=d.effect.map(truth))
    d['covered'] = (abs(d.est - d.truth) <= 1.959964 * d.se).astype(float)
    ee = d[d.combo == 'EE'].set_index(['rep', 'effect']).est
    d['shift'] = d.est.to_numpy() - ee.reindex(pd.MultiIndex.from_frame(d[['rep', 'effect']])).to_numpy()
    g = d.groupby(['effect', 'combo'], sort=False)
    s = pd.DataFrame({'reps': g.size(), 'bias': g.apply(lambda q: (q.est - q.truth).mean(), include_groups=False), 'sd': g.est.std(),
                      'mean_se': g.se.mean(), 'coverage': g.covered.mean(), 'shift_vs_EE': g['shift'].mean(),
                      'shift_mcse': g['shift'].std() / np.sqrt(g.size())}).reset_index()
    s['bias_over_sd'], s['se_over_sd'] = s.bias / s.sd, s.mean_se / s.sd
    return s


HEADER = ("# Which role carries the bias: design '{design}', n = {n:,}, {reps} replications\n\n"
          "Same samples (the default coverage study's seeds) and folds in every row. EE: package defaults; PL: less-shrunk boosted propensities; "
          "LL: less-shrunk boosting for every role; EL: default propensities with LL's regressions; TT: exact nuisances. "
          "shift_vs_EE: mean paired change of the estimate against EE (with its MC SE).")


def write(design, n, cmd, name='pse_learner_roles', header=HEADER):
    "Summarise the draws of `name` for (design, n) into {name}_{design}_{n}.{csv,md}."
    truth = population_truth('nonlinear', n=2_000_000, seed=12345, design=design)['y'].to_dict()
    stem = OUT / f"{name}_{design}_{n}"
    d = pd.read_csv(f"{stem}_draws.csv")
    s = summarise(d, truth)
    s.to_csv(f"{stem}.csv", index=False)
    head = (header.format(design=design, n=n, reps=d.rep.nunique())
            + f" Command: `{cmd}`; load average at the end {os.getloadavg()[0]:.1f} (2 cores, shared).\n\n")
    Path(f"{stem}.md").write_text(head + markdown_table(s.round(4)) + "\n")
    return s


def run(argv, one_rep=None, name='pse_learner_roles', header=HEADER):
    "Command line: DESIGN N REP_FROM REP_TO (resumable, draws saved after every replication) or --summarise DESIGN N."
    one_rep = one_rep or globals()['one_rep']
    script = f".venv/bin/python benchmarks/studies/pse_coverage/bench_{name}.py"
    if argv[:1] == ['--summarise']:
        reps = pd.read_csv(OUT / f"{name}_{argv[1]}_{argv[2]}_draws.csv").rep.nunique()
        cmd = f"{script} {argv[1]} {argv[2]} 0 {reps}`, then `--summarise {argv[1]} {argv[2]}"
        return print(write(argv[1], int(argv[2]), cmd, name, header).round(3).to_string(index=False))
    design, n, r0, r1 = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    T = list(WORLDS.values())
    OUT.mkdir(exist_ok=True)
    draws = OUT / f"{name}_{design}_{n}_draws.csv"
    d = pd.read_csv(draws) if draws.exists() else pd.DataFrame()
    t0 = time.time()
    for rep in range(r0, r1):
        if len(d) and rep in set(d.rep): continue
        d = pd.concat([d, pd.DataFrame(one_rep(design, n, rep, T))], ignore_index=True)
        d.to_csv(draws, index=False)
        print(rep, f'{time.time() - t0:.0f} s', flush=True)
    print(write(design, n, f"{script} {design} {n} {r0} {r1}", name, header).round(3).to_string(index=False))


if __name__ == "__main__":
    run(sys.argv[1:])
