"""Coverage of the 95% influence-function intervals of trustml_nb.pse on the oximetry simulator.

200 fresh samples of n = 5,000 ICU stays (GLM nuisances, 5 folds); truth = population value from a 10^6-unit sample.
Target (issue #3): coverage between 0.92 and 0.98. Run: .venv/bin/python benchmarks/studies/pse_coverage/bench_pse_coverage.py [n_reps] [n]
(results go to benchmarks/studies/pse_coverage/results, or to $PSE_BENCH_OUT)
"""
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import markdown_table
from trustml_nb.pse import PathSpecificEffects

OUT = Path(os.environ.get("PSE_BENCH_OUT", Path(__file__).parent / "results"))




def main(n_reps=200, n=5_000, seed=2026):
    t0 = time.time()
    res = PathSpecificEffects(learners='glm', seed=seed).coverage_study(n_reps=n_reps, n=n)
    secs = time.time() - t0
    t = res.to_frame()
    t['in_target'] = t.coverage.between(0.92, 0.98)
    OUT.mkdir(exist_ok=True)
    t.to_csv(OUT / "pse_coverage.csv", index=False)
    head = (f"# Coverage of 95% intervals, oximetry simulator (ventilation)\n\n"
            f"{n_reps} replications, n = {n:,}, GLM nuisances (statsmodels), 5 folds, clip 0.01, seed {seed}; "
            f"truth from a 10^6-unit population sample. Monte Carlo s.e. of a coverage near 0.95: "
            f"{(0.95 * 0.05 / n_reps) ** 0.5:.3f}. Wall time {secs:.0f} s on a shared 2-core machine (noisy).\n\n")
    (OUT / "pse_coverage.md").write_text(head + markdown_table(t) + "\n")
    print(head + t.round(4).to_string(index=False))


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*args)
