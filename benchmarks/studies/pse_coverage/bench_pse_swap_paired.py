"""Which nuisance drives a paired shift, and do two propensity-learner remedies remove it? (issue 40, goals 1-2)

On the default coverage study's samples (`sim_nonlinear`, seed derived_rng(2026, n, rep, design index), the samples of
bench_pse_riesz.py and bench_pse_coverage_nonlinear.py) and its folds (`seed=rep`, 5 folds, nested='fold', clip 0.01), the
package's cross-fitted nuisances (`crossfit_gmf`, default learners: its DR estimates are those of `PathSpecificEffects()`)
are combined with the exact ones (`nonlinear_nuisances`, propensities clipped at 0.01) one nuisance at a time:
  EE            nothing exact (the package default)            TT      everything exact (the reference of every shift)
  e0 / e1 / e2  that propensity exact, the rest estimated      mu1 / mu2 / mu3   that regression column exact (every target)
  props / regs  all propensities / all regressions exact
  only_X        only X estimated, everything else exact (X in e0, e1, e2, mu1, mu2, mu3)
Remedy candidates (propensities only; the regressions are EE's, so each row is paired with EE and TT on the same folds):
  P:loose   learners={'propensity': HistGradientBoostingClassifier(max_iter=1000, learning_rate=0.05, max_leaf_nodes=8,
            min_samples_leaf=20, l2_regularization=0.0, early_stopping=True, validation_fraction=0.2, n_iter_no_change=30,
            random_state=seed)}   (less-shrunk boosting)
  P:stack   learners={'propensity': 'stack'}   (the package's StackClassifier preset: GLM + additive splines + boosting)
  e0:loose / e0:stack   only e0 = P(X=1 | Z) from the candidate (the functional TE depends on no other propensity)
The candidates' propensities are cross-fitted here on the package's folds (KFold(5, shuffle=True, random_state=seed), each
stage's model fitted on the training fold's H_k and X); the first replication of every run checks that this reproduces the
package's own propensities exactly for the default learner.

Shift = est - est_TT on the same sample (mean, Monte Carlo SE); |shift|/SD with SD = the SD of EE's estimates; coverage of
est +- 1.96 SE (influence-function SE) against the population truth, with a Wilson 95% interval.
Run:  nice -n 15 .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_swap_paired.py DESIGN N REP_FROM REP_TO [--max-seconds S]
      .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_swap_paired.py --summarise DESIGN N
Resumable: draws in results/pse_swap_paired_{DESIGN}_{N}_draws.csv (a rerun skips the replications there); the table is
results/pse_swap_paired_{DESIGN}_{N}.{csv,md}.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import derived_rng, markdown_table
from trustml_nb.pse import EFFECTS, crossfit_gmf, gmf_estimate, make_learners
from trustml_nb.pse_simulator import WORLDS, nonlinear_nuisances, sim_nonlinear

sys.path.insert(0, str(Path(__file__).parent))
from bench_pse_riesz import DESIGN_INDEX, wilson   # noqa: E402  (also registers the 'overlap' design)
from bench_pse_coverage_nonlinear import truth      # noqa: E402

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
CLIP, FOLDS = 0.01, 5
EFF = ['TE', 'NDE', 'NIE', 'VDE']
LOOSE = dict(max_iter=1000, learning_rate=0.05, max_leaf_nodes=8, min_samples_leaf=20, l2_regularization=0.0,
             early_stopping=True, validation_fraction=0.2, n_iter_no_change=30)


def candidates(seed):
    return {'loose': HistGradientBoostingClassifier(**LOOSE, random_state=seed),
            'stack': make_learners({'propensity': 'stack'}, binary_y=False, seed=seed)['propensity']}


def crossfit_props(x, H, est, seed):
    "Cross-fitted P(X=1 | H_k) on the package's folds."
    out = [np.zeros(len(x)) for _ in H]
    with threadpool_limits(1):
        for tr, te in KFold(FOLDS, shuffle=True, random_state=seed).split(np.zeros(len(x))):
            for k, Hk in enumerate(H): out[k][te] = clone(est).fit(Hk[tr], x[tr]).predict_proba(Hk[te])[:, 1]
    return [np.clip(p, CLIP, 1 - CLIP) for p in out]


def combos(tp, tm, ep, em, cand):
    mix_p = lambda ex: [tp[j] if j in ex else ep[j] for j in range(3)]
    mix_m = lambda ex: {a: np.column_stack([tm[a][:, j] if j in ex else em[a][:, j] for j in range(3)]) for a in em}
    out = {'EE': (ep, em), 'TT': (tp, tm), 'props': (tp, em), 'regs': (ep, tm)}
    for k in range(3):
        out[f'e{k}'] = (mix_p({k}), em)
        out[f'mu{k + 1}'] = (ep, mix_m({k}))
    for k in range(3):
        others = {0, 1, 2} - {k}
        out[f'only_e{k}'] = (mix_p(others), tm)
        out[f'only_mu{k + 1}'] = (tp, mix_m(others))
    for name, cp in cand.items():
        out[f'P:{name}'] = (cp, em)
        out[f'e0:{name}'] = ([cp[0], ep[1], ep[2]], em)
    return out


def combo_rows(design, n, rep, x, y, combos, T, tr):
    "One row per (combo, effect): the DR estimate from the combo's (propensities, regressions), its influence-function SE and the truth."
    rows = []
    for combo, (P, M) in combos.items():
        fe = {a: gmf_estimate(x, y, P, M[a], a) for a in T}
        for eff, (p, q) in EFFECTS.items():
            if eff not in EFF: continue
            phi = fe[p].influence - fe[q].influence
            rows.append(dict(design=design, n=n, rep=rep, combo=combo, effect=eff, est=fe[p].estimate - fe[q].estimate,
                             se=phi.std() / np.sqrt(n), truth=tr[eff]))
    return pd.DataFrame(rows)


def one_rep(design, n, rep, T, check=False):
    t0, c0 = time.time(), time.process_time()
    df = sim_nonlinear(n, design, seed=derived_rng(2026, n, rep, DESIGN_INDEX[design])).data
    x, y = df.x.to_numpy(), df.y.to_numpy()
    blocks = [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()]
    H = [np.column_stack(blocks[:k + 1]) for k in range(3)]
    tp, tm = nonlinear_nuisances(df, design, T)
    tp = [np.clip(p, CLIP, 1 - CLIP) for p in tp]
    cf = crossfit_gmf(x, y, blocks, T, seed=rep, clip=CLIP, n_jobs=1)
    cpu = {'default': time.process_time() - c0}
    if check:   # our fold-wise propensity fits reproduce the package's for its own learner
        mine = crossfit_props(x, H, make_learners('hgb', binary_y=False, seed=rep)['propensity'], rep)
        gap = max(float(np.abs(m - p).max()) for m, p in zip(mine, cf.propensities))
        if gap > 1e-12: raise SystemExit(f"fold-wise propensities differ from the package's by {gap:g}: the folds are not the package's")
    cand = {}
    for name, est in candidates(rep).items():
        c1 = time.process_time(); cand[name] = crossfit_props(x, H, est, rep); cpu[name] = time.process_time() - c1
    d = combo_rows(design, n, rep, x, y, combos(tp, tm, cf.propensities, cf.regressions, cand), T, truth(design))
    d['est_TT'] = d.effect.map(d[d.combo == 'TT'].set_index('effect').est)
    return d.assign(seconds=time.time() - t0, cpu_default=cpu['default'], cpu_loose=cpu['loose'], cpu_stack=cpu['stack'],
                    load=os.getloadavg()[0])


def summarise(d):
    d = d.copy()
    d['shift'] = d.est - d.est_TT
    d['covered'] = (abs(d.est - d.truth) <= 1.959964 * d.se)
    sd_ee = d[d.combo == 'EE'].groupby('effect').est.std()
    rows = []
    for (combo, eff), g in d.groupby(['combo', 'effect'], sort=False):
        m = len(g); k = int(g.covered.sum()); lo, hi = wilson(k, m)
        rows.append(dict(combo=combo, effect=eff, reps=m, shift=g['shift'].mean(), shift_mcse=g['shift'].std(ddof=1) / np.sqrt(m),
                         abs_shift_over_sd=abs(g['shift'].mean()) / sd_ee[eff], sd=g.est.std(), se_over_sd=g.se.mean() / g.est.std(),
                         coverage=k / m, wilson_low=lo, wilson_high=hi))
    order = {e: i for i, e in enumerate(EFF)}
    return pd.DataFrame(rows).sort_values(['effect', 'combo'], key=lambda c: c.map(order) if c.name == 'effect' else c.map(
        {c_: i for i, c_ in enumerate(dict.fromkeys(d.combo))}), kind='stable')


def write(design, n):
    stem = OUT / f"pse_swap_paired_{design}_{n}"
    d = pd.read_csv(f"{stem}_draws.csv")
    s = summarise(d)
    s.to_csv(f"{stem}.csv", index=False)
    per = d.groupby('rep').first()
    head = (f"# One nuisance at a time exact, and two propensity remedies, paired: design '{design}', n = {n:,}, {d.rep.nunique()} replications\n\n"
            "Same samples and folds in every row (the default coverage study's; EE is `PathSpecificEffects()`'s estimate). `shift` = mean of "
            "(estimate - estimate with every nuisance exact, TT) with its Monte Carlo SE; `abs_shift_over_sd` divides by the SD of EE's estimates. "
            "Combos: see the docstring of `bench_pse_swap_paired.py` (e0/e1/e2, mu1/mu2/mu3: that one exact; only_X: only X estimated; "
            "P:loose / P:stack: every propensity from the candidate learner; e0:loose / e0:stack: only e0). Coverage of est +- 1.96 SE with "
            f"its Wilson 95% interval. Median CPU s per replication: default cross-fit {per.cpu_default.median():.1f}, loose propensities "
            f"{per.cpu_loose.median():.1f}, stack propensities {per.cpu_stack.median():.1f}; median wall s per replication {per.seconds.median():.1f} "
            f"at a median load average of {per.load.median():.1f} (2 shared cores, one niced process). "
            f"Command: `nice -n 15 .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_swap_paired.py {design} {n} 0 50`.\n\n")
    Path(f"{stem}.md").write_text(head + markdown_table(s.round(4)) + "\n")
    print(head + s.round(4).to_string(index=False), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('design'); ap.add_argument('n', type=int)
    ap.add_argument('rep_from', type=int, nargs='?', default=0); ap.add_argument('rep_to', type=int, nargs='?', default=50)
    ap.add_argument('--max-seconds', type=float, default=np.inf)
    ap.add_argument('--summarise', action='store_true')
    a = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    if a.summarise: return write(a.design, a.n)
    draws = OUT / f"pse_swap_paired_{a.design}_{a.n}_draws.csv"
    done = set(pd.read_csv(draws).rep) if draws.exists() else set()
    T = list(WORLDS.values()); t0 = time.time(); first = True
    for rep in range(a.rep_from, a.rep_to):
        if rep in done: continue
        if time.time() - t0 > a.max_seconds: print(f"stopped before rep {rep} ({time.time() - t0:.0f} s)"); break
        d = one_rep(a.design, a.n, rep, T, check=first); first = False
        d.to_csv(draws, mode='a', header=not draws.exists(), index=False)
        print(f"rep {rep}: {d.seconds.iloc[0]:.1f} s", flush=True)
    write(a.design, a.n)


if __name__ == "__main__":
    main()
