"""Is the truth of a nonlinear design right, and is the target changed by propensity clipping? (issue 13: the 'threshold'
design's bias did not shrink from n = 2,000 to 5,000.)

1. The population truth three ways: the shared-noise worlds on 2 x 10^6 units (seed 12345, what the coverage study uses),
   the same on 2 x 10^6 other units (seed 999), and the exact nested regression mu_1(Z) by Gauss-Hermite quadrature on
   200,000 units (paired with their shared-noise worlds, so its Monte Carlo error is small).
2. The DR estimate with the EXACT nuisances at n = 20,000 over REPS samples, with propensities clipped at 0.01 (the
   default) and not clipped: its mean error and Monte Carlo SE, per effect.
Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_truth_check.py DESIGN REPS     e.g. threshold 10
(results: benchmarks/studies/pse_coverage/results/pse_truth_check_{DESIGN}.md, or under $PSE_BENCH_OUT)
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
EFF = list(EFFECTS)[:4]


def effects(d:dict)->dict:
    return {e: d[WORLDS_INV[p]] - d[WORLDS_INV[q]] for e, (p, q) in EFFECTS.items() if e in EFF}


WORLDS_INV = {v: k for k, v in WORLDS.items()}


def main(design='threshold', reps=10):
    reps, t0 = int(reps), time.time()
    a = population_truth('nonlinear', n=2_000_000, seed=12345, design=design)['y'].to_dict()
    b = population_truth('nonlinear', n=2_000_000, seed=999, design=design)['y'].to_dict()
    q_est, q_se = {}, {}
    parts = []
    for c in range(4):                                        # 4 x 50,000 units, paired quadrature vs worlds
        s = sim_nonlinear(50_000, design, seed=derived_rng(31, c))
        _, mus = nonlinear_nuisances(s.data, design)
        parts.append(pd.DataFrame({name: mus[t][:, 0] for name, t in WORLDS.items()}).assign(
            **{f"cf_{name}": s.counterfactuals['y'][name].to_numpy() for name in WORLDS}))
    P = pd.concat(parts, ignore_index=True)
    rows = []
    for e, (p, q) in EFFECTS.items():
        if e not in EFF: continue
        quad = P[WORLDS_INV[p]] - P[WORLDS_INV[q]]
        worlds = P[f"cf_{WORLDS_INV[p]}"] - P[f"cf_{WORLDS_INV[q]}"]
        gap = worlds - quad
        rows.append(dict(effect=e, truth_seed12345=a[e], truth_seed999=b[e], quadrature_200k=quad.mean(),
                         worlds_same_200k=worlds.mean(), paired_gap=gap.mean(), paired_gap_se=gap.std() / np.sqrt(len(gap))))
    truth_tab = pd.DataFrame(rows)
    T = list(WORLDS.values())
    est = []
    for rep in range(reps):
        s = sim_nonlinear(20_000, design, seed=derived_rng(41, rep))
        x, y = s.data.x.to_numpy(), s.data.y.to_numpy()
        props, mus = nonlinear_nuisances(s.data, design, T)
        for clip in (0.01, 0.0):
            P_ = [np.clip(p, clip, 1 - clip) for p in props]
            fe = {t: gmf_estimate(x, y, P_, mus[t], t) for t in T}
            for e, (p, q) in EFFECTS.items():
                if e in EFF: est.append(dict(rep=rep, clip=clip, effect=e, error=fe[p].estimate - fe[q].estimate - a[e],
                                              se=float((fe[p].influence - fe[q].influence).std() / np.sqrt(len(x)))))
        print(f"rep {rep + 1}/{reps}, {time.time() - t0:.0f} s", flush=True)
    E = pd.DataFrame(est)
    g = E.groupby(['clip', 'effect'], sort=False)
    dr = pd.DataFrame({'reps': g.size(), 'mean_error': g.error.mean(), 'mc_se': g.error.std() / np.sqrt(g.size()),
                       'sd': g.error.std(), 'mean_se': g.se.mean()}).reset_index()
    dr['error_over_sd'] = dr.mean_error / dr.sd
    OUT.mkdir(exist_ok=True)
    head = (f"# Truth and clipping check, design '{design}'\n\nCommand: `.venv/bin/python benchmarks/studies/pse_coverage/bench_pse_truth_check.py {design} {reps}`. "
            f"Wall time {time.time() - t0:.0f} s, load average {os.getloadavg()[0]:.1f}.\n\n"
            "## 1. Population truth, three computations\n\npaired_gap: mean of (shared-noise world effect - quadrature effect) over the same "
            "200,000 units, with its SE.\n\n")
    body = markdown_table(truth_tab.round(5)) + ("\n\n## 2. DR with the exact nuisances, n = 20,000 (error against truth_seed12345)\n\n"
                                                + markdown_table(dr.round(5)) + "\n")
    (OUT / f"pse_truth_check_{design}.md").write_text(head + body)
    print(head + body)


if __name__ == "__main__":
    main(*sys.argv[1:])
