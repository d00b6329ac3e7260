"""Which nuisance breaks the intervals? Per-functional bias / SD / mean SE / coverage of psi(a_W, a_V, a_Y) and of the
effects, on one nonlinear design (sim_nonlinear), with four nuisance combinations on the same samples:

  TT  exact propensities and exact nested regressions (validates the influence function and the variance formula)
  ET  estimated (cross-fitted, default learners) propensities, exact regressions
  TE  exact propensities, estimated regressions (outcome + nested pseudo-outcome regressions)
  EE  both estimated (what the package does)

Exact nuisances: `nonlinear_nuisances` (Bayes' rule on the known densities, Gauss-Hermite quadrature).
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage_diagnosis.py DESIGN N REPS [nested [clip]]   e.g. interact 2000 60 split
(results: benchmarks/studies/pse_coverage/results/pse_coverage_diagnosis_{DESIGN}_{N}_{nested}.{csv,md}, or under $PSE_BENCH_OUT)
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import markdown_table
from trustml_nb.pse import EFFECTS, crossfit_gmf, gmf_estimate
from trustml_nb.pse_simulator import WORLDS, nonlinear_nuisances, population_truth, sim_nonlinear

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))


def main(design='interact', n=2_000, reps=60, nested='fold', clip=0.01):
    n, reps, clip = int(n), int(reps), float(clip)
    T = list(WORLDS.values()); names = {v: k for k, v in WORLDS.items()}
    tr = population_truth('nonlinear', n=2_000_000, design=design)['y'].to_dict()
    rows, t0 = [], time.time()
    for rep in range(reps):
        df = sim_nonlinear(n, design, seed=1000 + rep).data
        x, y = df.x.to_numpy(), df.y.to_numpy()
        tp, tm = nonlinear_nuisances(df, design, T)
        tp = [np.clip(p, clip, 1 - clip) for p in tp]
        cf = crossfit_gmf(x, y, [df[['z1', 'z2']].to_numpy(), df[['w1', 'w2']].to_numpy(), df[['v']].to_numpy()], T, seed=rep, nested=nested, clip=clip)
        for combo, P, M in (('TT', tp, tm), ('ET', cf.propensities, tm), ('TE', tp, cf.regressions), ('EE', cf.propensities, cf.regressions)):
            fe = {a: gmf_estimate(x, y, P, M[a], a) for a in T}
            for a, f in fe.items(): rows.append(dict(rep=rep, combo=combo, what=names[a], est=f.estimate, se=f.se, truth=tr[names[a]]))
            for eff, (p, q) in list(EFFECTS.items())[:4]:
                phi = fe[p].influence - fe[q].influence
                rows.append(dict(rep=rep, combo=combo, what=eff, est=fe[p].estimate - fe[q].estimate, se=phi.std() / np.sqrt(n), truth=tr[eff]))
        if rep % 10 == 9: print(f"{rep + 1} reps, {time.time() - t0:.0f} s", flush=True)
    d = pd.DataFrame(rows)
    d['covered'] = (abs(d.est - d.truth) <= 1.959964 * d.se).astype(float)
    g = d.groupby(['combo', 'what'], sort=False)
    s = pd.DataFrame({'reps': g.size(), 'bias': g.apply(lambda q: (q.est - q.truth).mean()), 'sd': g.est.std(), 'mean_se': g.se.mean(),
                      'coverage': g.covered.mean()}).reset_index()
    s['bias_over_sd'], s['se_over_sd'] = s.bias / s.sd, s.mean_se / s.sd
    s['coverage_se'] = np.sqrt(s.coverage * (1 - s.coverage) / s.reps)
    OUT.mkdir(exist_ok=True)
    stem = OUT / (f"pse_coverage_diagnosis_{design}_{n}_{nested}" + (f"_clip{clip:g}" if clip != 0.01 else ""))
    s.to_csv(f"{stem}.csv", index=False)
    head = (f"# Coverage diagnosis: design '{design}', n = {n:,}, {reps} replications, nested='{nested}'\n\n"
            "TT exact nuisances; ET estimated propensities; TE estimated regressions; EE both estimated (default learners, 5 folds, "
            f"clip {clip:g}). Wall time {time.time() - t0:.0f} s, load average at the end {os.getloadavg()[0]:.1f}.\n\n")
    Path(f"{stem}.md").write_text(head + markdown_table(s.round(4)) + "\n")
    print(head + s.round(4).to_string(index=False))


if __name__ == "__main__":
    main(*sys.argv[1:])
