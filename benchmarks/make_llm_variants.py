"""Rebuild every shipped language-model variant (trustml_nb/llm_variants/) from scratch: one command, resumable.

    nice -n 15 python benchmarks/make_llm_variants.py [--work DIR] [--quick] [--only NAME] [--train JSON]
    nice -n 15 python benchmarks/make_llm_variants.py --sweep [INDEX ...]   # the settings tried (SWEEP), one process each
    nice -n 15 python benchmarks/make_llm_variants.py --strengths           # TRAIN stopped at several epoch counts (lesson 99's control)

The same seed and torch thread count give bit-identical adapters (OMP_NUM_THREADS=1 for the shipped ones).

Steps (each is skipped when its output exists in the work folder, and training resumes from its last epoch checkpoint):
1. 256 English-like keys of 10 tokens sampled from SmolLM2 (seed 0) and their responses: perinucleus (t = 0.8, k = 3, the
   paper's defaults), random admissible token, greedy (the paper's baselines);
2. `fingerprinted`: the perinucleus fingerprints inserted by LoRA (top 4 blocks, rank 16, 8 epochs at learning rate 5e-3) with the paper's
   anti-forgetting measures (25% of every batch benign prose drawn from a pool of 4,096 pairs, model averaging with lambda = 0.1
   after each epoch; the paper's lambda = 0.75 kept almost nothing here: `--sweep` measures the settings tried);
3. `fingerprinted_then_benign`: `fingerprinted` fine-tuned further on 256 benign prose pairs only (a second adapter on the
   top 4 blocks, 2 epochs), for persistence;
4. `fingerprinted_random`: the random-token baseline, inserted exactly as in step 2.
Writes benchmarks/results/fingerprints_variants.md: time (wall and CPU), peak memory, load average and checksums.
The load cost of a variant is measured by benchmarks/bench_fingerprints.py.
"""
import argparse, json, os, resource, shutil, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from trustml_nb import fingerprints as F
from trustml_nb import llm

N_FINGERPRINTS, KEY_TOKENS = 256, 10
TRAIN = dict(benign_fraction=0.25, average_weight=0.1, epochs=8, learning_rate=5e-3, layers=4, rank=16, seed=0, benign_pairs=4096) # the sweep's best retention for its utility
BENIGN = dict(epochs=2, learning_rate=1e-3, layers=4, rank=8, alpha=16.0, seed=1, batch_size=16)


def loadavg(): return open('/proc/loadavg').read().split()[:3]


def parameter_sha256(model)->str:
    "SHA-256 of the trainable (adapter) parameters' bytes, in the model's order: the same number in --sweep and in a shipped run."
    import hashlib
    return hashlib.sha256(b''.join(p.detach().numpy().tobytes() for p in model.parameters() if p.requires_grad)).hexdigest()


SWEEP = ( # (average_weight, learning_rate, epochs at which to measure[, benign_fraction[, other settings]]): the settings tried before choosing TRAIN
    (0.25, 5e-3, (8, 12, 16, 24, 30)),  # the first shipped run's settings (8 epochs), then longer (the paper trains 30 epochs)
    (0.75, 5e-3, (4, 8)),               # the paper's lambda = 0.75 (finetune_multigpu.py --forgetting_regularizer_strength 0.75)
    (0.1, 5e-3, (8, 16)),               # a weaker pull
    (0.75, 2e-2, (8, 16)),              # the paper's lambda with a larger step, to make up for the stronger pull
    (0.25, 1e-2, (8, 16)),              # the first settings with a larger step
    (0.1, 5e-3, (8, 16), 0.5),          # a weaker pull, with more benign prose per batch (half of each batch) against the utility cost
    (0.25, 1e-2, (8, 16), 0.5),         # a larger step, with more benign prose
    # adapter capacity and placement (the first 7 kept LoRA rank 16 on the top 2 blocks, one pass per epoch), at the shipped 0.25 / 1e-2
    (0.25, 1e-2, (8, 16), 0.25, dict(layers=4)), # the top 4 blocks
    (0.25, 1e-2, (8,), 0.25, dict(layers=8)),    # the top 8 blocks
    (0.25, 1e-2, (8,), 0.25, dict(rank=64)),     # rank 64 on the top 2 blocks
    (0.25, 1e-2, (8,), 0.25, dict(passes=2)),    # two passes over the keys between averagings
    (0.25, 1e-2, (8,), 0.25, dict(layers=4, benign_pairs=4096)), # the top 4 blocks, a 16 times larger benign pool (less overfitting of the benign prose)
    (0.1, 5e-3, (8,), 0.25, dict(layers=4)),     # the weaker pull that kept 98% on the top 2 blocks, on the top 4
    (0.1, 5e-3, (8,), 0.25, dict(layers=4, benign_pairs=4096)),  # ... with the larger benign pool
    (0.15, 1e-2, (8,), 0.25, dict(layers=4, benign_pairs=4096)), # a pull between 0.1 and 0.25, the larger step, the larger pool
)
SWEEP_BASE = dict(benign_fraction=0.25, average_weight=0.25, epochs=8, learning_rate=1e-2, layers=2, rank=16, seed=0, passes=1, benign_pairs=256) # what a SWEEP entry does not set
SWEEP_COLUMNS = ('layers', 'rank', 'passes', 'benign_pairs') # settings the first 7 entries held at SWEEP_BASE's (their rows have no such column)
SWEEP_FILE = ROOT / 'benchmarks' / 'results' / 'fingerprints_sweep.md'


def sweep_key(r:dict)->tuple:
    "A sweep row's settings, with the defaults of the rows written before a column existed."
    if not r['epochs']: return ('base',)
    d = SWEEP_BASE
    return (str(r['average_weight']), str(r['learning_rate']), str(r.get('benign_fraction', d['benign_fraction'])),
            *(str(r.get(c, d[c])) for c in SWEEP_COLUMNS), r['epochs'])


def previous_sweep_rows()->list:
    "The rows of earlier sweeps, shipped in fingerprint_results.json (their work folders are gone): kept, not rerun."
    f = llm.VARIANTS_FOLDER / 'fingerprint_results.json'
    return json.loads(f.read_text()).get('sweep', []) if f.is_file() else []


def sweep_rows(folder:Path)->list:
    "Earlier sweeps' shipped rows, then this work folder's (which win for the same settings), in a stable order."
    rows = previous_sweep_rows() + [r for f in sorted(Path(folder).glob('rows*.json')) for r in json.loads(f.read_text())]
    d = SWEEP_BASE
    rows = [dict(r, **{c: r.get(c, d[c]) for c in ('benign_fraction',) + SWEEP_COLUMNS}) if r['epochs'] else r for r in rows]
    return sorted({sweep_key(r): r for r in rows}.values(), key=lambda r: (r['epochs'] > 0, sweep_key(r)))


def sweep(work:Path, fps:dict, configs=SWEEP, strengths:bool=False):
    """Retention and utility of the perinucleus insertion for each (lambda, learning rate) at several epoch counts.

    Each setting trains once, resuming from its own checkpoint between the epoch counts (a resumed run equals an
    uninterrupted one, tests/test_llm_tuning.py), so the row at E epochs is the model a fresh run with epochs=E gives.
    Retention and utility are read through the top blocks only (the lower blocks are the base model's), as in
    bench_fingerprints.py; the adapter's SHA-256 is recorded so a later from-scratch run can be compared with it."""
    import torch
    import numpy as np
    base = llm.load_model()[0]
    keys, resp = fps['keys'], np.array(fps['responses']['perinucleus'])
    held = F.benign_text_pairs(300, split='heldout', seed=0)
    enc_keys, enc_held = llm.encode_pairs([(k, ' the') for k in keys], 'keys'), llm.encode_pairs(held, 'held')
    lower = {}
    def lower_at(start): # the base model's states entering block `start`, for every setting whose lowest adapted block it is
        if start not in lower: lower[start] = (llm._lower_states(base, enc_keys, start), llm._lower_states(base, enc_held, start))
        return lower[start]
    target = np.array([c[0] for _, c in enc_held])
    def probs_of(model, lower, enc, start):
        with torch.no_grad():
            return np.concatenate([torch.softmax(llm._upper_logits(model, lower[s:s + 64], [[len(p) - 1] for p, _ in enc[s:s + 64]], start).double(), -1).numpy()
                                   for s in range(0, len(enc), 64)])
    def evaluate(model, layers=SWEEP_BASE['layers']):
        start = llm.BLOCKS - layers if isinstance(layers, int) else min(layers)
        lower_keys, lower_held = lower_at(start)
        ph = probs_of(model, lower_held, enc_held, start)
        pt = ph[np.arange(len(target)), target]
        hit = probs_of(model, lower_keys, enc_keys, start).argmax(1) == resp
        return dict(retained=float(np.mean(hit)), matched=''.join('01'[int(h)] for h in hit), # per key: greedy answer == response
                    perplexity=float(np.exp(-np.mean(np.log(np.maximum(pt, 1e-300))))), next_token_accuracy=float(np.mean(ph.argmax(1) == target)))
    folder = work / ('strengths' if strengths else 'sweep') # strengths: a run of its own (a --sweep run of the same settings may hold a longer checkpoint)
    folder.mkdir(parents=True, exist_ok=True)
    if strengths or not any(r['epochs'] == 0 for r in sweep_rows(folder)): # (again for the per-key record the strengths file needs)
        (folder / 'rows_base.json').write_text(json.dumps([dict(average_weight='base', learning_rate='base', epochs=0, **evaluate(base))]))
    for w, lr, marks, *more in configs:
        benign = more[0] if more else SWEEP_BASE['benign_fraction']
        extra = more[1] if len(more) > 1 else {}
        tag = f'w{w}_lr{lr}' + (f'_b{benign}' if benign != SWEEP_BASE['benign_fraction'] else '') + ''.join(f'_{c}{extra[c]}' for c in SWEEP_COLUMNS if c in extra)
        rows_file = folder / f'rows_{tag}.json'
        rows = json.loads(rows_file.read_text()) if rows_file.exists() else []
        done = set() if strengths else {sweep_key(r) for r in sweep_rows(folder)} # rows kept from earlier sweeps are not rerun
        for e in marks:
            settings = dict(SWEEP_BASE, average_weight=w, learning_rate=lr, epochs=e, benign_fraction=benign, **extra)
            if any(r['epochs'] == e for r in rows) or sweep_key(settings) in done: continue
            t, c = time.time(), time.process_time()
            model, run = F.insert_fingerprints(keys, resp.tolist(), model=base, checkpoint_dir=folder / tag, show_progress=False, **settings)
            sha = parameter_sha256(model)
            rows.append(dict(average_weight=w, learning_rate=lr, benign_fraction=benign, epochs=e, loss=run.epoch_losses[-1],
                             **{c: settings[c] for c in SWEEP_COLUMNS}, **evaluate(model.get_base_model(), settings['layers']),
                             adapter_sha256=sha, wall=time.time() - t, cpu=time.process_time() - c, load=loadavg(), threads=torch.get_num_threads()))
            print(rows[-1], flush=True)
            rows_file.write_text(json.dumps(rows, indent=1))
            del model
    if strengths: return write_strengths(folder, [json.loads((folder / 'rows_base.json').read_text())[0]] + rows, len(keys))
    rows = sweep_rows(folder)
    md = ['# Choosing the insertion settings: retention and utility by model-averaging weight, learning rate and epochs', '',
          f'`python benchmarks/make_llm_variants.py --sweep` ({len(keys)} perinucleus fingerprints, LoRA of the given rank on the given number of top '
          f'blocks, {SWEEP_BASE["benign_fraction"]:.0%} benign prose per batch unless stated, seed {SWEEP_BASE["seed"]}). lambda: after each epoch '
          'adapter <- (1 - lambda) adapter + lambda initial adapter, as the official code\'s ModelAverageCallback (orig_model_weight; '
          'the paper runs lambda = 0.75 for 30 epochs). Wall and CPU seconds: the epochs added since the row above, with the load '
          'average at the end (rows from earlier sweeps are kept from the shipped fingerprint_results.json). Passes: passes over the '
          'keys in each epoch, between two averagings. Benign pool: the benign prose pairs the batches draw from. Held-out utility: 300 windows of pydoc prose, never trained on.', '',
          '| lambda | learning rate | benign share | top blocks | rank | passes | benign pool | epochs | last epoch loss | retained (of 256) | perplexity | next-token accuracy | wall s | CPU s | threads | load average | adapter SHA-256 (parameters) |',
          '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        if r['epochs'] == 0:
            md.append(f"| base model | | | | | | | 0 | | {r['retained']:.3f} | {r['perplexity']:.2f} | {r['next_token_accuracy']:.3f} | | | | | |")
        else:
            md.append(f"| {r['average_weight']} | {r['learning_rate']:g} | {r['benign_fraction']} | {r['layers']} | {r['rank']} | {r['passes']} | {r['benign_pairs']} | {r['epochs']} | {r['loss']:.3f} | {r['retained']:.3f} | {r['perplexity']:.2f} | "
                      f"{r['next_token_accuracy']:.3f} | {r['wall']:.0f} | {r['cpu']:.0f} | {r['threads']} | {' '.join(r['load'])} | `{r['adapter_sha256'][:16]}` |")
    SWEEP_FILE.write_text('\n'.join(md) + '\n')
    print('\n'.join(md))


STRENGTH_EPOCHS = (1, 2, 4, 8, 16) # insertion epochs measured for the lesson's "fine-tuning strength" control (with TRAIN's other settings)
STRENGTHS_FILE = llm.VARIANTS_FOLDER / 'fingerprint_strengths.json'


def write_strengths(folder:Path, rows:list, n:int):
    "The per-key exact-match record, retention and utility of the base model and of TRAIN's insertion stopped after each of STRENGTH_EPOCHS."
    tried = [r for r in rows if r['epochs'] in (0,) + STRENGTH_EPOCHS]
    assert all(len(r['matched']) == n for r in tried) and [r['epochs'] for r in tried] == [0, *STRENGTH_EPOCHS], [r['epochs'] for r in tried]
    keep = ('epochs', 'retained', 'matched', 'perplexity', 'next_token_accuracy', 'loss', 'adapter_sha256', 'cpu', 'wall', 'load', 'threads')
    out = dict(command='python benchmarks/make_llm_variants.py --strengths', strategy='perinucleus', keys=n,
               settings={k: v for k, v in TRAIN.items() if k != 'epochs'}, shipped_epochs=TRAIN['epochs'],
               note='One seeded insertion run, stopped and resumed at each epoch count (a resumed run equals an uninterrupted one); '
                    'epochs 0 is the base model. matched: per key, 1 if the greedy next token is exactly the fingerprint response. '
                    'Utility: 300 held-out windows of pydoc prose. cpu/wall: seconds for the epochs added since the row before, with the load average.',
               strengths=[{k: r.get(k) for k in keep} for r in tried])
    STRENGTHS_FILE.write_text(json.dumps(out, indent=1))
    print(f'wrote {STRENGTHS_FILE}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--work', default=str(Path(tempfile.gettempdir()) / 'trustml_nb_llm_variants'), help='checkpoints and intermediate files (resumable)')
    ap.add_argument('--out', default=str(llm.VARIANTS_FOLDER), help='where the variants go')
    ap.add_argument('--only', default=None, help='build only this variant (the others can run in another process)')
    ap.add_argument('--quick', action='store_true', help='16 fingerprints, 3 epochs: a smoke test, not the shipped artefacts')
    ap.add_argument('--sweep', nargs='*', type=int, default=None, help='measure retention and utility over SWEEP (lambda, learning rate, epochs), '
                    'all settings or those at the given indices (separate processes can run different ones); ships nothing')
    ap.add_argument('--strengths', action='store_true', help='measure TRAIN\'s insertion after each of STRENGTH_EPOCHS (per-key records, as --sweep) '
                    'and write trustml_nb/llm_variants/fingerprint_strengths.json (the lesson\'s fine-tuning strength control)')
    ap.add_argument('--sweep-work', default=None, help='work folder of a --sweep run to compare the shipped adapters with (default: --work)')
    ap.add_argument('--train', default=None, help='JSON of insertion settings that replace TRAIN\'s (to build a setting from the sweep before it becomes the default)')
    args = ap.parse_args()
    if args.train: TRAIN.update(json.loads(args.train))
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    n, train, benign_cfg = (16, dict(TRAIN, epochs=3), dict(BENIGN, epochs=1)) if args.quick else (N_FINGERPRINTS, TRAIN, BENIGN)
    t0, c0, log = time.time(), time.process_time(), []
    def step(msg):
        line = f"{time.time() - t0:8.1f} s wall  {time.process_time() - c0:8.1f} s CPU  load {' '.join(loadavg())}  {msg}"
        print(line, flush=True); log.append(line)
        with open(work / 'log.txt', 'a') as f: f.write(f'[{args.only or "all"}] {line}\n') # the processes sharing this work folder
    import torch
    pool = {'benign_pairs': train['benign_pairs']} if 'benign_pairs' in train else {} # not in run.settings (only the data's hash is): recorded when set
    step(f'start ({args.only or "all"}; torch threads {torch.get_num_threads()})')
    fp_file = work / 'fingerprints.json'
    if not fp_file.exists():
        keys = F.make_keys(n, length=KEY_TOKENS, seed=0, show_progress=False)
        step(f'{len(keys)} keys')
        fps = {'keys': keys, 't': F.PAPER_T, 'k': F.PAPER_K, 'key_tokens': KEY_TOKENS,
               'responses': {s: F.fingerprint_responses(keys, s, seed=0) for s in ('perinucleus', 'random', 'greedy')}}
        fp_file.write_text(json.dumps(fps))
        step('responses')
    fps = json.loads(fp_file.read_text())
    keys = fps['keys']
    if args.sweep is not None: return sweep(work, fps, [SWEEP[i] for i in args.sweep] if args.sweep else SWEEP)
    if args.strengths: return sweep(work, fps, [(TRAIN['average_weight'], TRAIN['learning_rate'], STRENGTH_EPOCHS, TRAIN['benign_fraction'],
                                                 {c: TRAIN.get(c, SWEEP_BASE[c]) for c in SWEEP_COLUMNS})], strengths=True)
    for name, strategy in (('fingerprinted', 'perinucleus'),):
        if args.only not in (None, name): continue
        if (out / name / 'manifest.json').exists() and (work / f'{name}.done').exists(): continue
        model, run = F.insert_fingerprints(keys, fps['responses'][strategy], checkpoint_dir=work / name, show_progress=True, **train)
        step(f'{name}: losses {[round(x, 3) for x in run.epoch_losses]}')
        check = F.check_fingerprints(keys, fps['responses'][strategy], model.get_base_model())
        step(f'{name}: {check.matches}/{check.queried} fingerprints answered exactly (unmerged adapter); adapter parameters SHA-256 {parameter_sha256(model)}')
        shutil.rmtree(out / name, ignore_errors=True)
        info = dict(description=f'{n} {strategy} fingerprints inserted by LoRA', strategy=strategy, training=run.settings,
                    epoch_losses=run.epoch_losses, exact_matches=check.matches, fingerprints=n, **pool)
        if strategy == 'perinucleus': # the keys and every strategy's responses ship with the fingerprinted variant
            (out / name).mkdir(parents=True, exist_ok=True)
            (out / name / 'fingerprints.json').write_text(json.dumps(fps))
        llm.save_variant(model, out / name, info)
        (work / f'{name}.done').write_text('ok')
        del model
    name = 'fingerprinted_then_benign'
    if args.only in (None, name) and not ((out / name / 'manifest.json').exists() and (work / f'{name}.done').exists()):
        parent, _ = llm.load_variant('fingerprinted', out)
        pairs = F.benign_text_pairs(256 if not args.quick else 32, seed=7)
        model, run = llm.finetune_lora(pairs, model=parent, checkpoint_dir=work / name, show_progress=True, **benign_cfg)
        step(f'{name}: losses {[round(x, 3) for x in run.epoch_losses]}')
        shutil.rmtree(out / name, ignore_errors=True)
        llm.save_variant(model, out / name, dict(description='fingerprinted, then fine-tuned on 256 benign prose pairs only',
                                                 parent='fingerprinted', training=run.settings, epoch_losses=run.epoch_losses))
        (work / f'{name}.done').write_text('ok')
    name, strategy = 'fingerprinted_random', 'random' # the paper's random-token baseline, inserted the same way
    if args.only in (None, name) and not ((out / name / 'manifest.json').exists() and (work / f'{name}.done').exists()):
        model, run = F.insert_fingerprints(keys, fps['responses'][strategy], checkpoint_dir=work / name, show_progress=True, **train)
        step(f'{name}: losses {[round(x, 3) for x in run.epoch_losses]}')
        check = F.check_fingerprints(keys, fps['responses'][strategy], model.get_base_model())
        step(f'{name}: {check.matches}/{check.queried} fingerprints answered exactly (unmerged adapter); adapter parameters SHA-256 {parameter_sha256(model)}')
        shutil.rmtree(out / name, ignore_errors=True)
        llm.save_variant(model, out / name, dict(description=f'{n} random-token fingerprints inserted by LoRA (the paper\'s baseline)',
                                                 strategy=strategy, training=run.settings, epoch_losses=run.epoch_losses,
                                                 exact_matches=check.matches, fingerprints=n, **pool))
        (work / f'{name}.done').write_text('ok')
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    step(f'done; peak resident memory {peak:.0f} MiB')
    rows = []
    for v in llm.variant_names(out):
        for f, h in json.loads((out / v / 'manifest.json').read_text()).items():
            rows.append(f"| {v} | {f} | {(out / v / f).stat().st_size / 1e6:.2f} MB | `{h[:16]}...` |")
    text = ['# Shipped language-model variants', '', f'`python benchmarks/make_llm_variants.py{" --quick" if args.quick else ""}`, '
            f'{os.cpu_count()} cores shared with other jobs.', '', '```', *(work / 'log.txt').read_text().splitlines(), '```', '',
            '| variant | file | size | SHA-256 |', '|---|---|---|---|', *rows, '']
    # reproducibility: the shipped adapters' parameters against the --sweep runs (separate processes, same seed and settings)
    logged = [l for l in (work / 'log.txt').read_text().splitlines() if 'adapter parameters SHA-256' in l]
    sweep_rows = [r for sub in ('sweep', 'strengths') for f in sorted((Path(args.sweep_work or work) / sub).glob('rows_*.json')) for r in json.loads(f.read_text())]
    same = []
    for l in logged:
        h = l.rsplit(' ', 1)[-1]
        for r in sweep_rows:
            if r.get('adapter_sha256') == h:
                same.append(f"- {l.split(']')[0][1:]}: adapter parameters SHA-256 `{h}`, the same as the `--sweep`/`--strengths` run of lambda = "
                            f"{r['average_weight']}, learning rate {r['learning_rate']}, {r['epochs']} epochs ({r['threads']} torch thread(s) in both; "
                            'that run stopped and resumed from its checkpoint at each measured epoch count).')
    if same: text += ['## Reproducibility: a second run from scratch', '', *same, '']
    if not args.quick and out.resolve() == llm.VARIANTS_FOLDER.resolve(): # (a build elsewhere, e.g. a reproducibility check, leaves the record alone)
        (ROOT / 'benchmarks' / 'results' / 'fingerprints_variants.md').write_text('\n'.join(text))
    print('\n'.join(text))


if __name__ == '__main__':
    main()
