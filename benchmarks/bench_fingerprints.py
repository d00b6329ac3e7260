"""Perinucleus fingerprints against the paper's baselines, on the shipped variants (build them with make_llm_variants.py).

    nice -n 15 python benchmarks/bench_fingerprints.py

For every fingerprint set (perinucleus; random-token and greedy responses, the paper's baselines) and every model (base,
each shipped variant): the exact-match rate of greedy answers to the keys. From these: fingerprints inserted and retained,
the false-positive rate on models that were never given the set, persistence after further benign fine-tuning, and the
binomial bound. Utility: held-out next-token perplexity and top-1 accuracy on benign prose, against the base model, and a
small task (4-option multiple choice: capital cloze, word opposites; arithmetic is dropped where the base model is at chance)
scored as standard harnesses score multiple choice, with each model's items gained and lost against the base model.

    nice -n 10 python benchmarks/bench_fingerprints.py --small-task   # the small task alone, added to the existing json and md

Torch runs on 1 thread (float32 sums depend on the thread count). Writes benchmarks/results/fingerprints.md and trustml_nb/llm_variants/fingerprint_results.json (read by the notebook).
"""
import hashlib, json, os, resource, subprocess, sys, time
from pathlib import Path

import numpy as np
import torch
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from trustml_nb import fingerprints as F
from trustml_nb import llm
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_llm_variants as MV # the sweep's rows and the strengths file

SHARED = 26 # the lowest block any shipped adapter touches (set from the variants' settings in main)
MODELS = ['base', 'fingerprinted', 'fingerprinted_random', 'fingerprinted_then_benign']
OWNER = {'perinucleus': 'fingerprinted', 'random': 'fingerprinted_random', 'greedy': None}


LOAD = """
import json, resource, sys, time
from trustml_nb import llm
t, c = time.time(), time.process_time()
model = llm.load_model()[0] if sys.argv[1] == 'base' else llm.load_variant(sys.argv[1])[0]
adapter = '' if sys.argv[1] == 'base' else json.loads((llm.VARIANTS_FOLDER / sys.argv[1] / 'manifest.json').read_text())['adapter_model.safetensors']
print(json.dumps(dict(wall=time.time() - t, cpu=time.process_time() - c, peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      load=open('/proc/loadavg').read().split()[:3], adapter_sha256=adapter)))
"""


def _bound_text(row:dict)->str:
    "The bound as printed: its exponent where the float underflows to 0 (below about 1e-308)."
    return f"{row['bound']:.2g}" if row['bound'] > 0 else f"1e{row['log10_bound']:.0f} (exponent; 0.0 in float)"


def load_cost():
    "Load time and peak memory of the base model and of a variant, each in a fresh process, alternating (base, variant) twice."
    out = []
    for what in ('base', 'fingerprinted') * 2:
        res = subprocess.run([sys.executable, '-c', LOAD, what], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        out.append(dict(model=what, **json.loads(res.stdout.strip().splitlines()[-1])))
        print(out[-1], flush=True)
    return out


def tk_grid(probs, ts=(0.5, 0.6, 0.7, 0.8, 0.9, 0.95), ks=(1, 3, 10, 30)):
    "Per (t, k): the base model's mean probability of the k admissible tokens just outside its top-t nucleus, over the keys."
    ok = F.admissible_tokens()
    rows = {(t, k): [] for t in ts for k in ks}
    for p in probs:
        order = np.argsort(-p, kind='stable')
        cum = np.cumsum(p[order])
        for t in ts:
            inside = int(np.searchsorted(cum, t, side='left')) + 1
            outside = order[inside:inside + 5000]
            adm = outside[ok[outside]]
            for k in ks: rows[(t, k)].append(float(p[adm[:k]].mean()))
    return [dict(t=t, k=k, mean_response_probability=float(np.mean(v)), median_response_probability=float(np.median(v)))
            for (t, k), v in rows.items()]


# ---- the small task (issue 35 item 2: utility on a task, not only held-out perplexity) ----
TASK_SEED = 35 # derived_rng(TASK_SEED, family, item) draws each item's distractors and option order
N_ARITHMETIC = 100
OPPOSITES = {'hot': 'cold', 'tall': 'short', 'happy': 'sad', 'wet': 'dry', 'early': 'late', 'rich': 'poor', 'full': 'empty',
             'strong': 'weak', 'thick': 'thin', 'loud': 'quiet', 'win': 'lose', 'buy': 'sell', 'push': 'pull', 'clean': 'dirty',
             'heavy': 'light', 'alive': 'dead', 'true': 'false', 'love': 'hate', 'front': 'back', 'north': 'south', 'east': 'west',
             'inside': 'outside', 'day': 'night', 'black': 'white', 'top': 'bottom', 'first': 'last', 'begin': 'end',
             'question': 'answer', 'remember': 'forget', 'friend': 'enemy', 'sharp': 'dull', 'safe': 'dangerous',
             'cheap': 'expensive', 'sweet': 'sour', 'asleep': 'awake', 'arrive': 'depart', 'accept': 'refuse',
             'increase': 'decrease', 'maximum': 'minimum', 'always': 'never', 'before': 'after', 'above': 'below', 'give': 'take',
             'enter': 'exit', 'male': 'female', 'positive': 'negative', 'ancient': 'modern', 'victory': 'defeat', 'wide': 'narrow',
             'deep': 'shallow', 'smooth': 'rough', 'brave': 'cowardly'}
FAMILIES = ('capital', 'arithmetic', 'opposite')
TASK_COMMAND = 'nice -n 10 python benchmarks/bench_fingerprints.py --small-task'


def task_items(seed:int=TASK_SEED)->dict:
    "Per family, the items: dict(prompt, options (completions, each with its leading space), gold (index of the right one)), 4 options each."
    from trustml_nb.core import derived_rng
    from trustml_nb.quere import _CAPITALS
    from make_quere_variants import TRAIN_CAPITALS, OFFSETS
    def item(prompt, right, wrong, rng):
        options = [right] + list(wrong)
        order = rng.permutation(len(options))
        return dict(prompt=prompt, options=[' ' + str(options[j]) for j in order], gold=int(np.flatnonzero(order == 0)[0]))
    capitals = {**_CAPITALS, **TRAIN_CAPITALS}
    out = {'capital': [], 'arithmetic': [], 'opposite': []}
    for i, country in enumerate(sorted(capitals)):
        rng = derived_rng(seed, 0, i)
        others = sorted(v for c, v in capitals.items() if c != country)
        out['capital'].append(item(f'The capital of {country} is', capitals[country], rng.choice(others, 3, replace=False), rng))
    for i in range(N_ARITHMETIC):
        rng = derived_rng(seed, 1, i)
        a, b = (int(v) for v in rng.integers(10, 100, 2))
        out['arithmetic'].append(item(f'{a} + {b} =', a + b, [a + b + int(o) for o in rng.choice(OFFSETS, 3, replace=False)], rng))
    for i, word in enumerate(sorted(OPPOSITES)):
        rng = derived_rng(seed, 2, i)
        others = sorted(v for w, v in OPPOSITES.items() if w != word)
        out['opposite'].append(item(f'The opposite of {word} is', OPPOSITES[word], rng.choice(others, 3, replace=False), rng))
    return out


def completion_logprobs(model, encoded:list, lower:list, start:int)->list:
    "Per (prompt ids, completion ids) pair: the log-probability of each completion token given every token before it (float64)."
    out = []
    with torch.no_grad():
        for s in range(0, len(encoded), 64):
            chunk = encoded[s:s + 64]
            pos = [list(range(len(p) - 1, len(p) + len(c) - 1)) for p, c in chunk] # position i's logits predict token i + 1
            lp = torch.log_softmax(llm._upper_logits(model, lower[s:s + 64], pos, start).double(), -1).numpy()
            flat = lp[np.arange(len(lp)), [t for _, c in chunk for t in c]]
            ends = np.cumsum([len(c) for _, c in chunk])
            out += np.split(flat, ends[:-1])
    return out


def choose(logprobs:list, options:list)->tuple:
    """Multiple choice scored as the standard harnesses do (lm-evaluation-harness `acc` and `acc_norm`): per item, the option whose
    completion tokens have the largest summed log-probability, and the one with the largest sum divided by the option's length in
    characters. `logprobs[i][j]`: the token log-probabilities of item i's option j; `options[i][j]`: its text. Returns two index arrays."""
    total = [np.array([float(np.sum(lp)) for lp in item]) for item in logprobs]
    chars = [np.array([len(o) for o in opts], dtype=float) for opts in options]
    return np.array([int(np.argmax(t)) for t in total]), np.array([int(np.argmax(t / c)) for t, c in zip(total, chars)])


def check_choose():
    "A hand-made case whose answers are known, and the option order not mattering."
    lps, opts = [[np.array([-1.0, -1.5]), np.array([-2.0]), np.array([-4.0])]], [[' ab', ' c', ' d']]
    by_sum, by_norm = choose(lps, opts) # sums -2.5, -2.0, -4.0; per character -0.833, -1.0, -2.0
    assert (by_sum[0], by_norm[0]) == (1, 0), (by_sum, by_norm)
    for perm in ([2, 0, 1], [1, 2, 0], [2, 1, 0]):
        s, n = choose([[lps[0][j] for j in perm]], [[opts[0][j] for j in perm]])
        assert (perm[s[0]], perm[n[0]]) == (1, 0), perm


def _pairs(items:list)->list: return [(it['prompt'], o) for it in items for o in it['options']]


def check_completion_logprobs(model, items:list, start:int):
    "The split forward's sums against a plain full forward of the model on whole texts, with the options in another order."
    enc = llm.encode_pairs(_pairs(items), 'items')
    lp = completion_logprobs(model, enc, llm._lower_states(model, enc, start), start)
    for (p, c), got in zip(enc, lp):
        with torch.no_grad(): full = torch.log_softmax(model(input_ids=torch.tensor([p + c])).logits[0].double(), -1).numpy()
        want = full[np.arange(len(p) - 1, len(p) + len(c) - 1), c]
        assert np.allclose(got, want, atol=1e-4), (got, want)
    rev = [dict(it, options=it['options'][::-1], gold=len(it['options']) - 1 - it['gold']) for it in items]
    enc_r = llm.encode_pairs(_pairs(rev), 'items')
    lp_r = completion_logprobs(model, enc_r, llm._lower_states(model, enc_r, start), start)
    k = len(items[0]['options'])
    a = choose([lp[i:i + k] for i in range(0, len(lp), k)], [it['options'] for it in items])
    b = choose([lp_r[i:i + k] for i in range(0, len(lp_r), k)], [it['options'] for it in rev])
    for x, y in zip(a, b): assert [it['options'][j] for it, j in zip(items, x)] == [it['options'][j] for it, j in zip(rev, y)]


def _paired(base:np.ndarray, other:np.ndarray)->dict:
    "Items gained and lost against the base model, and the exact two-sided McNemar (sign-test) p-value on the discordant items."
    gained, lost = int(np.sum(~base & other)), int(np.sum(base & ~other))
    p = float(stats.binomtest(min(gained, lost), gained + lost, 0.5).pvalue) if gained + lost else 1.0
    return dict(gained=gained, lost=lost, p_mcnemar=p)


def small_task(base, models:list, start:int)->dict:
    "Accuracy of every model on every family of `task_items` (sum and length-normalised scoring), paired against the base model."
    check_choose()
    items = task_items()
    check_completion_logprobs(base, items['capital'][:2], start)
    enc = {f: llm.encode_pairs(_pairs(items[f]), f) for f in FAMILIES}
    lower = {f: llm._lower_states(base, enc[f], start) for f in FAMILIES}
    correct = {}
    for name in models:
        model = base if name == 'base' else llm.load_variant(name)[0]
        correct[name] = {}
        for f in FAMILIES:
            lp = completion_logprobs(model, enc[f], lower[f], start)
            k = len(items[f][0]['options'])
            by_sum, by_norm = choose([lp[i:i + k] for i in range(0, len(lp), k)], [it['options'] for it in items[f]])
            gold = np.array([it['gold'] for it in items[f]])
            correct[name][f] = (by_sum == gold, by_norm == gold)
        print(name, {f: (round(float(c[0].mean()), 3), round(float(c[1].mean()), 3)) for f, c in correct[name].items()}, flush=True)
        if name != 'base': del model
    res = {}
    for name in models:
        res[name] = {}
        for f in FAMILIES:
            row = {}
            for tag, j in (('', 0), ('_norm', 1)):
                c = correct[name][f][j]
                acc = float(c.mean())
                row['accuracy' + tag] = acc
                row['se' + tag] = float(np.sqrt(acc * (1 - acc) / len(c)))
                row.update({k + tag: v for k, v in _paired(correct['base'][f][j], c).items()})
                row['correct' + tag] = ''.join('1' if x else '0' for x in c)
            res[name][f] = dict(items=len(correct[name][f][0]), **row)
    return res


def small_task_md(task:dict, meta:dict)->list:
    "The small task's section of fingerprints.md."
    kept, dropped = meta['families'], meta['dropped']
    md = ['## Utility on a small task: 4-option multiple choice against the base model', '',
          f"`{meta['command']}` (torch on 1 thread): {meta['seconds']:.0f} s wall, {meta['cpu_seconds']:.0f} s CPU, load average "
          f"{' '.join(meta['load'])} (2 cores shared). Items (seed {meta['seed']}): capital cloze \"The capital of Peru is\" over the "
          f"{meta['items']['capital']} countries of `quere._CAPITALS` and `make_quere_variants.TRAIN_CAPITALS`, the true capital among 3 other "
          f"countries' capitals; arithmetic \"23 + 45 =\" ({meta['items']['arithmetic']} sums of two-digit numbers, 3 wrong sums off by "
          f"1, 2 or 10); word opposites \"The opposite of hot is\" ({meta['items']['opposite']} pairs). Scored as the standard harnesses score "
          'multiple choice: the option whose completion tokens have the largest summed log-probability (acc); acc_norm divides the sum by '
          'the option\'s length in characters. Chance is 0.25. Gained/lost: items the model gets right that the base model got wrong, and '
          'the reverse (the same items for every model); p: exact two-sided McNemar (sign) test on them.', '']
    base = {**task['base'], **dropped}
    md += ['A family is kept where the base model is well above chance (acc >= 0.4 and one-sided exact binomial p < 0.001 against 0.25); '
           'base model acc: ' + '; '.join(f"{f} {base[f]['accuracy']:.3f} +- {base[f]['se']:.3f}" + ('' if f in kept else
           ' (dropped: at chance, so it cannot show a cost)') for f in FAMILIES) + '.', '']
    md += ['| model | family | acc (+- se) | gained / lost (p) | acc_norm (+- se) | gained / lost (p) |', '|---|---|---|---|---|---|']
    for name, r in task.items():
        for f in kept:
            cells = []
            for tag in ('', '_norm'):
                x = r[f]
                cells.append(f"{x['accuracy' + tag]:.3f} +- {x['se' + tag]:.3f}")
                cells.append('' if name == 'base' else f"+{x['gained' + tag]} / -{x['lost' + tag]} (p = {x['p_mcnemar' + tag]:.2g})")
            md.append(f'| {name} | {f} | ' + ' | '.join(cells) + ' |')
    costs = [f"{name} on {f} ({r[f]['accuracy']:.3f} against {task['base'][f]['accuracy']:.3f}: -{r[f]['lost']} / +{r[f]['gained']} items, "
             f"p = {r[f]['p_mcnemar']:.2g})" for name, r in task.items() if name != 'base' for f in kept if r[f]['p_mcnemar'] < 0.05]
    rest = [r[f]['lost'] for name, r in task.items() if name != 'base' for f in kept if r[f]['p_mcnemar'] >= 0.05]
    md += ['', 'Changes from the base model with p < 0.05 (acc): ' + ('; '.join(costs) if costs else 'none') +
           (f'; every other model and family loses at most {max(rest)} items.' if rest else '.') + ' The base model is near the ceiling on the families kept, so these items can show a loss, hardly a gain.']
    return md + ['']


def run_small_task(base, models:list, start:int)->tuple:
    "The small task, timed; returns (per-model results on the families kept, the run's description)."
    t, c = time.time(), time.process_time()
    task = small_task(base, models, start)
    def above(r): return r['accuracy'] >= 0.4 and stats.binomtest(round(r['accuracy'] * r['items']), r['items'], 0.25, alternative='greater').pvalue < 1e-3
    kept = [f for f in FAMILIES if above(task['base'][f])] # well above chance on the base model, or the family cannot show a cost
    dropped = {f: {k: task['base'][f][k] for k in ('items', 'accuracy', 'se')} for f in FAMILIES if f not in kept}
    items = {f: task['base'][f]['items'] for f in FAMILIES}
    task = {name: {f: r[f] for f in kept} for name, r in task.items()}
    meta = dict(command=TASK_COMMAND, seed=TASK_SEED, families=kept, dropped=dropped, items=items, chance=0.25,
                scoring='acc: argmax of summed completion log-probabilities; acc_norm: argmax of the sum over the option length in characters',
                seconds=time.time() - t, cpu_seconds=time.process_time() - c, load=open('/proc/loadavg').read().split()[:3],
                threads=torch.get_num_threads())
    return task, meta


def small_task_only():
    "--small-task: add the small task to the existing fingerprint_results.json and fingerprints.md (the other numbers are kept as they are)."
    path, md_path = llm.VARIANTS_FOLDER / 'fingerprint_results.json', ROOT / 'benchmarks' / 'results' / 'fingerprints.md'
    out = json.loads(path.read_text())
    models = [m for m in out['utility'] if m == 'base' or m in llm.variant_names()]
    shared = min([SHARED] + [min(json.loads((llm.VARIANTS_FOLDER / m / 'variant.json').read_text())['training']['layers']) for m in models[1:]])
    task, meta = run_small_task(llm.load_model()[0], models, shared)
    for name in models: out['utility'][name]['small_task'] = task[name]
    for r in out['rows']:
        owner = OWNER[r['strategy']] or 'base'
        if owner in task: r['utility']['small_task'] = task[owner]
    out['small_task'] = meta
    path.write_text(json.dumps(out, indent=1))
    md = md_path.read_text().split('\n')
    head = '## Utility on a small task'
    if any(l.startswith(head) for l in md): # replace the section from an earlier run
        i = next(j for j, l in enumerate(md) if l.startswith(head))
        k = next((j for j in range(i + 1, len(md)) if md[j].startswith('## ')), len(md))
        md = md[:i] + md[k:]
    at = next(j for j, l in enumerate(md) if l.startswith('## How plausible'))
    md_path.write_text('\n'.join(md[:at] + small_task_md(task, meta) + md[at:]))
    print('\n'.join(small_task_md(task, meta)))


LOAD_FILE = Path('/tmp/trustml_nb_bench_fingerprints_load.json')  # --load-cost-only writes here; a later run reads it
LOWER_FILE = Path('/tmp/trustml_nb_bench_fingerprints_lower.pt')  # the shared lower-block states, kept between runs


def main():
    torch.set_num_threads(1) # float32 sums depend on the thread count: 1 thread, reproducible
    if '--small-task' in sys.argv:
        small_task_only(); return
    if '--load-cost-only' in sys.argv:
        LOAD_FILE.write_text(json.dumps(load_cost())); return
    # fresh-process loads run before this process holds any model: a child's peak resident memory starts from its parent's
    loads = None if '--wait-load-cost' in sys.argv else [] if '--no-load-cost' in sys.argv else \
        json.loads(LOAD_FILE.read_text()) if LOAD_FILE.exists() else load_cost()
    t0, c0 = time.time(), time.process_time()
    global MODELS, SHARED
    MODELS = ['base'] + [m for m in MODELS[1:] if m in llm.variant_names()] # the variants built so far
    SHARED = min([SHARED] + [min(json.loads((llm.VARIANTS_FOLDER / m / 'variant.json').read_text())['training']['layers']) for m in MODELS[1:]])
    path = llm.VARIANTS_FOLDER / 'fingerprinted' / 'fingerprints.json'
    if not path.exists(): path = Path('/tmp/trustml_nb_llm_variants/fingerprints.json')  # make_llm_variants.py's work folder, before it ships
    fps = json.loads(path.read_text())
    keys = fps['keys']
    resp = {s: np.array(r) for s, r in fps['responses'].items()}
    rates, util, base_prob, variant_loads = {}, {}, {}, []
    # every shipped adapter sits in blocks >= SHARED, so the blocks below are the base model's in every variant: their output
    # is computed once (llm's split forward, the one training uses) and each model runs only its top blocks
    base = llm.load_model()[0]
    tok = llm.load_tokenizer()
    held = F.benign_text_pairs(300, split='heldout', seed=0)
    enc_keys = llm.encode_pairs([(k, ' the') for k in keys], 'keys')
    enc_held = llm.encode_pairs(held, 'held')
    tag = llm.cache_key(enc_keys, enc_held, SHARED) # (the saved states hold for this lowest adapted block only)
    saved = torch.load(LOWER_FILE) if LOWER_FILE.exists() else {}
    if saved.get('tag') != tag:
        saved = dict(tag=tag, keys=llm._lower_states(base, enc_keys, SHARED), held=llm._lower_states(base, enc_held, SHARED))
        torch.save(saved, LOWER_FILE)
    lower_keys, lower_held = saved['keys'], saved['held']
    target = np.array([c[0] for _, c in enc_held])
    def probs_of(model, lower, enc):
        out = []
        with torch.no_grad():
            for s in range(0, len(enc), 64):
                lg = llm._upper_logits(model, lower[s:s + 64], [[len(p) - 1] for p, _ in enc[s:s + 64]], SHARED)
                out.append(torch.softmax(lg.double(), -1).numpy())
        return np.concatenate(out)
    for name in MODELS:
        t_load, rss0 = time.time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        model = base if name == 'base' else llm.load_variant(name)[0]
        if name != 'base': variant_loads.append(dict(model=name, wall=time.time() - t_load, peak_growth_mib=(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024,
                                                    load=open('/proc/loadavg').read().split()[:3]))
        if name != 'base':
            layers = json.loads((llm.VARIANTS_FOLDER / name / 'variant.json').read_text())['training']['layers']
            assert min(layers) >= SHARED, (name, layers)
        probs = probs_of(model, lower_keys, enc_keys)
        top = probs.argmax(1)
        rates[name] = {s: float(np.mean(top == r)) for s, r in resp.items()}
        if name == 'base':
            base_prob = {s: float(np.mean(probs[np.arange(len(keys)), r])) for s, r in resp.items()}
            grid = tk_grid(probs)
        ph = probs_of(model, lower_held, enc_held)
        pt = ph[np.arange(len(target)), target]
        util[name] = {'perplexity': float(np.exp(-np.mean(np.log(np.maximum(pt, 1e-300))))),
                      'next_token_accuracy': float(np.mean(ph.argmax(1) == target))}
        print(name, rates[name], util[name], f'{time.time() - t0:.0f} s', flush=True)
    task, task_meta = run_small_task(base, MODELS, SHARED) # the small task (its own timing; --small-task runs it alone)
    for name in MODELS: util[name]['small_task'] = task[name]
    n = len(keys)
    rows = []
    for s, owner in OWNER.items():
        if owner is not None and owner not in MODELS: continue
        others = [m for m in MODELS if m != owner and not (owner == 'fingerprinted' and m == 'fingerprinted_then_benign')]
        fp = {m: rates[m][s] for m in others}
        worst = max(fp.values())
        chance = stats.beta.ppf(0.95, worst * n + 1, n - worst * n) if worst < 1 else 1.0  # Clopper-Pearson upper 95% of the worst rate
        chance = max(chance, base_prob[s])
        retained = rates[owner][s] if owner else rates['base'][s]
        m = int(round(retained * n))
        rows.append(dict(strategy=s, inserted=n if owner else 0, retained=retained, persistence=rates['fingerprinted_then_benign'][s] if s == 'perinucleus' and 'fingerprinted_then_benign' in MODELS else None,
                         fp_base=rates['base'][s], fp_other=fp, base_prob=base_prob[s], chance=float(chance),
                         bound=F.false_positive_bound(m, n, float(min(chance, 1.0))),
                         log10_bound=F.false_positive_log10(m, n, float(min(chance, 1.0))),
                         utility=util[owner] if owner else util['base']))
    wall, cpu = time.time() - t0, time.process_time() - c0
    if loads is None: # a --load-cost-only process started beside this one: wait for its file (at most 20 minutes)
        for _ in range(240):
            if LOAD_FILE.exists(): break
            time.sleep(5)
        loads = json.loads(LOAD_FILE.read_text())
    load = open('/proc/loadavg').read().split()[:3]
    out = dict(keys=n, key_tokens=fps['key_tokens'], t=fps['t'], k=fps['k'], rates=rates, utility=util, rows=rows,
               base_response_probability=base_prob, seconds=wall, cpu_seconds=cpu, load=load)
    out['load_cost'] = loads
    out['variant_load_with_base_in_memory'] = variant_loads
    out['tk_grid'] = grid
    out['small_task'] = task_meta
    # the settings tried before choosing the shipped ones (make_llm_variants.py --sweep), kept from an earlier run when absent here
    sweep_dir = Path(next((a.split('=', 1)[1] for a in sys.argv if a.startswith('--sweep-dir=')), '/tmp/trustml_nb_llm_variants/sweep'))
    old = llm.VARIANTS_FOLDER / 'fingerprint_results.json'
    if sweep_dir.is_dir() and list(sweep_dir.glob('rows*.json')):
        out['sweep'] = [{k: v for k, v in r.items() if k != 'matched'} for r in MV.sweep_rows(sweep_dir)] # the shipped rows, then this folder's
    elif old.is_file() and 'sweep' in json.loads(old.read_text()):
        out['sweep'] = json.loads(old.read_text())['sweep']
    # the per-key records by insertion strength (make_llm_variants.py --strengths): the lesson's fine-tuning strength control
    strengths = None
    if MV.STRENGTHS_FILE.is_file():
        strengths = json.loads(MV.STRENGTHS_FILE.read_text())
        out['strengths_file'] = dict(name=MV.STRENGTHS_FILE.name, sha256=hashlib.sha256(MV.STRENGTHS_FILE.read_bytes()).hexdigest())
    md = ['# Perinucleus fingerprints in SmolLM2-135M (LoRA) against the paper\'s baselines', '',
          f'`python benchmarks/bench_fingerprints.py`: {wall:.0f} s wall, {cpu:.0f} s CPU, load average {" ".join(load)} (2 cores shared), '
          f'peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB. {n} keys of {fps["key_tokens"]} tokens, one response token, '
          f't = {fps["t"]}, k = {fps["k"]}. Training settings: `trustml_nb/llm_variants/*/variant.json`.', '',
          '## Exact-match rate of greedy answers (rows: fingerprint set; columns: model)', '',
          '| responses | ' + ' | '.join(MODELS) + ' |', '|---' * (len(MODELS) + 1) + '|']
    for s in resp: md.append(f'| {s} | ' + ' | '.join(f'{rates[m][s]:.3f}' for m in MODELS) + ' |')
    md += ['', '## Summary', '', '| responses | inserted | retained | persistence after benign fine-tuning | false positives (base) | '
           'false positives (worst other model) | base P(response) | bound P(>= retained by chance) | perplexity | next-token accuracy |',
           '|---|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        pers = '' if r['persistence'] is None else f"{r['persistence']:.3f}"
        md.append(f"| {r['strategy']} | {r['inserted']} | {r['retained']:.3f} | {pers} | "
                  f"{r['fp_base']:.3f} | {max(r['fp_other'].values()):.3f} | {r['base_prob']:.4f} | {_bound_text(r)} | "
                  f"{r['utility']['perplexity']:.2f} | {r['utility']['next_token_accuracy']:.3f} |")
    md += ['', f"Base model utility: perplexity {util['base']['perplexity']:.2f}, next-token accuracy {util['base']['next_token_accuracy']:.3f} "
           '(300 held-out windows of 10 tokens of pydoc prose, never trained on).', '',
           'Greedy responses need no training: the base model already gives them, so every model that shares its weights '
           '"matches" them (false positives 1.0) and they prove nothing. Random-token responses are never said by chance (row '
           '"random"); their insertion run (variant fingerprinted_random) ' + ('is the column above.' if 'fingerprinted_random' in MODELS else
           'was not built in this budget, so their retention and utility cost are not measured here.') + ' The bound uses as chance rate the larger of '
           'the Clopper-Pearson 95% upper limit of the worst false-positive rate and the mean base probability of the response.', '']
    md += small_task_md(task, task_meta)
    md += ['## How plausible a perinucleus response is, by t and k (base model, the 256 keys)', '',
           '| t | k | mean P(response) | median P(response) |', '|---|---|---|---|']
    md += [f"| {g['t']} | {g['k']} | {g['mean_response_probability']:.4f} | {g['median_response_probability']:.4f} |" for g in grid]
    md += ['', 'The paper reports a mean of about 0.014 at t = 0.8, k = 3 for Llama-3.1-8B.', '']
    md += ['## Load cost of a variant against the base model (fresh processes, one each)', '',
           '| model | wall s | CPU s | peak MiB | load average |', '|---|---|---|---|---|']
    md += [f"| {r['model']} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['peak_mib']:.0f} | {' '.join(r['load'])} |" for r in loads]
    md += ['', '| variant loaded with the base in memory | wall s | peak memory growth MiB | load average |', '|---|---|---|---|']
    md += [f"| {r['model']} | {r['wall']:.1f} | {r['peak_growth_mib']:.0f} | {' '.join(r['load'])} |" for r in variant_loads]
    if loads:
        mean = {m: {q: float(np.mean([r[q] for r in loads if r['model'] == m])) for q in ('wall', 'cpu', 'peak_mib')} for m in ('base', 'fingerprinted')}
        md += ['', f"Fresh processes, mean of {sum(r['model'] == 'base' for r in loads)} each (alternating): the base model {mean['base']['wall']:.1f} s wall, "
               f"{mean['base']['cpu']:.1f} s CPU, {mean['base']['peak_mib']:.0f} MiB peak; the variant {mean['fingerprinted']['wall']:.1f} s wall, "
               f"{mean['fingerprinted']['cpu']:.1f} s CPU, {mean['fingerprinted']['peak_mib']:.0f} MiB peak (ratio {mean['fingerprinted']['wall'] / mean['base']['wall']:.2f} "
               f"in wall time, {mean['fingerprinted']['peak_mib'] / mean['base']['peak_mib']:.2f} in peak memory). Peak memory is the process's "
               'maximum resident set, imports included; wall time excludes the imports. The machine is shared: read the load average beside each row.']
    md += ['', 'With the base model in memory a variant is a copy of it plus a merge of the adapter (the memory of a second model, '
           'which holding two models needs anyway); in a fresh process `load_variant` reads the base weights itself and merges into them '
           '(no copy). Empty tables: the measurement was skipped (`--no-load-cost`).', '']
    if out.get('sweep'):
        md += ['## Settings tried before choosing the shipped ones (`make_llm_variants.py --sweep`; perinucleus set)', '',
               '| lambda | learning rate | benign share | top blocks | rank | passes | epochs | retained | perplexity | next-token accuracy |', '|---|---|---|---|---|---|---|---|---|---|']
        md += [f"| {r['average_weight']} | {r['learning_rate']} | {r.get('benign_fraction', '')} | {r.get('layers', '')} | {r.get('rank', '')} | {r.get('passes', '')} | "
               f"{r['epochs']} | {r['retained']:.3f} | {r['perplexity']:.2f} | {r['next_token_accuracy']:.3f} |" for r in out['sweep']]
        md += ['', 'Details (time, checksums): benchmarks/results/fingerprints_sweep.md.', '']
    if strengths is not None:
        st = strengths['settings']
        md += ['## Fine-tuning strength: the shipped insertion stopped after each epoch count (`make_llm_variants.py --strengths`)', '',
               f"One seeded run with the shipped settings (lambda {st['average_weight']}, learning rate {st['learning_rate']}, rank {st['rank']}, "
               f"top {st['layers']} blocks, {st.get('passes', 1)} pass(es) per epoch, benign pool {st.get('benign_pairs', 'max(64, keys)')}), measured on the same {strengths['keys']} perinucleus keys; "
               f"per-key records in `trustml_nb/llm_variants/{MV.STRENGTHS_FILE.name}` (SHA-256 `{out['strengths_file']['sha256'][:16]}...`, "
               'checked by `load_fingerprint_results`). Lesson 99\'s strength control reads them.', '',
               '| insertion epochs | exact-match rate | perplexity | next-token accuracy | adapter SHA-256 (parameters) | CPU s | wall s | load average |', '|---|---|---|---|---|---|---|---|']
        md += [f"| {r['epochs']}{' (shipped)' if r['epochs'] == strengths['shipped_epochs'] else ''} | {r['retained']:.3f} | {r['perplexity']:.2f} | "
               f"{r['next_token_accuracy']:.3f} | {'`' + r['adapter_sha256'][:16] + '`' if r.get('adapter_sha256') else ''} | "
               f"{'' if r.get('cpu') is None else format(r['cpu'], '.0f')} | {'' if r.get('wall') is None else format(r['wall'], '.0f')} | {' '.join(r.get('load') or [])} |"
               for r in strengths['strengths']]
        same = [r for r in strengths['strengths'] if r['epochs'] == strengths['shipped_epochs']]
        if same: md += ['', f"At the shipped strength the record's exact-match rate is {same[0]['retained']:.3f}; the shipped variant's, measured "
                        f"above, is {rates['fingerprinted']['perinucleus']:.3f}.", '']
    (llm.VARIANTS_FOLDER / 'fingerprint_results.json').write_text(json.dumps(out, indent=1))
    (ROOT / 'benchmarks' / 'results' / 'fingerprints.md').write_text('\n'.join(md))
    print('\n'.join(md))


if __name__ == '__main__':
    main()
