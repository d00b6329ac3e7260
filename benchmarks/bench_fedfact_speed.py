"""Time per federated round, in-process vs Flower's local simulation engine (Ray), same protocols and data,
plus the FedFACT-Post fit time on Adult (target: at most 10 s).

Both runners log every round's wall time (server send -> all replies -> server step). Per-round cost = median over
the rounds of each stage (the first Flower round also waits for Ray's actors to start); Flower overhead = Flower total
minus in-process total for the whole pipeline (Ray start-up, actor start, data shipping, evaluation round, shutdown).
Shared, loaded 2-core machine: numbers are noisy. Run: .venv/bin/python benchmarks/bench_fedfact_speed.py
"""
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import DroppedRowsWarning, markdown_table, quiet
from trustml_nb.fedfact import FedAvg, FedAvgProtocol, FedFactPost, FedFactPostProtocol, adult_fed_data, client_data, run_inprocess
from trustml_nb.fedfact_flower import run_flower

OUT = Path(__file__).parent / "results"
ROUNDS = 5


def pipeline(fd):
    m, G, N = fd.shape
    avg = FedAvgProtocol(fd.X.shape[1], m, n_rounds=ROUNDS)
    return [avg, FedFactPostProtocol(avg.model, fd.counts, 'dp', 0.01, 0.01, n_rounds=ROUNDS)]


def per_round(log, stage):
    lg = pd.DataFrame(log); s = lg[(lg.stage == stage) & (lg['round'] > (0 if stage == 'FedAvg' else 1))]  # Post round 0 = calibration
    return float(s.seconds.median())


def main():
    rows = []
    for name, kw in [("Adult sample (3 clients, 3,000 rows)", dict(n_clients=3, max_rows=3000)),
                     ("Adult (5 clients, 45,222 rows)", dict(n_clients=5))]:
        with quiet(DroppedRowsWarning):
            fd = adult_fed_data(alpha=0.5, seed=0, **kw)
        clients = client_data(fd)
        run_inprocess(pipeline(fd), clients, 0, False, fd.shape)                             # warm-up (imports, allocators)
        t0 = time.perf_counter(); r_in = run_inprocess(pipeline(fd), clients, 0, False, fd.shape); t_in = time.perf_counter() - t0
        t0 = time.perf_counter(); r_fl = run_flower(pipeline(fd), clients, 0, fd.shape); t_fl = time.perf_counter() - t0
        same = all(np.array_equal(r_in.payload[k], r_fl.payload[k]) for k in ('w.weight', 'lam')) and all(
            np.array_equal(a['test'], b['test']) for a, b in zip(r_in.evals, r_fl.evals))
        for stage in ('FedAvg', 'FedFACT-Post'):
            a, b = per_round(r_in.log, stage), per_round(r_fl.log, stage)
            rows.append(dict(data=name, stage=stage, inprocess_s_per_round=a, flower_s_per_round=b, ratio=b / a,
                             flower_overhead_s=t_fl - t_in, inprocess_total_s=t_in, flower_total_s=t_fl,
                             identical_results=same))
            print(rows[-1], flush=True)
    with quiet(DroppedRowsWarning):
        fd = adult_fed_data(n_clients=5, alpha=0.5, seed=0)
    avg = FedAvg(seed=0, show_progress=False).fit(fd)
    runs = [FedFactPost(global_budget=0.01, local_budget=0.01, base_model=avg, seed=0, show_progress=False).fit(fd).report_ for _ in range(3)]
    fits = [r.seconds for r in runs]; cpus = [r.cpu_seconds for r in runs]
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True); df.to_csv(OUT / "fedfact_speed.csv", index=False)
    md = ["# FedFACT: seconds per round, in-process vs Flower simulation", "",
          f"Pipeline: {ROUNDS} FedAvg rounds + {ROUNDS} FedFACT-Post rounds (+ calibration round), then evaluation; per-round = median of",
          "the logged round times (Post's calibration round excluded). Flower: `run_simulation` with Ray, 0.5 CPU per client.",
          "Shared 2-core machine under load from other jobs: noisy.", "",
          markdown_table(df, digits=3)]
    md += ["", f"FedFACT-Post fit on Adult (5 clients, 40 rounds x 20 local steps, includes calibration): median {np.median(fits):.2f} s "
           f"wall over 3 runs ({', '.join(f'{f:.2f}' for f in fits)}; CPU time {', '.join(f'{c:.2f}' for c in cpus)} s); target <= 10 s."]
    (OUT / "fedfact_speed.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
