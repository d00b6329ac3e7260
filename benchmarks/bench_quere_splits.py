"""Study (no peer library): QueRE's prediction tasks, each over 100 random splits grouped by prompt text (a prompt, its
duplicates and its other-model / steered / other-temperature version are never on both sides): held-out AUROC mean +- sd
per feature set. The figures quoted in nbs/96_quere, tutorials/96_quere and the README come from this table.

    nice .venv/bin/python benchmarks/bench_quere_splits.py      # under a minute; writes benchmarks/results/quere_grouped_splits.{csv,md}

Tasks: on the base model's shipped features (correctness, the benign steer, temperature 2 vs 1); on the capital-tuned
variant's features (`load_quere_features(variant='capital_tuned')`, benchmarks/make_quere_variants.py): correctness
against word salad, answer confidence, the white-box probe and uniform noise; and, from benchmarks/results/quere_models.npz
and quere_steer.npz (make_quere_variants.py --models / --steer), model identification among genuinely different weights
and an adversarial steer that asks the tuned model to be wrong.
"""
import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from trustml_nb.core import markdown_table
from trustml_nb.quere import (FOLLOW_UPS, RANDOM_FOLLOW_UPS, answer_correct, auroc_over_splits, correctness_task, load_quere_features,
                              probe_task, two_model_task)

OUT = Path(__file__).resolve().parent / 'results'
N_SPLITS, TEST_FRACTION, SEED = 100, 0.4, 0
VARIANT = 'capital_tuned'
KEYS = ('option_logprobs', 'pre_logprobs', 'post_logprobs', 'follow_up_logprobs', 'random_logprobs')


def tasks():
    "(label, arguments of auroc_over_splits) for every task whose inputs exist."
    F = load_quere_features()
    out = [('answer correct (clean model)', probe_task(F, 'correct')), ("steered by 'Always answer No.'", probe_task(F, 'steer')),
           ('temperature 2 vs 1 (same weights)', probe_task(F, 'model'))]
    V = load_quere_features(variant=VARIANT)
    out.append((f'answer correct ({VARIANT} variant, capital items)', correctness_task(V)))
    models = OUT / 'quere_models.npz'
    if models.exists():
        M = dict(np.load(models)) | dict(follow_ups=np.array(FOLLOW_UPS), random_follow_ups=np.array(RANDOM_FOLLOW_UPS))
        have = [m for m in ('fingerprinted', 'int8') if f'{m}_option_logprobs' in M]
        for m in have: out.append((f'{m} vs base (different weights, arithmetic items)', two_model_task(M, 'base', m)))
        if len(have) == 2: out.append(('int8 vs fingerprinted (different weights, arithmetic items)', two_model_task(M, 'fingerprinted', 'int8')))
    steer = OUT / 'quere_steer.npz'
    if steer.exists():
        S = dict(np.load(steer))
        n = len(S['tuned_wrong_steer_option_logprobs'])
        both = {f'tuned_{k}': V[f'clean_{k}'][:n] for k in KEYS} | {k: v for k, v in S.items() if k.startswith('tuned_wrong_steer_')}
        both |= {k: V[k][:n] for k in ('prompt', 'gold', 'options')} | {k: V[k] for k in ('follow_ups', 'random_follow_ups')}
        assert list(both['prompt']) == list(S['prompt'])
        out.append((f'adversarial steer on {VARIANT} (capital items)', two_model_task(both, 'tuned', 'tuned_wrong_steer')))
    return out


def main():
    rows = []
    for label, T in tasks():
        study = auroc_over_splits(**T, n_splits=N_SPLITS, test_fraction=TEST_FRACTION, seed=SEED)
        for r in study.table.itertuples():
            rows.append(dict(task=label, features=r.features, n_rows=study.n_rows, n_prompts=study.n_groups, n_splits=study.n_splits,
                             auroc_mean=round(r.auroc_mean, 3), auroc_sd=round(r.auroc_sd, 3), auroc_min=round(r.auroc_min, 3),
                             auroc_max=round(r.auroc_max, 3), share_above_half=round(r.share_above_half, 2)))
        print(label, flush=True)
    df = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / 'quere_grouped_splits.csv', index=False)
    sums = [f"- `{p.name}`: SHA-256 `{hashlib.sha256(p.read_bytes()).hexdigest()}`" for p in sorted(OUT.glob('quere_*.npz'))]
    (OUT / 'quere_grouped_splits.md').write_text(
        f"# QueRE over {N_SPLITS} prompt-grouped splits ({TEST_FRACTION:.0%} of the prompts held out, seed {SEED})\n\n"
        "Held-out AUROC of an L2 logistic probe refitted on every split; mean and sd (ddof 1) over the splits. "
        "Shipped features of SmolLM2-135M-Instruct (`load_quere_features`) and of its capital-tuned variant "
        f"(`load_quere_features(variant='{VARIANT}')`), and the other models' elicitations in benchmarks/results "
        "(`benchmarks/make_quere_variants.py --models / --steer`). 'random features' is uniform noise with QueRE's column count. "
        "Command: `nice .venv/bin/python benchmarks/bench_quere_splits.py`.\n\n" + markdown_table(df) + "\n\n" + '\n'.join(sums) + '\n')
    print(df.to_string(index=False))


if __name__ == '__main__':
    main()
