"""Study (no peer library): Quick wall-clock re-measurements of two speed targets, for a quiet machine (the full benchmarks ran under load).

- MIFPO (issue 17): the full 31-point error front on Adult (half the rows fit the cross-fitted scores and the front, 10
  bins per group, sex) by the exact LP (target <= 5 s) and by DCCP (k = 2, 2 starts; target <= 60 s), through
  `bench_mifpo.dataset`, the same code and data as `bench_mifpo.py`.
- Multicalibration (issue 20): `Multicalibrator` with the package defaults (`bench_multicalibration.MODELS['ours']`) fitted
  on Adult's calibration split for seeds 0-4 (target <= 10 s per fit).
- FedFACT (issue 14): `FedFactPost` (defaults, budgets 0.01/0.01, final LP round included) on Adult's 5-client federation
  of `bench_fedfact_speed.py`, re-using one FedAvg fit; 3 fits (target <= 10 s per fit).
Run: .venv/bin/python benchmarks/bench_quick_timings.py   (writes benchmarks/results/quick_timings.md)
"""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mifpo
import bench_multicalibration
from trustml_nb.core import DroppedRowsWarning, quiet
from trustml_nb.data import adult_task
from trustml_nb.multicalibration import Multicalibrator
from trustml_nb.fedfact import FedAvg, FedFactPost, adult_fed_data

OUT = Path(__file__).resolve().parent / 'results'

if __name__ == '__main__':
    lines = ['# Quick timings on a quiet machine', '', f"load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", '']
    with quiet(DroppedRowsWarning): task = adult_task(splits={'fit': 0.5, 'test': None}, sensitive=('sex',), seed=0)
    f, t = task['fit'], task['test']
    r = bench_mifpo.dataset('adult', f.X, f.y, f.A['sex'], t.X, t.y, t.A['sex'], 10)
    lines.append(f"MIFPO Adult, 31-point front: LP {r['lp_seconds']:.2f} s; DCCP {r['dccp_seconds']:.1f} s wall, {r['dccp_cpu_seconds']:.1f} s CPU; "
                 f"DCCP above the LP at {r['n_above']}/31 points (worst {r['worst_gap']:.1e}); peers on or above the front: {r['peers_on_or_above']}")
    for seed in range(5):
        cal, _ = bench_multicalibration.adult(seed)
        t0, c0 = time.perf_counter(), time.process_time()
        Multicalibrator(**bench_multicalibration.MODELS['ours']).fit(cal.score, cal.y, groups=cal.groups)
        lines.append(f"Multicalibrator (defaults), Adult seed {seed}: fit {time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU")
    with quiet(DroppedRowsWarning): fd = adult_fed_data(n_clients=5, alpha=0.5, seed=0)
    avg = FedAvg(seed=0, show_progress=False).fit(fd)
    for run in range(3):
        rep = FedFactPost(global_budget=0.01, local_budget=0.01, base_model=avg, seed=0, show_progress=False).fit(fd).report_
        lines.append(f"FedFACT-Post (defaults), Adult 5 clients, run {run}: fit {rep.seconds:.2f} s wall, {rep.cpu_seconds:.2f} s CPU")
    OUT.mkdir(exist_ok=True); (OUT / 'quick_timings.md').write_text('\n'.join(lines) + '\n'); print('\n'.join(lines))
