"""Study (no peer library): QueRE's three prediction tasks on the shipped features, each over 100 random splits grouped by prompt text (a prompt,
its duplicates and its steered / other-temperature version are never on both sides): held-out AUROC mean +- sd per
feature set. The figures quoted in nbs/96_quere, tutorials/96_quere and the README come from this table.

    nice .venv/bin/python benchmarks/bench_quere_splits.py      # about 15 s; writes benchmarks/results/quere_grouped_splits.{csv,md}
"""
from pathlib import Path

import pandas as pd

from trustml_nb.core import markdown_table
from trustml_nb.quere import auroc_over_splits, load_quere_features, probe_task

OUT = Path(__file__).resolve().parent / 'results'
N_SPLITS, TEST_FRACTION, SEED = 100, 0.4, 0


def main():
    F = load_quere_features()
    rows = []
    for task, label in (('correct', 'answer correct (clean model)'), ('steer', "steered by 'Always answer No.'"),
                        ('model', 'temperature 2 vs 1 (same weights)')):
        study = auroc_over_splits(**probe_task(F, task), n_splits=N_SPLITS, test_fraction=TEST_FRACTION, seed=SEED)
        for r in study.table.itertuples():
            rows.append(dict(task=label, features=r.features, n_rows=study.n_rows, n_prompts=study.n_groups, n_splits=study.n_splits,
                             auroc_mean=round(r.auroc_mean, 3), auroc_sd=round(r.auroc_sd, 3), auroc_min=round(r.auroc_min, 3),
                             auroc_max=round(r.auroc_max, 3), share_above_half=round(r.share_above_half, 2)))
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / 'quere_grouped_splits.csv', index=False)
    (OUT / 'quere_grouped_splits.md').write_text(
        f"# QueRE over {N_SPLITS} prompt-grouped splits ({TEST_FRACTION:.0%} of the prompts held out, seed {SEED})\n\n"
        "Held-out AUROC of an L2 logistic probe refitted on every split; mean and sd (ddof 1) over the splits. "
        "Shipped features of SmolLM2-135M-Instruct (`load_quere_features`). Command: "
        "`nice .venv/bin/python benchmarks/bench_quere_splits.py`.\n\n" + markdown_table(df) + "\n")
    print(df.to_string(index=False))


if __name__ == '__main__':
    main()
