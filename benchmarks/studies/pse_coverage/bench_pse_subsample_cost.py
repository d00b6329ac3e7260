"""What variance='subsample' costs: CPU seconds of one default fit and of one half-sample refit (default learners, DR only,
star=False, one worker), on the `binary` design of sim_nonlinear at several sizes. CPU time (time.process_time), so a shared
machine's load matters less than for wall time. The half-sample cost is (subsample fit - default fit) / n_subsamples.

Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_subsample_cost.py [n ...]      (default 2000 5000 20000)
Writes benchmarks/studies/pse_coverage/results/pse_subsample_cost.{csv,md}.
"""
import os
import sys
import time
from pathlib import Path

import pandas as pd

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import markdown_table
from trustml_nb.pse import PathSpecificEffects
from trustml_nb.pse_simulator import sim_nonlinear

OUT = Path(__file__).parent / "results"
N_SUB = 5


def cost(n):
    sim = sim_nonlinear(n, 'binary', seed=1)
    R = sim.roles
    kw = dict(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='y', estimators=('DR',), star=False, warn=False, seed=0, n_jobs=1)
    t = time.process_time(); PathSpecificEffects(**kw).fit(sim.data); full = time.process_time() - t
    t = time.process_time(); PathSpecificEffects(**kw, variance='subsample', n_subsamples=N_SUB).fit(sim.data); both = time.process_time() - t
    half = (both - full) / N_SUB
    return dict(n=n, full_fit_cpu_s=full, half_sample_cpu_s=half, half_over_full=half / full,
                default_20_subsamples_in_fits=1 + 20 * half / full)


def main(ns):
    t = pd.DataFrame([cost(n) for n in ns])
    t.to_csv(OUT / "pse_subsample_cost.csv", index=False)
    head = ("# Cost of variance='subsample'\n\nCPU seconds of one default fit and of one half-sample refit (binary design, DR only, star=False, "
            f"one worker; the half-sample cost from a fit with {N_SUB} half-samples). `default_20_subsamples_in_fits`: what variance='subsample' "
            f"with its default 20 half-samples costs, in default fits. Command: `.venv/bin/python benchmarks/studies/pse_coverage/bench_pse_subsample_cost.py {' '.join(map(str, ns))}`; "
            f"load average at the end {os.getloadavg()[0]:.1f} (2 shared cores).\n\n")
    (OUT / "pse_subsample_cost.md").write_text(head + markdown_table(t.round(3)) + "\n")
    print(head + t.round(3).to_string(index=False))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [2000, 5000, 20000])
