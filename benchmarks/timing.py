"Timing helper shared by the benchmark scripts (run as `python benchmarks/bench_*.py`, so this folder is on sys.path)."
import time

import numpy as np


def median_time(f, repeat):
    "Median wall time of `repeat` calls of f(), and the last call's result."
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), out
