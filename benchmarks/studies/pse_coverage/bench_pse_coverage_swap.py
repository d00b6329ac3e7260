"""Which estimated nuisance makes the intervals too narrow? One nuisance at a time is replaced by its exact value
(`nonlinear_nuisances`: Bayes' rule and Gauss-Hermite quadrature) on the same cross-fitted samples, and the DR estimate,
its influence-function SE and the coverage of each effect are recorded.

Swaps (everything else estimated by the package defaults, 5 folds, nested='fold'):
  EE       nothing swapped (the package)
  e0 / e1 / e2   the propensity P(X=1|Z) / P(X=1|Z,W) / P(X=1|Z,W,V) exact (e1 and e2 are the mediator density ratios' classifiers)
  mu3      the outcome regression mu_3 = E[Y | X=a_Y, Z, W, V] exact (every target)
  mu2      the nested regression mu_2 = E[mu_3 | X=a_V, Z, W] exact
  mu1      the nested regression mu_1 = E[mu_2 | X=a_W, Z] exact
  props    all three propensities exact;   regs   all three regressions exact;   TT   everything exact
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage_swap.py DESIGN N REPS      e.g. binary 2000 100
(results: benchmarks/studies/pse_coverage/results/pse_coverage_swap_{DESIGN}_{N}.{csv,md}, or under $PSE_BENCH_OUT)
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import derived_rng, markdown_table
from trustml_nb.pse import EFFECTS, crossfit_gmf, gmf_estimate
from trustml_nb.pse_simulator import WORLDS, nonlinear_nuisances, population_truth, sim_nonlinear

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
CLIP = 0.01


def swaps(tp, tm, ep, em):
    "combo -> (propensities, regressions by target)"
    out = {'EE': (ep, em), 'TT': (tp, tm), 'props': (tp, em), 'regs': (ep, tm)}
    for k in range(3):
        out[f'e{k}'] = ([tp[j] if j == k else ep[j] for j in range(3)], em)
        out[f'mu{k + 1}'] = (ep, {a: np.column_stack([tm[a][:, j] if j == k else em[a][:, j] for j in range(3)]) for a in em})
    return out


def main(design='binary', n=2_000, reps=100):
    n, reps = int(n), int(reps)
    T = list(WORLDS.values()); names = {v: k for k, v in WORLDS.items()}
    tr = population_truth('nonlinear', n=2_000_000, seed=12345, design=design)['y'].to_dict()
    rows, t0 = [], time.time()
    for rep in range(reps):
        df = sim_nonlinear(n, design, seed=derived_rng(7, n, rep)).data
        x, y = df.x.to_numpy(), df.y.to_numpy()
        tp, tm = nonlinear_nuisances(df, design, T)
        tp = [np.clip(p, CLIP, 1 - CLIP) for p in tp]
        cf = crossfit_gmf(x, y, [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()], T, seed=rep, clip=CLIP)
        for combo, (P, M) in swaps(tp, tm, cf.propensities, cf.regressions).items():
            fe = {a: gmf_estimate(x, y, P, M[a], a) for a in T}
            for eff, (p, q) in list(EFFECTS.items())[:4]:
                phi = fe[p].influence - fe[q].influence
                rows.append(dict(rep=rep, combo=combo, effect=eff, est=fe[p].estimate - fe[q].estimate, se=phi.std() / np.sqrt(n), truth=tr[eff]))
        if rep % 10 == 9:
            print(f"{rep + 1} reps, {time.time() - t0:.0f} s", flush=True)
            write(rows, design, n, rep + 1, t0)          # partial tables as it goes (a stopped run keeps what it measured)
    write(rows, design, n, reps, t0)


def write(rows, design, n, reps, t0):
    d = pd.DataFrame(rows)
    d['covered'] = (abs(d.est - d.truth) <= 1.959964 * d.se).astype(float)
    g = d.groupby(['combo', 'effect'], sort=False)
    s = pd.DataFrame({'reps': g.size(), 'bias': g.apply(lambda q: (q.est - q.truth).mean()), 'sd': g.est.std(), 'mean_se': g.se.mean(),
                      'coverage': g.covered.mean()}).reset_index()
    s['bias_over_sd'], s['se_over_sd'] = s.bias / s.sd, s.mean_se / s.sd
    s['coverage_se'] = np.sqrt(s.coverage * (1 - s.coverage) / s.reps)
    OUT.mkdir(exist_ok=True)
    stem = OUT / f"pse_coverage_swap_{design}_{n}"
    s.to_csv(f"{stem}.csv", index=False)
    head = (f"# One nuisance at a time exact: design '{design}', n = {n:,}, {reps} replications\n\n"
            "EE: all estimated (package defaults, 5 folds, nested='fold', clip 0.01); e0/e1/e2: that propensity exact; mu1/mu2/mu3: that "
            "regression column exact (in every target); props: all propensities exact; regs: all regressions exact; TT: all exact. "
            f"Command: `.venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage_swap.py {design} {n} {reps}`. Wall time {time.time() - t0:.0f} s, "
            f"load average at the end {os.getloadavg()[0]:.1f}.\n\n")
    Path(f"{stem}.md").write_text(head + markdown_table(s.round(4)) + "\n")
    print(head + s.round(4).to_string(index=False), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
