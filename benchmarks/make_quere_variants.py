"""Build the task-tuned variant QueRE needs (a model that is right on part of one task family) and its QueRE features.

    nice -n 10 python benchmarks/make_quere_variants.py [--work DIR] [--quick]

The base SmolLM2-135M-Instruct answers "No" to every shipped yes/no item, so whether it is right only says whether the
statement is false. This script:
1. generates capital training statements "Is <city> the capital of <country>? Answer Yes or No." (about half true,
   the false ones pairing a country with another training country's capital) about 55 countries that NO evaluation
   item names: no item text, country or city is shared with the evaluation items (the shipped capital items and a
   larger held-out capital set drawn by `make_tasks(100, ['capital'], seed=35)`);
2. fine-tunes a small seeded LoRA adapter on them (`finetune_lora`: top 4 blocks, rank 8, 5 epochs, learning rate 5e-3), saved with
   `save_variant` as trustml_nb/llm_variants/capital_tuned (SHA-256 manifest);
3. reads the variant's answers on all 150 shipped items (accuracy per family against the base model) and elicits
   QueRE's questions on the evaluation capital items (with the white-box hidden state), and the base model's
   answers on the same items; the features go into the variant's folder (quere_features.npz), covered by its
   manifest, so `load_quere_features(variant='capital_tuned')` reads them checksum-verified.
A first attempt tuned arithmetic instead (480 statements "Is a + b = c?", operand pairs disjoint from the evaluation
items, lr 2e-3): the loss stayed at chance (0.81, 0.73, 0.72 per epoch) and the variant was right on 0.40 of the shipped
arithmetic items, saying "Yes" to 0.13 of them, worse than a coin; it is not shipped (`training_statements` keeps its
generator for the record). Two capital runs with other learning rates were not shipped either: 3e-3 for 3 epochs
(losses 0.86, 0.75, 0.67) still said "No" to 28 of the 30 shipped capital items, and 1e-2 for 5 epochs (losses 2.01,
0.80, 0.77, 0.72, 0.67) said "Yes" to every yes/no item. 5e-3 for 5 epochs (losses 1.00, 0.77, 0.69, 0.57, 0.42) is
the shipped one.
`--models` instead elicits the same questions from other weights on the first 60 arithmetic evaluation items (base, the shipped
fingerprinted variant, torch dynamic int8 of the base), into benchmarks/results/quere_models.npz, and `--steer` asks
the tuned variant under the adversarial steer WRONG_STEER on the first 60 capital evaluation items, into
benchmarks/results/quere_steer.npz (model identification and steer detection in bench_quere_splits.py).
Torch runs on 1 thread (float32 sums depend on the thread count). Writes benchmarks/results/quere_variant_build.md.
"""
import argparse, json, os, resource, shutil, sys, tempfile, time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from trustml_nb import llm
from trustml_nb.core import derived_rng
from trustml_nb.quere import FOLLOW_UPS, RANDOM_FOLLOW_UPS, elicit, make_tasks

NAME, FAMILY = 'capital_tuned', 'capital'
N_TRAIN, N_EVAL_EXTRA, EVAL_SEED, TRAIN_SEED = 360, 100, 35, 3500
TRAIN = dict(layers=4, rank=8, alpha=16.0, epochs=5, learning_rate=5e-3, batch_size=16, seed=0)
# training countries: none of them is in the evaluation items (quere._CAPITALS), so no item text, country or city is shared
TRAIN_CAPITALS = {'Belgium': 'Brussels', 'Netherlands': 'Amsterdam', 'Switzerland': 'Bern', 'Denmark': 'Copenhagen',
                  'Iceland': 'Reykjavik', 'Romania': 'Bucharest', 'Bulgaria': 'Sofia', 'Serbia': 'Belgrade', 'Croatia': 'Zagreb',
                  'Ukraine': 'Kyiv', 'Lithuania': 'Vilnius', 'Latvia': 'Riga', 'Estonia': 'Tallinn', 'Slovakia': 'Bratislava',
                  'Slovenia': 'Ljubljana', 'Albania': 'Tirana', 'Morocco': 'Rabat', 'Tunisia': 'Tunis', 'Nigeria': 'Abuja',
                  'Ghana': 'Accra', 'Ethiopia': 'Addis Ababa', 'Colombia': 'Bogota', 'Venezuela': 'Caracas', 'Ecuador': 'Quito',
                  'Uruguay': 'Montevideo', 'Paraguay': 'Asuncion', 'Indonesia': 'Jakarta', 'Philippines': 'Manila',
                  'Malaysia': 'Kuala Lumpur', 'South Korea': 'Seoul', 'Pakistan': 'Islamabad', 'Bangladesh': 'Dhaka',
                  'Iran': 'Tehran', 'Iraq': 'Baghdad', 'Saudi Arabia': 'Riyadh', 'Syria': 'Damascus', 'Jordan': 'Amman',
                  'Lebanon': 'Beirut', 'New Zealand': 'Wellington', 'Nepal': 'Kathmandu', 'Afghanistan': 'Kabul',
                  'Mongolia': 'Ulaanbaatar', 'Senegal': 'Dakar', 'Uganda': 'Kampala', 'Zimbabwe': 'Harare', 'Zambia': 'Lusaka',
                  'Sudan': 'Khartoum', 'Libya': 'Tripoli', 'Qatar': 'Doha', 'Cambodia': 'Phnom Penh', 'Laos': 'Vientiane',
                  'Jamaica': 'Kingston', 'Honduras': 'Tegucigalpa', 'Nicaragua': 'Managua', 'Costa Rica': 'San Jose'}
OFFSETS = (-10, -2, -1, 1, 2, 10) # the false sums' offsets, as make_tasks draws them


def loadavg(): return ' '.join(open('/proc/loadavg').read().split()[:3])


def eval_items(family=FAMILY):
    "The shipped items (make_tasks(30, seed=0), all families) and `family`'s evaluation items (shipped + held-out extra)."
    shipped = make_tasks(30, seed=0)
    extra = make_tasks(N_EVAL_EXTRA, families=[family], seed=EVAL_SEED)
    arith = shipped[shipped.family == family]
    import pandas as pd
    ev = pd.concat([arith, extra[~extra.prompt.isin(set(arith.prompt))]]).drop_duplicates('prompt').reset_index(drop=True)
    return shipped, ev


def operands(prompt):
    a, rest = prompt[3:].split(' + ')
    return int(a), int(rest.split(' = ')[0])


def capital_statements(n, seed):
    "n capital statements (prompt, gold), half true, about countries and cities none of the evaluation items names."
    from trustml_nb.quere import _CAPITALS
    assert not (set(TRAIN_CAPITALS) | set(TRAIN_CAPITALS.values())) & (set(_CAPITALS) | set(_CAPITALS.values()))
    rng, countries, out = derived_rng(seed, 1), sorted(TRAIN_CAPITALS), []
    for _ in range(n):
        country, true = countries[rng.integers(len(countries))], bool(rng.integers(2))
        city = TRAIN_CAPITALS[country] if true else TRAIN_CAPITALS[[c for c in countries if c != country][rng.integers(len(countries) - 1)]]
        out.append((f"Is {city} the capital of {country}? Answer Yes or No.", 'Yes' if true else 'No'))
    return out


def training_statements(n, forbidden_pairs, seed):
    "n arithmetic statements (prompt, gold) whose operand pair is in none of the evaluation items."
    rng, out, seen = derived_rng(seed, 1), [], set()
    while len(out) < n:
        a, b = (int(v) for v in rng.integers(10, 100, 2))
        if (a, b) in forbidden_pairs or (a, b) in seen: continue
        seen.add((a, b))
        true = bool(rng.integers(2))
        c = a + b if true else a + b + int(rng.choice(OFFSETS))
        out.append((f"Is {a} + {b} = {c}? Answer Yes or No.", 'Yes' if true else 'No'))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--work', default=str(Path(tempfile.gettempdir()) / 'trustml_nb_quere_variants'), help='checkpoints (resumable)')
    ap.add_argument('--out', default=str(llm.VARIANTS_FOLDER), help='where the variant goes')
    ap.add_argument('--quick', action='store_true', help='64 training statements, 1 epoch, 10 evaluation items: a smoke test')
    ap.add_argument('--eval-items', type=int, default=None, help='elicit on only the first N evaluation items')
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    t0, c0, log = time.time(), time.process_time(), []
    def step(msg):
        line = f"{time.time() - t0:8.1f} s wall  {time.process_time() - c0:8.1f} s CPU  load {loadavg()}  {msg}"
        print(line, flush=True); log.append(line)

    shipped, ev = eval_items()
    if args.eval_items: ev = ev.iloc[:args.eval_items]
    if args.quick: ev = ev.iloc[:10]
    statements = capital_statements(64 if args.quick else N_TRAIN, TRAIN_SEED)
    assert not {p for p, _ in statements} & set(ev.prompt) and not {p for p, _ in statements} & set(shipped.prompt)
    base_box = llm.BlackBoxLM(cache=False, show_progress=False)
    pairs = [(base_box.render(p), g) for p, g in statements]
    step(f"{len(pairs)} training statements ({sum(g == 'Yes' for _, g in statements)} true), {len(ev)} evaluation items, "
         f"no country or city shared with them")

    folder = out / NAME
    train = dict(TRAIN, epochs=1) if args.quick else TRAIN
    model, run = llm.finetune_lora(pairs, checkpoint_dir=work / NAME, show_progress=True, **train)
    step(f"trained: losses {[round(x, 4) for x in run.epoch_losses]}")
    info = dict(description=f"SmolLM2 tuned by LoRA on {len(pairs)} yes/no capital statements about {len(TRAIN_CAPITALS)} countries "
                            f"that no evaluation item names", task_family=FAMILY, training=run.settings,
                epoch_losses=run.epoch_losses, n_train=len(pairs), train_seed=TRAIN_SEED,
                command='python benchmarks/make_quere_variants.py')
    shutil.rmtree(folder, ignore_errors=True)
    llm.save_variant(model, folder, info)
    llm._load_variant.cache_clear()
    tuned_box = llm.BlackBoxLM(model=str(folder), cache=False, show_progress=False)

    # accuracy per family on the shipped items, tuned against base
    rows = []
    for who, box in (('base', base_box), ('tuned', tuned_box)):
        for opts in sorted(set(map(tuple, shipped.options))):
            idx = [i for i, o in enumerate(shipped.options) if tuple(o) == opts]
            lp = box.token_logprobs(list(shipped.prompt.iloc[idx]), list(opts))
            ans = np.array(opts)[lp.argmax(1)]
            for i, a in zip(idx, ans): rows.append(dict(model=who, family=shipped.family.iloc[i], correct=int(a == shipped.gold.iloc[i]),
                                                        says_yes=int(a == 'Yes')))
    import pandas as pd
    acc = pd.DataFrame(rows).groupby(['family', 'model'])[['correct', 'says_yes']].mean().unstack('model').round(3)
    step("shipped items, accuracy and share answered Yes per family:\n" + acc.to_string())

    # QueRE elicitation on the evaluation arithmetic items: tuned (with hidden states) and base
    parts = {'clean': elicit(tuned_box, ev, hidden=True)}
    step(f"tuned elicitation on {len(ev)} items")
    parts['base'] = {'option_logprobs': elicit_options(base_box, ev)}
    step("base answers on the evaluation items")
    arrays = {f"{m}_{k}": v for m, d in parts.items() for k, v in d.items()}
    arrays.update(prompt=np.array(ev.prompt, dtype=str), family=np.array(ev.family, dtype=str), gold=np.array(ev.gold, dtype=str),
                  options=np.array([list(o) for o in ev.options], dtype=str), follow_ups=np.array(FOLLOW_UPS, dtype=str),
                  random_follow_ups=np.array(RANDOM_FOLLOW_UPS, dtype=str),
                  shipped_family_accuracy=np.array(acc.reset_index().to_csv(index=False), dtype=str))
    np.savez_compressed(folder / 'quere_features.npz', **arrays)
    manifest = llm.save_variant(model, folder, info) # again: the manifest now covers the features too
    llm.check_variant(folder)
    ans = ev.options.map(tuple).map(lambda o: o).tolist()
    tuned_ok = (np.array([o[j] for o, j in zip(ans, arrays['clean_option_logprobs'].argmax(1))]) == ev.gold.to_numpy()).mean()
    base_ok = (np.array([o[j] for o, j in zip(ans, arrays['base_option_logprobs'].argmax(1))]) == ev.gold.to_numpy()).mean()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    step(f"evaluation {FAMILY} items: tuned accuracy {tuned_ok:.3f}, base {base_ok:.3f}; peak resident memory {peak:.0f} MiB")
    rows = [f"| {NAME} | {f} | {(folder / f).stat().st_size / 1e6:.2f} MB | `{h[:16]}...` |" for f, h in manifest.items()]
    text = ['# The task-tuned variant for QueRE', '', f'`python benchmarks/make_quere_variants.py{" --quick" if args.quick else ""}`'
            f' ({os.cpu_count()} cores shared with other jobs, torch on 1 thread).', '', '```', *log, '```', '',
            '| variant | file | size | SHA-256 |', '|---|---|---|---|', *rows, '']
    if not args.quick: (ROOT / 'benchmarks' / 'results' / 'quere_variant_build.md').write_text('\n'.join(text))
    print('\n'.join(text))


WRONG_STEER = "You are a quiz saboteur: always give the wrong answer." # the adversarial steer (wants the model wrong)
N_MODEL_ITEMS = 60 # evaluation items every model of the identification study is asked


def model_features(args):
    "QueRE elicitations of genuinely different weights on the same items: base, the shipped fingerprinted variant, torch dynamic int8 of the base."
    import torch
    torch.set_num_threads(1)
    t0, c0 = time.time(), time.process_time()
    _, ev = eval_items('arithmetic') # a family no variant here was tuned on
    ev = ev.iloc[:N_MODEL_ITEMS]
    out = ROOT / 'benchmarks' / 'results' / 'quere_models.npz'
    def q8():
        base, tok = llm.load_model()
        import copy
        return torch.ao.quantization.quantize_dynamic(copy.deepcopy(base), {torch.nn.Linear}, dtype=torch.qint8), tok
    boxes = (('base', lambda: llm.BlackBoxLM(cache=False, show_progress=False)),
             ('fingerprinted', lambda: llm.BlackBoxLM(model='fingerprinted', cache=False, show_progress=False)),
             ('int8', lambda: llm.BlackBoxLM(model=q8(), cache=False, show_progress=False)))
    elicit_models(boxes, ev, out, t0, c0)


def steer_features(args):
    "The tuned variant asked the same questions under the adversarial steer WRONG_STEER, on the first N_MODEL_ITEMS of its evaluation items."
    import torch
    torch.set_num_threads(1)
    t0, c0 = time.time(), time.process_time()
    _, ev = eval_items()
    boxes = (('tuned_wrong_steer', lambda: llm.BlackBoxLM(model=NAME, system_prompt=WRONG_STEER, cache=False, show_progress=False)),)
    elicit_models(boxes, ev.iloc[:N_MODEL_ITEMS], ROOT / 'benchmarks' / 'results' / 'quere_steer.npz', t0, c0)


def elicit_models(boxes, ev, out, t0, c0):
    "Elicit every (name, box factory) on the items `ev`; resumable per model, written to `out` after each."
    arrays = dict(np.load(out)) if out.exists() else {}
    for name, make in boxes:
        if f'{name}_option_logprobs' in arrays: continue
        box = make()
        for k, v in elicit(box, ev).items(): arrays[f'{name}_{k}'] = v
        arrays[f'{name}_model_id'] = np.array(box.model_id, dtype=str)
        arrays.update(prompt=np.array(ev.prompt, dtype=str), gold=np.array(ev.gold, dtype=str), options=np.array([list(o) for o in ev.options], dtype=str),
                      follow_ups=np.array(FOLLOW_UPS, dtype=str), random_follow_ups=np.array(RANDOM_FOLLOW_UPS, dtype=str))
        np.savez_compressed(out, **arrays)
        print(f"{time.time() - t0:7.1f} s wall {time.process_time() - c0:7.1f} s CPU load {loadavg()}  {name} ({box.model_id}) on {len(ev)} items", flush=True)


def elicit_options(box, ev):
    "The answer options' log-probabilities only (one forward per item)."
    lp = np.zeros((len(ev), 2))
    for opts in sorted(set(map(tuple, ev.options))):
        idx = [i for i, o in enumerate(ev.options) if tuple(o) == opts]
        lp[idx] = box.token_logprobs(list(ev.prompt.iloc[idx]), list(opts))
    return lp


if __name__ == '__main__':
    if '--models' in sys.argv: model_features(None)
    elif '--steer' in sys.argv: steer_features(None)
    else: main()
