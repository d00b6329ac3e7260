"""Study (no peer library): Minimum sufficient / contrastive reasons for GAMs: greedy (A2/A3) vs brute force, and at 1,000+ features.

Target (issue #5): MSR and MCR for a 1,000-feature GAM over enumerable domains in at most 50 ms per instance.
Run: .venv/bin/python benchmarks/bench_gam_reasons.py   (writes benchmarks/results/gam_reasons.{md,csv})
Timings are medians over repeats on a shared, noisy 2-core machine.
"""
import time
from pathlib import Path

import numpy as np
import pandas as pd

from trustml_nb.gam_models import random_gam, random_instance
from trustml_nb.gam_explain import msr, mcr, msr_bf, mcr_bf, csr_bf
from trustml_nb.core import markdown_table
from timing import median_time

OUT = Path(__file__).parent / 'results'




def main():
    rows = []
    for n in (8, 10, 12):       # brute force: 3^n inputs x 2^n subsets
        gam = random_gam(n, 'table', 'enumerable', seed=n); x = random_instance(gam, 1)
        for q, fast, bf in (('MSR', msr, msr_bf), ('MCR', mcr, mcr_bf)):
            tf, of = median_time(lambda: fast(gam, x), 5)
            tb, ob = median_time(lambda: bf(gam, x, max_points=600_000), 1)
            assert (of is None) == (ob is None) and (of is None or len(of) == len(ob))
            if q == 'MSR': assert csr_bf(gam, x, of, max_points=600_000)
            rows.append({'query': q, 'n_features': n, 'ours_ms': tf * 1e3, 'bruteforce_ms': tb * 1e3, 'ratio': tb / tf, 'size': len(of or [])})
    for n in (100, 1_000, 10_000, 100_000):
        gam = random_gam(n, 'table', 'enumerable', seed=n); x = random_instance(gam, 1)
        gam.ranges()      # per-model precomputation (cached per GAM), timed separately
        fresh = random_gam(n, 'table', 'enumerable', seed=n)
        t_pre0 = time.perf_counter(); msr(fresh, x); t_first = time.perf_counter() - t_pre0   # first query on a new model: includes computing the ranges
        for q, fast in (('MSR', msr), ('MCR', mcr)):
            # a fresh instance each repeat: the per-instance cost (contributions, sort, prefix)
            xs = [random_instance(gam, s) for s in range(7)]; it = iter(xs)
            tf, of = median_time(lambda: fast(gam, next(it)), 7)
            rows.append({'query': q, 'n_features': n, 'ours_ms': tf * 1e3, 'bruteforce_ms': np.nan, 'ratio': np.nan,
                         'size': len(of or []), 'first_query_incl_setup_ms': t_first * 1e3})
    df = pd.DataFrame(rows)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    t1000 = df[(df.n_features == 1000)].set_index('query').ours_ms
    verdict = 'met' if (t1000 <= 50).all() else 'NOT met'
    OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'gam_reasons.csv', index=False)
    (OUT / 'gam_reasons.md').write_text(
        "# MSR / MCR for GAMs over enumerable domains (3 values per feature, lookup tables)\n\n"
        "ours = greedy on sorted gains (A2/A3); brute force = all subsets by size x all completions. "
        "Per-instance time, median; `first_query_incl_setup_ms` = the first MSR on a freshly built model, including the one-off per-feature ranges (then cached on the GAM).\n\n"
        + markdown_table(df)
        + f"\n\nTarget: 1,000 features <= 50 ms per instance: MSR {t1000['MSR']:.2f} ms, MCR {t1000['MCR']:.2f} ms -> {verdict}.\n"
        "Shared 2-core machine: numbers are noisy; rerun before quoting.\n")
    print(f"\n1,000 features: MSR {t1000['MSR']:.2f} ms, MCR {t1000['MCR']:.2f} ms per instance (target 50 ms): {verdict}")


if __name__ == '__main__':
    main()
