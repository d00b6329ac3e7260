"""FairDICE exact solvers against the cvxpy primal, and the linear-scalarisation baseline.

1. Exact solver time on random MOMDPs with 100 states x 4 actions x 3 objectives (200 trajectories, optimality 0.5,
   Nash welfare, beta=0.01): the dual (damped Newton on the convex dual, numpy) against the primal (cvxpy + Clarabel),
   median of 5 runs, and their disagreement max|d_dual - d_primal|.
2. FairDICE (one solve) against linear scalarisation swept over 66 simplex weights, unregularised (optimal policy of
   the empirical MDP for w . r) and regularised (FairDICE-fixed), on 5 random 50-state MOMDPs (soft-chi2, beta=0.1):
   Nash welfare of the best sweep point (evaluated exactly in the true MDP), and solver time.

Run: .venv/bin/python benchmarks/bench_fairdice_exact.py    (about 2-4 minutes)
"""
import os
import time
from pathlib import Path

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
import numpy as np
import pandas as pd

from trustml_nb.fairdice import FairDICE, linear_scalarisation_sweep, policy_metrics
from trustml_nb.momdp import collect_dataset, random_momdp, spibb_policy
from trustml_nb.core import markdown_table

OUT = Path(__file__).parent / "results"


def timed(f, *a, **k):
    t = time.perf_counter()
    r = f(*a, **k)
    return r, time.perf_counter() - t


def solve(D, **settings):
    "The exact solver's report (any NumericalWarning is shown, not hidden)."
    return FairDICE(**settings).fit(D).report_


def exact_timing():
    rows = []
    for seed in range(3):
        rm = random_momdp(n_states=100, n_actions=4, n_objectives=3, seed=seed)
        D = collect_dataset(rm, spibb_policy(rm, 0.5, seed=seed), 200, 50, seed=seed)
        for div in ("chi2", "softchi"):
            td, tp = [], []
            for _ in range(5):
                du, t1 = timed(solve, D, welfare="nsw", divergence=div, beta=0.01, gamma=rm.gamma); td.append(t1)
                pr, t2 = timed(solve, D, welfare="nsw", divergence=div, beta=0.01, gamma=rm.gamma, solver="primal"); tp.append(t2)
            rows.append({"seed": seed, "divergence": div, "dual_newton_s": np.median(td), "primal_cvxpy_s": np.median(tp),
                         "ratio_primal_over_dual": np.median(tp) / np.median(td),
                         "max_abs_d_dual_minus_primal": np.abs(du.occupancy - pr.occupancy).max(),
                         "objective_gap": abs(du.objective - pr.objective)})
    return pd.DataFrame(rows)


def linear_vs_fairdice():
    rows = []
    for seed in range(5):
        rm = random_momdp(seed=seed)
        D = collect_dataset(rm, spibb_policy(rm, 0.5, seed=seed), 100, 50, seed=seed)
        fd, t_fd = timed(solve, D, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
        lin, t_lin = timed(linear_scalarisation_sweep, D, rm, divergence="softchi", beta=0.1, mu_scale=fd.objective_weights.sum())
        best = lin.groupby("kind").nash_welfare.max()
        rows.append({"seed": seed, "nsw_fairdice": policy_metrics(rm, fd.policy).nash_welfare.iloc[0],
                     "nsw_best_linear_regularised": best["linear, regularised"],
                     "nsw_best_linear_unregularised": best["linear, unregularised"], "fairdice_s": t_fd, "sweep_s (66 weights)": t_lin,
                     "time_ratio_sweep_over_fairdice": t_lin / t_fd})
    return pd.DataFrame(rows)


def main():
    pd.set_option("display.width", 200)
    a = exact_timing(); print(a.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    b = linear_vs_fairdice(); print(b.round(4).to_string(index=False))
    OUT.mkdir(exist_ok=True)
    a.to_csv(OUT / "fairdice_exact_timing.csv", index=False); b.to_csv(OUT / "fairdice_linear_sweep.csv", index=False)
    with open(OUT / "fairdice_exact.md", "w") as f:
        f.write("# FairDICE exact solvers and linear scalarisation\n\n" + __doc__.split("\n\n")[1] + "\n\n## 1. Exact solver time, 100 x 4 x 3\n\n")
        f.write(a.pipe(markdown_table) + "\n\n## 2. FairDICE vs linear scalarisation sweep\n\n" + b.pipe(markdown_table))
        f.write("\n\nThe machine is a shared 2-core box: timings are noisy.\n")


if __name__ == "__main__":
    main()
