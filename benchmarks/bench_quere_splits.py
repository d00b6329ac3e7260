"""Study (no peer library): QueRE's prediction tasks, each over 100 random splits grouped by prompt text (a prompt, its
duplicates and its other-model / steered / other-temperature version are never on both sides): held-out AUROC mean +- sd
per feature set. The figures quoted in nbs/96_quere, tutorials/96_quere and the README come from this table.

    nice .venv/bin/python benchmarks/bench_quere_splits.py      # under a minute; writes benchmarks/results/quere_grouped_splits.{csv,md}

Tasks: on the base model's shipped features (correctness, the benign steer, temperature 2 vs 1); on the capital-tuned
variant's features (`load_quere_features(variant='capital_tuned')`, benchmarks/make_quere_variants.py): correctness
against word salad, answer confidence, the white-box probe and uniform noise; and, from benchmarks/results/quere_models.npz
and quere_steer.npz (make_quere_variants.py --models / --steer), model identification among genuinely different weights
(every pair of base, fingerprinted, int8, capital_tuned) and steers meant to make the tuned model wrong (with a noise floor,
and the white-box probe where the steer was elicited with hidden states); the mixed capital family shipped beside the variant
(--hard, right on about half); and the paper's follow-up design (--option-follow-ups: follow-ups after each answer option,
20 questions) on the same splits as the correctness row.
"""
import hashlib, itertools
from pathlib import Path

import numpy as np
import pandas as pd

from trustml_nb.core import make_rng, markdown_table
from trustml_nb.llm import check_variant
from trustml_nb.quere import (FOLLOW_UPS, RANDOM_FOLLOW_UPS, answer_correct, auroc_over_splits, correctness_task, load_quere_features,
                              follow_up_designs, probe_task, two_model_task)

OUT = Path(__file__).resolve().parent / 'results'
N_SPLITS, TEST_FRACTION, SEED = 100, 0.4, 0
VARIANT = 'capital_tuned'
MODELS = ('base', 'fingerprinted', 'int8', 'capital_tuned') # the identification study's models, in pair order
STEER_LABELS = {'tuned_wrong_steer': 'adversarial steer', 'tuned_reflected_truth': 'activation steer (truth reflected)', # labels, as quoted
                'tuned_poisoned_turns_10': 'wrong-answered examples (20 turns)', 'tuned_poisoned_turns': 'wrong-answered examples (60 turns)'}
HARD_FILE = 'quere_features_mixed.npz' # make_quere_variants.py --hard
KEYS = ('option_logprobs', 'pre_logprobs', 'post_logprobs', 'follow_up_logprobs', 'random_logprobs')


def tasks():
    "(label, arguments of auroc_over_splits) for every task whose inputs exist."
    F = load_quere_features()
    out = [('answer correct (clean model)', probe_task(F, 'correct')), ("steered by 'Always answer No.'", probe_task(F, 'steer')),
           ('temperature 2 vs 1 (same weights)', probe_task(F, 'model'))]
    V = load_quere_features(variant=VARIANT)
    out.append((f'answer correct ({VARIANT} variant, capital items)', correctness_task(V)))
    opt = OUT / 'quere_option_follow_ups.npz'
    if opt.exists():
        O = dict(np.load(opt))
        assert list(O['prompt']) == list(V['prompt'])
        out.append((f'answer correct ({VARIANT} variant, capital items): follow-up designs', follow_up_designs(V, O['per_option_logprobs'])))
    hard = check_variant(VARIANT) / HARD_FILE # every file of the variant checked against its manifest first
    if hard.exists():
        H = load_quere_features(hard); T = correctness_task(H)
        n = len(V['prompt']); assert list(H['prompt'][:n]) == list(V['prompt'])   # the mix is the capital items, then the big-city ones
        # the item's kind (known to the analyst, not read from the model) predicts the mix's correctness by itself: the baseline to beat
        kind = (np.arange(len(T['y'])) >= n).astype(float)[:, None]
        T['sets'] |= {'item kind alone': kind, 'QueRE + item kind': np.column_stack([T['sets']['QueRE'], kind])}
        out.append((f'answer correct ({VARIANT} variant, capital items + big-city items)', T))
    models = OUT / 'quere_models.npz'
    if models.exists():
        M = dict(np.load(models)) | dict(follow_ups=np.array(FOLLOW_UPS), random_follow_ups=np.array(RANDOM_FOLLOW_UPS))
        have = [m for m in MODELS if f'{m}_option_logprobs' in M]
        for a, b in itertools.combinations(have, 2): out.append((f'{b} vs {a} (different weights, arithmetic items)', two_model_task(M, a, b)))
    steer = OUT / 'quere_steer.npz'
    if steer.exists():
        S = dict(np.load(steer))
        for name in sorted(k[:-len('_option_logprobs')] for k in S if k.endswith('_option_logprobs')):
            n = len(S[f'{name}_option_logprobs'])
            both = {f'tuned_{k}': V[f'clean_{k}'][:n] for k in KEYS + ('hidden',)} | {k: v for k, v in S.items() if k.startswith(f'{name}_')}
            both |= {k: V[k][:n] for k in ('prompt', 'gold', 'options')} | {k: V[k] for k in ('follow_ups', 'random_follow_ups')}
            assert list(both['prompt']) == list(S['prompt'])
            label = STEER_LABELS.get(name, f"steer {name[len('tuned_'):]!r}")
            out.append((f'{label} on {VARIANT} (capital items)', with_noise(two_model_task(both, 'tuned', name))))
    return out


def with_noise(T, seed=0):
    "The task with a 'random features' floor added: uniform noise with QueRE's column count."
    T['sets']['random features'] = make_rng(seed).random(T['sets']['QueRE'].shape)
    return T


def main(only=None):
    "Every task; or, with `only`, the tasks whose label contains it, replacing their rows in the existing CSV (the others kept)."
    rows = []
    for label, T in tasks():
        if only and only not in label: continue
        study = auroc_over_splits(**T, n_splits=N_SPLITS, test_fraction=TEST_FRACTION, seed=SEED)
        for r in study.table.itertuples():
            rows.append(dict(task=label, features=r.features, n_rows=study.n_rows, n_prompts=study.n_groups, n_splits=study.n_splits,
                             auroc_mean=round(r.auroc_mean, 3), auroc_sd=round(r.auroc_sd, 3), auroc_min=round(r.auroc_min, 3),
                             auroc_max=round(r.auroc_max, 3), share_above_half=round(r.share_above_half, 2)))
        print(label, flush=True)
    df = pd.DataFrame(rows)
    if only: # keep the other tasks' rows, in their order; these tasks' rows replace theirs or follow
        old = pd.read_csv(OUT / 'quere_grouped_splits.csv')
        df = pd.concat([old[~old.task.isin(set(df.task))], df], ignore_index=True)
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / 'quere_grouped_splits.csv', index=False)
    sums = [f"- `{p.name}`: SHA-256 `{hashlib.sha256(p.read_bytes()).hexdigest()}`" for p in sorted(OUT.glob('quere_*.npz'))]
    (OUT / 'quere_grouped_splits.md').write_text(
        f"# QueRE over {N_SPLITS} prompt-grouped splits ({TEST_FRACTION:.0%} of the prompts held out, seed {SEED})\n\n"
        "Held-out AUROC of an L2 logistic probe refitted on every split; mean and sd (ddof 1) over the splits. "
        "Shipped features of SmolLM2-135M-Instruct (`load_quere_features`) and of its capital-tuned variant "
        f"(`load_quere_features(variant='{VARIANT}')`), and the other models' elicitations in benchmarks/results "
        "(`benchmarks/make_quere_variants.py --models / --steer / --hard / --option-follow-ups`). 'random features' is uniform noise with QueRE's column count. "
        "Command: `nice .venv/bin/python benchmarks/bench_quere_splits.py` (`--only TEXT`: only the tasks whose label contains TEXT, the others' rows kept).\n\n" + markdown_table(df) + "\n\n" + '\n'.join(sums) + '\n')
    print(df.to_string(index=False))


if __name__ == '__main__':
    import sys
    main(sys.argv[sys.argv.index('--only') + 1] if '--only' in sys.argv else None)
