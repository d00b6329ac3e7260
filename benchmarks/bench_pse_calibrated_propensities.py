"""Do calibrated propensities widen the short intervals? Post-hoc calibration of the package's own cross-fitted
propensities (no refit), paired with the defaults on the same samples and folds.

Each replication draws a `sim_nonlinear` sample (seeds [7, n, rep], the samples of bench_pse_e2_learner.py), cross-fits the
package defaults once, and recalibrates every stage's cross-fitted propensity e_k against X:
  P:iso     isotonic regression of X on e_k over the whole sample (the pooled out-of-fold predictions)
  P:platt   logistic regression of X on logit(e_k) (an intercept and a slope: a slope above 1 undoes shrinkage)
  P:isocf   isotonic calibration cross-fitted on the same folds (each fold calibrated on the other folds)
against EE (the package), e2:exact (only e2 exact) and TT (all exact). Clip 0.01 after calibration. DR estimates with
influence-function SEs.
Run: .venv/bin/python benchmarks/bench_pse_calibrated_propensities.py DESIGN N REP_FROM REP_TO     e.g. binary 2000 0 100
     .venv/bin/python benchmarks/bench_pse_calibrated_propensities.py --summarise DESIGN N
Resumable: draws go to benchmarks/results/pse_calibrated_propensities_{DESIGN}_{N}_draws.csv (or under $PSE_BENCH_OUT).
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import markdown_table
from trustml_nb.pse import crossfit_gmf
from trustml_nb.pse_simulator import WORLDS, nonlinear_nuisances, population_truth, sim_nonlinear

sys.path.insert(0, str(Path(__file__).parent))
from bench_pse_e2_learner import CLIP, effects  # noqa: E402
from bench_pse_learner_roles import summarise  # noqa: E402

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))


def iso(p, x):
    return np.clip(IsotonicRegression(y_min=0, y_max=1, out_of_bounds='clip').fit(p, x).predict(p), CLIP, 1 - CLIP)


def platt(p, x):
    lg = np.log(p / (1 - p))[:, None]
    return np.clip(LogisticRegression(C=1e6).fit(lg, x).predict_proba(lg)[:, 1], CLIP, 1 - CLIP)


def iso_cf(p, x, folds):
    out = np.empty_like(p)
    for f in np.unique(folds):
        te = folds == f
        out[te] = IsotonicRegression(y_min=0, y_max=1, out_of_bounds='clip').fit(p[~te], x[~te]).predict(p[te])
    return np.clip(out, CLIP, 1 - CLIP)


def one_rep(design, n, rep, T):
    df = sim_nonlinear(n, design, seed=np.random.default_rng([7, n, rep])).data
    x, y = df.x.to_numpy(), df.y.to_numpy()
    blocks = [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()]
    tp, tm = nonlinear_nuisances(df, design, T)
    tp = [np.clip(p, CLIP, 1 - CLIP) for p in tp]
    with threadpool_limits(1):
        cf = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP)
    ep, em = cf.propensities, cf.regressions
    combos = {'EE': (ep, em), 'e2:exact': ([ep[0], ep[1], tp[2]], em), 'TT': (tp, tm),
              'P:iso': ([iso(p, x) for p in ep], em), 'P:platt': ([platt(p, x) for p in ep], em),
              'P:isocf': ([iso_cf(p, x, cf.folds) for p in ep], em)}
    return [dict(rep=rep, combo=combo, effect=eff, est=est, se=se)
            for combo, (P, M) in combos.items() for eff, est, se in effects(x, y, P, M, T)]


def write(design, n, cmd=''):
    truth = population_truth('nonlinear', n=2_000_000, seed=12345, design=design)['y'].to_dict()
    stem = OUT / f"pse_calibrated_propensities_{design}_{n}"
    d = pd.read_csv(f"{stem}_draws.csv")
    s = summarise(d, truth)
    s.to_csv(f"{stem}.csv", index=False)
    head = (f"# Calibrated propensities, paired: design '{design}', n = {n:,}, {d.rep.nunique()} replications\n\n"
            "Same samples and folds in every row. EE: package defaults; e2:exact: only e2 exact; TT: all exact; P:iso, P:platt, P:isocf: every "
            "cross-fitted propensity recalibrated (pooled isotonic, logistic on the logit, fold-wise isotonic). "
            f"Command: `{cmd or '.venv/bin/python benchmarks/bench_pse_calibrated_propensities.py ' + design + ' ' + str(n) + ' 0 100'}`.\n\n")
    Path(f"{stem}.md").write_text(head + markdown_table(s.round(4)) + "\n")
    return s


def main(design, n, r0, r1):
    n, r0, r1 = int(n), int(r0), int(r1)
    T = list(WORLDS.values())
    OUT.mkdir(exist_ok=True)
    draws = OUT / f"pse_calibrated_propensities_{design}_{n}_draws.csv"
    d = pd.read_csv(draws) if draws.exists() else pd.DataFrame()
    t0 = time.time()
    for rep in range(r0, r1):
        if len(d) and rep in set(d.rep): continue
        d = pd.concat([d, pd.DataFrame(one_rep(design, n, rep, T))], ignore_index=True)
        d.to_csv(draws, index=False)
        print(rep, f'{time.time() - t0:.0f} s', flush=True)
    print(write(design, n, f".venv/bin/python benchmarks/bench_pse_calibrated_propensities.py {design} {n} {r0} {r1}").round(3).to_string(index=False))


if __name__ == "__main__":
    if sys.argv[1:2] == ['--summarise']: print(write(sys.argv[2], int(sys.argv[3])).round(3).to_string(index=False))
    else: main(*sys.argv[1:])
