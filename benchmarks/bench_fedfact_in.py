"""Study (no peer library): FedFACT-In on the 5 Adult split seeds (issue 14, deliverable 4): budgets met on the fitted data (expected rates of the
final LP mixture) and test accuracy against FedFACT-Post's, for 40 and 80 rounds (80 is the default; 40 rounds: fedfact_seeds.md, seeds 0-4).
Setting as in bench_fedfact_seeds.py (5 clients, Dir(0.5), xi_g = xi_l = 0.01, DP, FedAvg training seed 0).
Run: .venv/bin/python benchmarks/bench_fedfact_in.py [rounds ...]   (default: 40 80)
"""
import os
import sys
import time
from pathlib import Path

import pandas as pd

os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")
from trustml_nb.core import DroppedRowsWarning, markdown_table, quiet
from trustml_nb.fedfact import FedAvg, FedFactIn, FedFactPost, adult_fed_data

OUT = Path(__file__).parent / "results"


def main(rounds=(40, 80)):
    rows = []
    for seed in range(5):
        with quiet(DroppedRowsWarning): fd = adult_fed_data(seed=seed)
        avg = FedAvg(seed=0).fit(fd); post = FedFactPost(base_model=avg, seed=0).fit(fd).report_
        for T in rounds:
            t0 = time.perf_counter(); est = FedFactIn(base_model=avg, seed=0, n_rounds=T).fit(fd); r = est.report_
            rows.append(dict(seed=seed, n_rounds=T, in_accuracy=100 * r.accuracy, post_accuracy=100 * post.accuracy,
                             in_minus_post=100 * (r.accuracy - post.accuracy), train_global_expected=r.train_global_gap_expected,
                             train_local_expected=r.train_worst_local_gap_expected, budgets_met=r.constraints_met,
                             acc_within_1_of_post=r.accuracy >= post.accuracy - 0.01, constant_rule_weight_max=float(est.payload_['mix'][:, 0, -2:].sum(1).max()),
                             seconds=time.perf_counter() - t0, load=os.getloadavg()[0]))
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    hits = df.groupby("n_rounds")[["budgets_met", "acc_within_1_of_post"]].sum().reset_index()
    (OUT / "fedfact_in.md").write_text("# FedFACT-In on 5 Adult splits\n\n" + __doc__.split("Run:")[0].strip()
                                      + f"\n\nCommand: `.venv/bin/python benchmarks/bench_fedfact_in.py {' '.join(map(str, rounds))}` (shared machine, load in the table).\n\n"
                                      "## Seeds hitting each target (of 5)\n\n" + markdown_table(hits) + "\n\n## Per seed\n\n" + markdown_table(df) + "\n")
    print(hits)


if __name__ == "__main__":
    main(tuple(int(x) for x in sys.argv[1:]) or (40, 80))
