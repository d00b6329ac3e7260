"""Study (no peer library): FedFACT on Flower: one command starts a real Deployment Engine run (a SuperLink and one SuperNode per client, each a
separate process on 127.0.0.1), checks it against the in-process run (every payload array, client state and count to
1e-9) and stops every process; it also times the Flower simulation demo of nbs/21 (2 clients, 2 FedAvg + 3 FedFACT-Post
rounds) with Ray's actor pool as before (num_cpus=0.5 per client: 4 actors on 2 CPUs) and as now (num_cpus=1: one actor per
client), and where the time goes (ray.init alone; the first round, which waits for the actors).
Run: .venv/bin/python benchmarks/bench_fedfact_deploy.py      (writes benchmarks/results/fedfact_deploy.md)
"""
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import NumericalWarning, markdown_table, quiet
from trustml_nb.fedfact import FedAvg, FedAvgProtocol, FedFactPost, FedFactPostProtocol, InProcessRunner, client_data, run_inprocess, synthetic_conflict
from trustml_nb.fedfact_flower import DeploymentRunner, FlowerRunner, run_deployment

OUT = Path(__file__).parent / "results"


def max_diff(a, b):
    d = 0.0
    for k in a.payload:
        if not k.startswith("_"): d = max(d, float(np.max(np.abs(np.asarray(a.payload[k], float) - np.asarray(b.payload[k], float)))))
    for sa, sb in zip(a.states, b.states):
        for k in sa:
            if isinstance(sa[k], dict): continue
            x, y = np.asarray(sa[k], float), np.asarray(sb[k], float)
            same_inf = np.isinf(x) & (x == y)
            d = max(d, float(np.max(np.where(same_inf, 0.0, np.abs(x - y)), initial=0.0)))
    for ea, eb in zip(a.evals, b.evals):
        for k in ea: d = max(d, float(np.max(np.abs(ea[k] - eb[k]))))
    return d


def main():
    rows = []
    fd = synthetic_conflict(n=1500, sizes=(0.6, 0.4), group_share=(0.8, 0.3), bias=(1.0, -1.0), seed=0)
    avg = FedAvgProtocol(fd.X.shape[1], 2, n_rounds=2, local_steps=5)
    post = FedFactPostProtocol(avg.model, fd.counts, "dp", 0.02, 0.02, n_rounds=3, local_steps=5)
    t0 = time.perf_counter(); a = run_inprocess([avg, post], client_data(fd), [3, 3], False, fd.shape); t_in = time.perf_counter() - t0
    t0 = time.perf_counter(); b = run_deployment([avg, post], client_data(fd), [3, 3], fd.shape, timeout=1200.0); t_dep = time.perf_counter() - t0
    rows.append(dict(run="in-process", seconds=t_in, max_abs_difference_to_in_process=0.0, load=os.getloadavg()[0]))
    rows.append(dict(run="Deployment Engine (SuperLink + 2 SuperNodes, 127.0.0.1)", seconds=t_dep, max_abs_difference_to_in_process=max_diff(a, b),
                     first_round_seconds=b.log[0]["seconds"], load=os.getloadavg()[0]))
    import ray
    try:
        t0 = time.perf_counter(); ray.init(num_cpus=2, include_dashboard=False, logging_level=40); t_init = time.perf_counter() - t0; ray.shutdown()
        rows.append(dict(run="ray.init alone (2 CPUs, no dashboard)", seconds=t_init, load=os.getloadavg()[0]))
    except Exception as e:        # Ray gives its raylet 30 s to register; on an overloaded machine it fails: say so, do not hide it
        rows.append(dict(run=f"ray.init alone: FAILED ({str(e)[:80]})", seconds=np.nan, load=os.getloadavg()[0]))
        if ray.is_initialized(): ray.shutdown()
    kw = dict(n_rounds=3, local_steps=5, seed=3, show_progress=False)
    for label, runner in (("before: FlowerRunner(num_cpus=0.5) (4 Ray actors)", FlowerRunner(num_cpus=0.5)),
                          ("now: FlowerRunner() (num_cpus=1: one actor per client)", FlowerRunner())):
        try:
            with quiet(NumericalWarning):
                t0 = time.perf_counter()
                r = FedFactPost(base_model=FedAvg(n_rounds=2, local_steps=5, seed=3), runner=runner, **kw).fit(fd)
                t = time.perf_counter() - t0
            first = r.base_model_.report_.round_log["seconds"].iloc[0]
            rows.append(dict(run=f"nbs/21 demo, Flower simulation, {label}", seconds=t, first_round_seconds=first, load=os.getloadavg()[0]))
        except RuntimeError as e:
            rows.append(dict(run=f"nbs/21 demo, Flower simulation, {label}: FAILED ({str(e)[:60]})", seconds=np.nan, load=os.getloadavg()[0]))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    (OUT / "fedfact_deploy.md").write_text("# FedFACT on Flower: Deployment Engine and simulation start-up\n\n" + __doc__.split("Run:")[0].strip()
                                         + "\n\nCommand: `.venv/bin/python benchmarks/bench_fedfact_deploy.py`. `load`: 1-minute load average of the shared "
                                         "2-core machine when the row was measured.\n\n" + markdown_table(df) + "\n")
    print(df.to_string())
    assert df.max_abs_difference_to_in_process.max(skipna=True) <= 1e-9


if __name__ == "__main__":
    main()
