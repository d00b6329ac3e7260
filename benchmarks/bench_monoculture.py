"""Rejection at random (issue #22): the Poisson-binomial recursion (ours, O(M^2)) against the authors' route, enumerating
every 0/1 pattern of the M models (2^M terms; `monoculture.poisson_binomial_enumerate`), on the same probabilities.

Part 1 (agreement and speed, M = 2..18): both on the same random rejection rates (seed 0); largest absolute difference
of the two distributions, median time of each, ratio enumeration / recursion. Enumeration stops at M = 18 (262,144
patterns, seconds per call); it doubles with every model.
Part 2 (recursion alone, M = 50 and 500): median time; enumeration_extrapolated_s = the M = 18 enumeration time x 2^(M-18) x M/18
(not run: an estimate of the authors' route); the distribution's sum is checked to be 1 within 1e-12, and for
equal probabilities the recursion is compared with scipy's binomial pmf (a peer that shares no code).
Run: .venv/bin/python benchmarks/bench_monoculture.py   (writes benchmarks/results/monoculture_speed.{md,csv})
The machine is a shared, noisy 2-core box; timings are indicative only.
"""
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binom

from timing import median_time
from trustml_nb.core import markdown_table
from trustml_nb.monoculture import poisson_binomial_enumerate, poisson_binomial_pmf

OUT = Path(__file__).parent / 'results'


def main():
    rng = np.random.default_rng(0)
    rows = []
    for M in (2, 4, 6, 8, 10, 12, 14, 16, 18):
        p = rng.uniform(size=M)
        t_rec, pmf = median_time(lambda: poisson_binomial_pmf(p), 21)
        t_enum, ref = median_time(lambda: poisson_binomial_enumerate(p), 3 if M <= 14 else 1)
        rows.append(dict(models=M, max_abs_difference=float(np.abs(pmf - ref).max()), recursion_s=t_rec, enumeration_s=t_enum,
                         ratio=t_enum / t_rec, enumeration_extrapolated_s=np.nan))
        print(rows[-1], flush=True)
    for M in (50, 500):
        p = rng.uniform(size=M)
        t_rec, pmf = median_time(lambda: poisson_binomial_pmf(p), 21)
        assert abs(pmf.sum() - 1) < 1e-12
        eq = float(np.abs(poisson_binomial_pmf(np.full(M, 0.3)) - binom.pmf(np.arange(M + 1), M, 0.3)).max())
        last = next(r for r in rows if r['models'] == 18)   # the measured M = 18 enumeration
        extrapolated = last['enumeration_s'] * 2.0 ** (M - 18) * M / 18   # 2^M patterns of M factors each
        rows.append(dict(models=M, max_abs_difference=eq, recursion_s=t_rec, enumeration_s=np.nan, ratio=np.nan,
                         enumeration_extrapolated_s=extrapolated))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / 'monoculture_speed.csv', index=False)
    (OUT / 'monoculture_speed.md').write_text(
        "# Rejection at random: Poisson-binomial recursion vs enumeration\n\n"
        "max_abs_difference: recursion vs enumeration for M <= 18; for M = 50 and 500, recursion with equal probabilities 0.3 "
        "vs scipy.stats.binom.pmf. Times are medians in seconds on the shared 2-core machine; ratio = enumeration / recursion.\n\n"
        + markdown_table(df) + "\n")
    print(markdown_table(df))


if __name__ == '__main__':
    main()
