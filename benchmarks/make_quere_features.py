"""Compute the QueRE features once with the live model and write trustml_nb/datasets/quere_features.npz.

Run (about 30 minutes on 2 busy cores): nice -n 10 .venv/bin/python benchmarks/make_quere_features.py
The notebook, lesson and default tests read the shipped file; a slow test recomputes a subsample and compares.
"""
import os, sys, time
from pathlib import Path

import numpy as np

from trustml_nb.llm import BlackBoxLM, load_model
from trustml_nb.quere import FOLLOW_UPS, RANDOM_FOLLOW_UPS, STEER_PROMPT, elicit, make_tasks

N_PER_FAMILY, N_STEERED, CHUNK = int(os.environ.get('QUERE_N_PER_FAMILY', 30)), int(os.environ.get('QUERE_N_STEERED', 60)), 10
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1] / 'trustml_nb' / 'datasets' / 'quere_features.npz')
cache_dir = os.environ.get('QUERE_CACHE', '/tmp/issue-19_cache')

import torch
torch.set_num_threads(1) # 2 cores shared by many jobs: one thread avoids spin-waiting
t0 = time.time(); load_model(); print(f"loaded in {time.time() - t0:.1f}s", flush=True)
# the shared-prefix path must agree with plain forwards of the full texts
from trustml_nb.llm import _forward, _scored_ids
check = BlackBoxLM(cache=False, show_progress=False)
conv = [['Is 12 + 30 = 42? Answer Yes or No.', 'Yes', q] for q in ('Are you sure? Answer Yes or No.', 'Did you guess? Answer Yes or No.')]
ids = _scored_ids(('Yes', 'yes', 'No', 'no'))
plain = np.array([r['logprobs'] for r in _forward(check, [check.render(c) for c in conv], ids)])
shared = check.token_logprobs(conv, ['Yes', 'yes', 'No', 'no'])
print('shared-prefix vs plain, max |diff| =', np.abs(plain - shared).max(), flush=True)
assert np.abs(plain - shared).max() < 1e-4  # float32 matmuls of different shapes: about 1e-5 apart
tasks = make_tasks(N_PER_FAMILY, seed=0)
clean = BlackBoxLM(cache_dir=cache_dir, show_progress=False)
steered = BlackBoxLM(system_prompt=STEER_PROMPT, cache_dir=cache_dir, show_progress=False)
parts = {'clean': [], 'steered': []}

def save(n_done):
    "Write the items finished so far (every chunk), so a stopped run still leaves a usable file."
    arrays = {f"{name}_{key}": np.concatenate([p[key] for p in ps]) for name, ps in parts.items() if ps for key in ps[0]}
    t = tasks.iloc[:n_done]
    arrays.update(prompt=np.array(t['prompt'], dtype=str), family=np.array(t['family'], dtype=str),
                  gold=np.array(t['gold'], dtype=str), options=np.array([list(o) for o in t['options']], dtype=str),
                  follow_ups=np.array(FOLLOW_UPS, dtype=str), random_follow_ups=np.array(RANDOM_FOLLOW_UPS, dtype=str))
    np.savez_compressed(OUT, **arrays)

for start in range(0, len(tasks), CHUNK): # clean and steered interleaved, so any prefix of the run is a usable sample
    t1 = time.time()
    chunk = tasks.iloc[start:start + CHUNK]
    parts['clean'].append(elicit(clean, chunk, hidden=True))
    if start < N_STEERED: parts['steered'].append(elicit(steered, chunk.iloc[:N_STEERED - start]))
    save(start + len(chunk))
    print(f"items {start + len(chunk)}/{len(tasks)}: {time.time() - t1:.1f}s, {clean.forwards + steered.forwards} forwards, "
          f"{time.time() - t0:.0f}s total", flush=True)
print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB) in {time.time() - t0:.0f}s", flush=True)
