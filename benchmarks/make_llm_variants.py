"""Rebuild every shipped language-model variant (trustml_nb/llm_variants/) from scratch: one command, resumable.

    nice -n 15 python benchmarks/make_llm_variants.py [--work DIR] [--quick]

Steps (each is skipped when its output exists in the work folder, and training resumes from its last epoch checkpoint):
1. 256 English-like keys of 10 tokens sampled from SmolLM2 (seed 0) and their responses: perinucleus (t = 0.8, k = 3, the
   paper's defaults), random admissible token, greedy (the paper's baselines);
2. `fingerprinted`: the perinucleus fingerprints inserted by LoRA (top 2 blocks, rank 16, 8 epochs: a small CPU budget) with
   the paper's anti-forgetting measures (25% benign prose in every batch, model averaging with lambda = 0.25 after each epoch);
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
TRAIN = dict(benign_fraction=0.25, average_weight=0.25, epochs=8, learning_rate=5e-3, layers=2, rank=16, seed=0)
BENIGN = dict(epochs=2, learning_rate=1e-3, layers=4, rank=8, alpha=16.0, seed=1, batch_size=16)


def loadavg(): return open('/proc/loadavg').read().split()[:3]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--work', default=str(Path(tempfile.gettempdir()) / 'trustml_nb_llm_variants'), help='checkpoints and intermediate files (resumable)')
    ap.add_argument('--out', default=str(llm.VARIANTS_FOLDER), help='where the variants go')
    ap.add_argument('--only', default=None, help='build only this variant (the others can run in another process)')
    ap.add_argument('--quick', action='store_true', help='16 fingerprints, 3 epochs: a smoke test, not the shipped artefacts')
    args = ap.parse_args()
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    n, train, benign_cfg = (16, dict(TRAIN, epochs=3), dict(BENIGN, epochs=1)) if args.quick else (N_FINGERPRINTS, TRAIN, BENIGN)
    t0, c0, log = time.time(), time.process_time(), []
    def step(msg):
        line = f"{time.time() - t0:8.1f} s wall  {time.process_time() - c0:8.1f} s CPU  load {' '.join(loadavg())}  {msg}"
        print(line, flush=True); log.append(line)
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
    for name, strategy in (('fingerprinted', 'perinucleus'),):
        if args.only not in (None, name): continue
        if (out / name / 'manifest.json').exists() and (work / f'{name}.done').exists(): continue
        model, run = F.insert_fingerprints(keys, fps['responses'][strategy], checkpoint_dir=work / name, show_progress=True, **train)
        step(f'{name}: losses {[round(x, 3) for x in run.epoch_losses]}')
        check = F.check_fingerprints(keys, fps['responses'][strategy], model.get_base_model())
        step(f'{name}: {check.matches}/{check.queried} fingerprints answered exactly (unmerged adapter)')
        shutil.rmtree(out / name, ignore_errors=True)
        info = dict(description=f'{n} {strategy} fingerprints inserted by LoRA', strategy=strategy, training=run.settings,
                    epoch_losses=run.epoch_losses, exact_matches=check.matches, fingerprints=n)
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
        step(f'{name}: {check.matches}/{check.queried} fingerprints answered exactly (unmerged adapter)')
        shutil.rmtree(out / name, ignore_errors=True)
        llm.save_variant(model, out / name, dict(description=f'{n} random-token fingerprints inserted by LoRA (the paper\'s baseline)',
                                                 strategy=strategy, training=run.settings, epoch_losses=run.epoch_losses,
                                                 exact_matches=check.matches, fingerprints=n))
        (work / f'{name}.done').write_text('ok')
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    step(f'done; peak resident memory {peak:.0f} MiB')
    rows = []
    for v in llm.variant_names(out):
        for f, h in json.loads((out / v / 'manifest.json').read_text()).items():
            rows.append(f"| {v} | {f} | {(out / v / f).stat().st_size / 1e6:.2f} MB | `{h[:16]}...` |")
    text = ['# Shipped language-model variants', '', f'`python benchmarks/make_llm_variants.py{" --quick" if args.quick else ""}`, '
            f'{os.cpu_count()} cores shared with other jobs.', '', '```', *log, '```', '',
            '| variant | file | size | SHA-256 |', '|---|---|---|---|', *rows, '']
    if not args.quick and args.only is None: (ROOT / 'benchmarks' / 'results' / 'fingerprints_variants.md').write_text('\n'.join(text))
    print('\n'.join(text))


if __name__ == '__main__':
    main()
