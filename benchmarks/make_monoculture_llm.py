"""Ask the offline language model (SmolLM2-135M-Instruct) the monoculture lesson's questions under the 4 prompt templates
and write trustml_nb/datasets/monoculture_llm.npz: P(yes) per evaluated person and template, with the row ids, the
serialised records, the template texts and the questions (issue #22, item 3: prompt multiplicity).

The people are the first N evaluated rows of the monoculture notebook's tasks: Adult (adult_task, 5,000 rows drawn with
seed 0, 3,000 fit, 2,000 evaluated) and German credit (german_task, 600 fit, 400 evaluated, seed 0).
Run (40 minutes on 2 very busy cores, load average 9 to 24, one torch thread): nice -n 10 .venv/bin/python benchmarks/make_monoculture_llm.py
Then put the printed SHA-256 into LLM_SCORES_SHA256 in nbs/95_monoculture.ipynb. The notebook, lesson and default tests read
the shipped file; a slow test and a `#| slow` notebook cell recompute the first chunk live and compare.
"""
import os, sys, time, hashlib
from pathlib import Path

import numpy as np

from trustml_nb.core import DroppedRowsWarning, quiet
from trustml_nb.data import adult_task, german_task
from trustml_nb.llm import MODEL_NAME, BlackBoxLM, load_model
from trustml_nb.monoculture import LLM_FEATURES, LLM_QUESTIONS, PROMPT_TEMPLATES, ask_templates, serialize_rows

N_ROWS = {'adult': int(os.environ.get('MONO_N_ADULT', 160)), 'german': int(os.environ.get('MONO_N_GERMAN', 160))}
CHUNK = 16 # rows per call: each template's 16 prompts are one batch of BlackBoxLM's default batch_size
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1] / 'trustml_nb' / 'datasets' / 'monoculture_llm.npz')

import torch
torch.set_num_threads(1) # 2 cores shared by many jobs; and the slow check recomputes with one thread, so sums match


def eval_splits():
    "The evaluated rows of the notebook's two tasks (the same people the tabular ecosystems decide about)."
    with quiet(DroppedRowsWarning):
        adult = adult_task({'train': 3000, 'eval': None}, max_rows=5000, sensitive=('sex', 'race_binary'), seed=0)
    return {'adult': adult.eval, 'german': german_task({'fit': 600, 'eval': None}, seed=0).eval}


def main():
    t0 = time.time(); load_model(); print(f"model loaded in {time.time() - t0:.1f}s; load average {os.getloadavg()}", flush=True)
    splits = eval_splits()
    lm = BlackBoxLM(cache=False, show_progress=False)
    parts = {k: [] for k in splits}
    starts = {k: list(range(0, N_ROWS[k], CHUNK)) for k in splits}
    order = [(k, s) for i in range(max(map(len, starts.values()))) for k in splits if i < len(starts[k]) for s in [starts[k][i]]]

    def save():
        "Write the chunks finished so far, so a stopped run leaves a usable file."
        arrays = dict(template_names=np.array(list(PROMPT_TEMPLATES), dtype=str), template_texts=np.array(list(PROMPT_TEMPLATES.values()), dtype=str),
                      model=np.array(MODEL_NAME))
        for k, ps in parts.items():
            if not ps: continue
            n, sp = sum(len(p) for p in ps), splits[k]
            arrays[f'{k}_p_yes'] = np.concatenate(ps)
            arrays[f'{k}_eval_index'] = np.arange(n)
            arrays[f'{k}_task_rows'] = np.asarray(sp.rows[:n])
            arrays[f'{k}_records'] = np.array(serialize_rows(sp.X.iloc[:n], LLM_FEATURES[k], 'record'), dtype=str)
            arrays[f'{k}_question'] = np.array(LLM_QUESTIONS[k])
            arrays[f'{k}_columns'] = np.array(list(LLM_FEATURES[k]), dtype=str)
            arrays[f'{k}_words'] = np.array(list(LLM_FEATURES[k].values()), dtype=str)
        np.savez_compressed(OUT, **arrays)

    for k, start in order:
        t1 = time.time()
        X = splits[k].X.iloc[start:min(start + CHUNK, N_ROWS[k])]
        parts[k].append(ask_templates(lm, X, LLM_FEATURES[k], LLM_QUESTIONS[k]).to_numpy())
        save()
        print(f"{k} rows {start}-{start + len(X)}: {time.time() - t1:.1f}s ({(time.time() - t1) / (4 * len(X)):.2f}s per forward), "
              f"{lm.forwards} forwards, {time.time() - t0:.0f}s total, load average {os.getloadavg()[0]:.2f}", flush=True)
    sha = hashlib.sha256(OUT.read_bytes()).hexdigest()
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e3:.1f} kB) in {time.time() - t0:.0f}s; SHA-256 {sha}", flush=True)


if __name__ == '__main__':
    main()
