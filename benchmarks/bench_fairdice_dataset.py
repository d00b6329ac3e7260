"""Study (no peer library): FairDICE: neural (PyTorch) vs exact tabular optimum as the dataset grows, and the 3-MOMDP target.

Neural FairDICE (Nash welfare, soft-chi2, beta=0.05) on random *deterministic* MOMDPs (15 states, 3 actions,
3 objectives, gamma=0.9), data from a behaviour policy of optimality 0.5. Each policy is evaluated exactly in the
true MDP; the gap is (NSW_exact - NSW_neural) / |NSW_exact| where "exact" is the exact FairDICE solution (same data,
same beta, L-BFGS/Newton dual). Training uses one torch thread. Also reports behaviour cloning.

Run: .venv/bin/python benchmarks/bench_fairdice_dataset.py     (about 5 minutes on a quiet 2-core machine)
"""
import os
import time
from pathlib import Path

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
import numpy as np
import pandas as pd

from trustml_nb.fairdice import FairDICE, NeuralFairDICE, behaviour_cloning, policy_metrics
from trustml_nb.momdp import collect_dataset, random_momdp, spibb_policy
from trustml_nb.core import markdown_table

OUT = Path(__file__).parent / "results"


def run(seed, n_traj):
    det = random_momdp(n_states=15, n_actions=3, n_objectives=3, gamma=0.9, deterministic=True, seed=seed)
    D = collect_dataset(det, spibb_policy(det, 0.5, seed=seed), n_traj, 40, seed=seed)
    t = time.perf_counter()
    ex = FairDICE(welfare="nsw", divergence="softchi", beta=0.05, gamma=det.gamma).fit(D)
    t_ex = time.perf_counter() - t
    t = time.perf_counter()
    nn_ = NeuralFairDICE(welfare="nsw", divergence="softchi", beta=0.05, gamma=det.gamma, steps=3000, seed=0).fit(D)
    t_nn = time.perf_counter() - t
    m = policy_metrics(det, {"exact": ex.policy_, "neural": nn_.policy_, "bc": behaviour_cloning(D)}).set_index("policy")
    w_ex, w_nn, w_bc = m.nash_welfare[["exact", "neural", "bc"]]
    return {"seed": seed, "trajectories": n_traj, "transitions": len(D), "nsw_exact": w_ex, "nsw_neural": w_nn, "nsw_bc": w_bc,
            "gap_neural_%": 100 * (w_ex - w_nn) / abs(w_ex), "gap_bc_%": 100 * (w_ex - w_bc) / abs(w_ex),
            "mu_rel_err": float(np.abs(nn_.objective_weights_ / ex.objective_weights_ - 1).max()), "exact_s": t_ex, "neural_s": t_nn,
            "time_ratio_neural_over_exact": t_nn / t_ex}


def main():
    rows = [run(seed, 300) for seed in (2, 5, 7)]                       # the target: 3 MOMDPs
    rows += [run(2, n) for n in (50, 150, 600)]                        # dataset growth on MOMDP 2
    df = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print(df.round(4).to_string(index=False))
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / "fairdice_dataset.csv", index=False)
    with open(OUT / "fairdice_dataset.md", "w") as f:
        f.write("# FairDICE: neural vs exact as the dataset grows\n\n" + __doc__.split("\n\n")[1] + "\n\n")
        f.write(df.pipe(markdown_table) + "\n\nThe machine is a shared 2-core box: timings are noisy.\n")


if __name__ == "__main__":
    main()
