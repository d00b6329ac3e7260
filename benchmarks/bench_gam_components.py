"""Study (no peer library): Speed of the GAM component primitives on huge grids (issue 15 moved these targets out of nbs/30's assertion cells).

The primitives must not look at the grid's points: a step function's extremes and mean on the 2^40-point grid, and a
two-piece cubic spline's mean on a 2^30-point grid, each within 0.05 s (the target nbs/30 used to assert in-line).
Each value is also checked against its closed form, so a fast wrong answer does not pass.
Run: .venv/bin/python benchmarks/bench_gam_components.py   (writes benchmarks/results/gam_components.md and .csv)
"""
import csv
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_time
from trustml_nb.gam_models import GridDomain, IntervalDomain, SplineComponent, StepComponent

OUT = Path(__file__).resolve().parent / 'results'
TARGET = 0.05

if __name__ == '__main__':
    load0 = os.getloadavg()[0]
    st = StepComponent([1, 3], [0.5, -2.0, 4.0]); big = GridDomain(0, 2**40 - 1, 1)
    sp = SplineComponent([0, 1, 2], [[0, 1, 0, -2], [-1, -5, 1, 1]])
    cases = [('step extremes + mean, grid of 2^40 points', lambda: (st.extremes(big), st.mean(big)),
              lambda r: r[0] == (-2.0, 4.0) and np.isclose(r[1], (0.5 + 2 * -2 + (2**40 - 3) * 4) / 2**40, rtol=1e-12)),
             ('spline mean, grid of 2^30 points', lambda: sp.mean(GridDomain(0, 2, 2 / (2**30 - 1))),
              lambda r: np.isclose(r, sp.mean(IntervalDomain(0, 2)), atol=1e-6))]
    rows = []
    for name, f, ok in cases:
        sec, out = median_time(f, 21)
        rows.append(dict(case=name, median_seconds=sec, target_seconds=TARGET, meets_target=sec <= TARGET, value_exact=bool(ok(out)),
                         load_average=round(os.getloadavg()[0], 2)))
    with open(OUT / 'gam_components.csv', 'w', newline='') as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
    lines = ['# GAM component primitives on huge grids (`benchmarks/bench_gam_components.py`)', '',
             f'Median of 21 calls; target {TARGET} s each; load average (1 min) {load0:.2f} at start on {os.cpu_count()} cores.', '',
             '| case | median s | meets target | value equals its closed form | load |', '|---|---|---|---|---|']
    lines += [f"| {r['case']} | {r['median_seconds']:.2e} | {r['meets_target']} | {r['value_exact']} | {r['load_average']} |" for r in rows]
    (OUT / 'gam_components.md').write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    assert all(r['value_exact'] for r in rows)
