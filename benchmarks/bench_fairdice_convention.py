"""Study (no peer library): FairDICE on the standard support convention: occupancy, primal = dual, and neural mu against the exact mu.

Benchmark MOMDPs: three random deterministic MOMDPs (15 states, 3 actions, 3 objectives, gamma=0.9; 300 trajectories of
at most 40 steps from a behaviour policy of optimality 0.5: seeds 2, 5, 7), one with reachable states the data never
leave (30 states, 100 trajectories cut at 6 steps, seed 2), and the unmapped room (`momdp.unmapped_room`, whose log
stops when the agent enters state 2). Part 1: exact FairDICE (Nash welfare, soft-chi2) under both conventions for
states without data, at three betas: the occupancy on the states the data cover (`total_occupancy`), the occupancy
that ends in states without data, the sum of the whole occupancy, and the dual (Newton) against the cvxpy primal.
Part 2: neural FairDICE (beta=0.05, full batch, one torch thread) against the exact solution of the same problem:
the largest relative error of mu over the objectives, and the Nash-welfare gap (NSW_exact - NSW_neural) / |NSW_exact|
of the policies evaluated exactly in the true MDP. Every MOMDP gets the default (MLP nu, started at the behaviour policy's exact values); seed 2 also gets the tabular
nu, and rows with `value_init=zero` start nu at 0 (the official code's start) with the current parametrisation (a
tabular nu counted in units of 1/(1-gamma) with a shared level). The earlier code's figures are in
`fairdice_dataset.md` (MLP nu from 0: mu 2-17% off) and in issue 20 (tabular nu, 1,500 steps: NSW gap -0.139).

Run: nice -n 10 .venv/bin/python benchmarks/bench_fairdice_convention.py     (about 10-15 minutes on a loaded 2-core machine)
"""
import os
import time
from pathlib import Path

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
import numpy as np
import pandas as pd

from trustml_nb.core import NumericalWarning, markdown_table, quiet
from trustml_nb.fairdice import FairDICE, NeuralFairDICE, policy_metrics
from trustml_nb.momdp import dangling_states, collect_dataset, random_momdp, spibb_policy, unmapped_room

OUT = Path(__file__).parent / "results"


def momdps():
    "(name, true MDP, dataset) of each benchmark MOMDP."
    out = []
    for seed in (2, 5, 7):
        m = random_momdp(n_states=15, n_actions=3, n_objectives=3, gamma=0.9, deterministic=True, seed=seed)
        out.append((f"det15 seed {seed}", m, collect_dataset(m, spibb_policy(m, 0.5, seed=seed), 300, 40, seed=seed)))
    m = random_momdp(n_states=30, n_actions=3, n_objectives=3, gamma=0.9, deterministic=True, seed=2)
    out.append(("det30 seed 2, cut at 6 steps", m, collect_dataset(m, spibb_policy(m, 0.5, seed=2), 100, 6, seed=2)))
    out.append(("unmapped room", *unmapped_room()))
    return out


def exact_rows(name, m, D):
    rows = []
    for beta in (0.05, 1.0, 100.0):
        for conv in ("no_flow", "absorbing"):
            with quiet(NumericalWarning):
                du = FairDICE(beta=beta, gamma=m.gamma, states_without_data=conv).fit(D).report_
                pr = FairDICE(beta=beta, gamma=m.gamma, states_without_data=conv, solver="primal").fit(D).report_
            rows.append({"momdp": name, "states_without_data_in_data": len(dangling_states(D)), "beta": beta,
                         "convention": conv, "total_occupancy": du.total_occupancy,
                         "occupancy_without_data": du.occupancy_without_data, "occupancy_sum": du.occupancy.sum(),
                         "abs_dual_minus_primal": abs(du.objective - pr.objective),
                         "max_abs_d_dual_minus_primal": np.abs(du.occupancy - pr.occupancy).max(),
                         "nsw_true": float(policy_metrics(m, du.policy).nash_welfare.iloc[0])})
    return rows


def neural_row(name, m, D, ex, value_model, value_init, steps):
    t = time.perf_counter()
    nn_ = NeuralFairDICE(beta=0.05, gamma=m.gamma, steps=steps, seed=0, value_model=value_model, value_init=value_init).fit(D)
    secs = time.perf_counter() - t
    err = np.abs(nn_.objective_weights_ / ex.objective_weights_ - 1)
    w = policy_metrics(m, {"exact": ex.policy_, "neural": nn_.policy_}).nash_welfare.to_numpy()
    return {"momdp": name, "value_model": value_model, "value_init": value_init, "steps": steps,
            "mu_max_rel_err_%": 100 * err.max(), "mu_rel_err_per_objective_%": np.round(100 * err, 2).tolist(),
            "nsw_exact": w[0], "nsw_neural": w[1], "nsw_gap_%": 100 * (w[0] - w[1]) / abs(w[0]), "neural_s": secs}


def write(a, b):
    "Write both tables (called after every neural run, so a long run leaves its results so far)."
    OUT.mkdir(exist_ok=True)
    a.to_csv(OUT / "fairdice_convention.csv", index=False); b.to_csv(OUT / "fairdice_neural_mu.csv", index=False)
    with open(OUT / "fairdice_convention.md", "w") as f:
        f.write("# FairDICE: the standard support convention and neural mu\n\n" + __doc__.split("\n\n")[1] + "\n\n")
        f.write("## 1. Occupancy and primal = dual, both conventions\n\n" + markdown_table(a) + "\n\n")
        f.write("## 2. Neural mu and Nash welfare against exact (beta=0.05)\n\n" + markdown_table(b) + "\n\n")
        f.write("The machine is a shared 2-core box: timings are noisy.\n")


def main():
    pd.set_option("display.width", 250)
    cases = momdps()
    a = pd.DataFrame([row for name, m, D in cases for row in exact_rows(name, m, D)])
    print(a.to_string(index=False), flush=True)
    nn_rows, exact_fits = [], {}
    for name, m, D in cases:
        with quiet(NumericalWarning): exact_fits[name] = FairDICE(beta=0.05, gamma=m.gamma).fit(D)
    runs = [(c, "mlp", "behaviour", 3000) for c in cases]            # the default on every MOMDP first, then the rest
    seed2 = cases[0]
    runs += [(seed2, "tabular", "behaviour", 3000), (seed2, "tabular", "zero", 1500), (seed2, "mlp", "zero", 3000)]
    for (name, m, D), vm, vi, steps in runs:
        nn_rows.append(neural_row(name, m, D, exact_fits[name], vm, vi, steps)); print(nn_rows[-1], flush=True)
        write(a, pd.DataFrame(nn_rows))


if __name__ == "__main__":
    main()
