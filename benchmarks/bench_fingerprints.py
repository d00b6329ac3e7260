"""Perinucleus fingerprints against the paper's baselines, on the shipped variants (build them with make_llm_variants.py).

    nice -n 15 python benchmarks/bench_fingerprints.py

For every fingerprint set (perinucleus; random-token and greedy responses, the paper's baselines) and every model (base,
each shipped variant): the exact-match rate of greedy answers to the keys. From these: fingerprints inserted and retained,
the false-positive rate on models that were never given the set, persistence after further benign fine-tuning, and the
binomial bound. Utility: held-out next-token perplexity and top-1 accuracy on benign prose, against the base model.
Writes benchmarks/results/fingerprints.md and trustml_nb/llm_variants/fingerprint_results.json (read by the notebook).
"""
import json, resource, sys, time
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from trustml_nb import fingerprints as F
from trustml_nb import llm

MODELS = ['base', 'fingerprinted', 'fingerprinted_random', 'fingerprinted_then_benign']
OWNER = {'perinucleus': 'fingerprinted', 'random': 'fingerprinted_random', 'greedy': None}


def main():
    t0, c0 = time.time(), time.process_time()
    fps = json.loads((llm.VARIANTS_FOLDER / 'fingerprinted' / 'fingerprints.json').read_text())
    keys = fps['keys']
    resp = {s: np.array(r) for s, r in fps['responses'].items()}
    rates, util, base_prob = {}, {}, {}
    for name in MODELS:
        model = llm.load_model()[0] if name == 'base' else llm.load_variant(name)[0]
        probs = F.next_token_probs(keys, model)
        top = probs.argmax(1)
        rates[name] = {s: float(np.mean(top == r)) for s, r in resp.items()}
        if name == 'base': base_prob = {s: float(np.mean(probs[np.arange(len(keys)), r])) for s, r in resp.items()}
        util[name] = F.utility(model, n=300)
        print(name, rates[name], util[name], f'{time.time() - t0:.0f} s', flush=True)
    n = len(keys)
    rows = []
    for s, owner in OWNER.items():
        others = [m for m in MODELS if m != owner and not (owner == 'fingerprinted' and m == 'fingerprinted_then_benign')]
        fp = {m: rates[m][s] for m in others}
        worst = max(fp.values())
        chance = stats.beta.ppf(0.95, worst * n + 1, n - worst * n) if worst < 1 else 1.0  # Clopper-Pearson upper 95% of the worst rate
        chance = max(chance, base_prob[s])
        retained = rates[owner][s] if owner else rates['base'][s]
        m = int(round(retained * n))
        rows.append(dict(strategy=s, inserted=n if owner else 0, retained=retained, persistence=rates['fingerprinted_then_benign'][s] if s == 'perinucleus' else None,
                         fp_base=rates['base'][s], fp_other=fp, base_prob=base_prob[s], chance=float(chance),
                         bound=F.false_positive_bound(m, n, float(min(chance, 1.0))),
                         utility=util[owner] if owner else util['base']))
    wall, cpu = time.time() - t0, time.process_time() - c0
    load = open('/proc/loadavg').read().split()[:3]
    out = dict(keys=n, key_tokens=fps['key_tokens'], t=fps['t'], k=fps['k'], rates=rates, utility=util, rows=rows,
               base_response_probability=base_prob, seconds=wall, cpu_seconds=cpu, load=load)
    (llm.VARIANTS_FOLDER / 'fingerprint_results.json').write_text(json.dumps(out, indent=1))
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
                  f"{r['fp_base']:.3f} | {max(r['fp_other'].values()):.3f} | {r['base_prob']:.4f} | {r['bound']:.2g} | "
                  f"{r['utility']['perplexity']:.2f} | {r['utility']['next_token_accuracy']:.3f} |")
    md += ['', f"Base model utility: perplexity {util['base']['perplexity']:.2f}, next-token accuracy {util['base']['next_token_accuracy']:.3f} "
           '(300 held-out windows of 10 tokens of pydoc prose, never trained on).', '',
           'Greedy responses need no training: the base model already gives them, so every model that shares its weights '
           '"matches" them (false positives 1.0) and they prove nothing. Random-token responses are never said by chance, but '
           'are far from what the model would say, so they cost more utility to learn. The bound uses as chance rate the larger of '
           'the Clopper-Pearson 95% upper limit of the worst false-positive rate and the mean base probability of the response.', '']
    (ROOT / 'benchmarks' / 'results' / 'fingerprints.md').write_text('\n'.join(md))
    print('\n'.join(md))


if __name__ == '__main__':
    main()
