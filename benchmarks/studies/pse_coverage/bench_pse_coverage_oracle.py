"""Coverage of the influence-function intervals with the EXACT nuisances (no learner at all): is the Wald interval itself
honest on a nonlinear design at this sample size? Exact propensities (Bayes' rule) and nested regressions (Gauss-Hermite
quadrature) from `nonlinear_nuisances`, propensities clipped at 0.01 as in the package; DR and SN estimators of TE, NDE,
NIE, VDE. Also the tail of the influence values (largest |phi| / SD of phi, averaged) and the largest weight.

Cheap (no fitting), so many replications: the Monte Carlo SE of an SE/SD ratio is about 1/sqrt(2 reps).
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage_oracle.py DESIGN REPS N [N ...]      e.g. binary 400 2000 5000 20000
(results: benchmarks/studies/pse_coverage/results/pse_coverage_oracle_{DESIGN}.{csv,md}, or under $PSE_BENCH_OUT)
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from trustml_nb.core import derived_rng, markdown_table
from trustml_nb.pse import EFFECTS, gmf_estimate
from trustml_nb.pse_simulator import WORLDS, nonlinear_nuisances, population_truth, sim_nonlinear

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))
EFF = ['TE', 'NDE', 'NIE', 'VDE']


def write(rows, design, reps, ns, t0):
    d = pd.DataFrame(rows)
    d['covered'] = (abs(d.est - d.truth) <= 1.959964 * d.se).astype(float)
    g = d.groupby(['n', 'estimator', 'effect'], sort=False)
    s = pd.DataFrame({'reps': g.size(), 'bias': g.apply(lambda q: (q.est - q.truth).mean()), 'sd': g.est.std(), 'mean_se': g.se.mean(),
                      'coverage': g.covered.mean(), 'max_abs_phi_over_sd': g.phi_tail.mean(), 'max_weight': g.wmax.mean()}).reset_index()
    s['se_over_sd'], s['bias_over_sd'] = s.mean_se / s.sd, s.bias / s.sd
    s['coverage_se'] = np.sqrt(s.coverage * (1 - s.coverage) / s.reps)
    s['se_over_sd_mc_se'] = s.se_over_sd / np.sqrt(2 * (s.reps - 1))
    OUT.mkdir(exist_ok=True)
    stem = OUT / f"pse_coverage_oracle_{design}"
    s.to_csv(f"{stem}.csv", index=False)
    head = (f"# Intervals with the exact nuisances, design '{design}'\n\nCommand: `.venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage_oracle.py "
            f"{design} {reps} {' '.join(map(str, ns))}` (this table: {int(s.reps.min())} replications per cell so far). "
            f"Wall time {time.time() - t0:.0f} s, load average {os.getloadavg()[0]:.1f}. No learner: exact propensities (clipped at 0.01) "
            "and nested regressions. max_abs_phi_over_sd: the largest |influence value| of a sample over the SD of its influence values "
            "(mean over replications; a Gaussian sample of 5,000 gives about 4); max_weight: the largest Riesz weight of the two functionals.\n\n")
    cols = ['n', 'estimator', 'effect', 'reps', 'bias', 'sd', 'mean_se', 'se_over_sd', 'se_over_sd_mc_se', 'bias_over_sd', 'coverage',
            'coverage_se', 'max_abs_phi_over_sd', 'max_weight']
    Path(f"{stem}.md").write_text(head + markdown_table(s[cols].round(4)) + "\n")
    return s


def main(design='binary', reps=400, *ns):
    reps, ns = int(reps), [int(n) for n in ns] or [2_000, 5_000]
    T = list(WORLDS.values())
    tr = population_truth('nonlinear', n=2_000_000, seed=12345, design=design)['y'].to_dict()
    rows, t0 = [], time.time()
    for rep in range(reps):
        for n in ns:
            df = sim_nonlinear(n, design, seed=derived_rng(2026, n, rep, 99)).data
            x, y = df.x.to_numpy(), df.y.to_numpy()
            props, mus = nonlinear_nuisances(df, design, T)
            props = [np.clip(p, 0.01, 0.99) for p in props]
            for norm_ in (False, True):
                fe = {a: gmf_estimate(x, y, props, mus[a], a, normalize=norm_) for a in T}
                for eff, (p, q) in EFFECTS.items():
                    if eff not in EFF: continue
                    phi = fe[p].influence - fe[q].influence
                    rows.append(dict(n=n, rep=rep, estimator='SN' if norm_ else 'DR', effect=eff, est=fe[p].estimate - fe[q].estimate,
                                     se=phi.std() / np.sqrt(n), truth=tr[eff], phi_tail=np.abs(phi).max() / phi.std(),
                                     wmax=max(fe[p].weights.max(), fe[q].weights.max())))
        if rep % 25 == 24:
            s = write(rows, design, reps, ns, t0)
            print(f"{rep + 1} reps, {time.time() - t0:.0f} s", flush=True)
    s = write(rows, design, reps, ns, t0)
    print(s.round(4).to_string(index=False))


if __name__ == "__main__":
    main(*sys.argv[1:])
