"""Study (no peer library): The language model behind trustml_nb.llm: load time, peak memory and forwards per second on this machine, and the
shared-prefix route for follow-up questions (ours) against plain full forwards (the naive peer), same prompts, one run.
Results in benchmarks/results/llm_bench.{csv,md}, with the load average at the time (the 2 cores are usually shared).

    nice -n 10 .venv/bin/python benchmarks/bench_llm.py      # 2-10 minutes, most of it the model load under load
"""
import json
import os
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

from trustml_nb.core import markdown_table
from trustml_nb.llm import BlackBoxLM, _forward, _scored_ids, load_model
from trustml_nb.quere import FOLLOW_UPS, make_tasks

OUT = Path(__file__).resolve().parent / 'results'


def main():
    import torch
    torch.set_num_threads(1)
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter(); model, tok = load_model(); load_s = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lm = BlackBoxLM(cache=False, batch_size=16, show_progress=False)
    prompts = list(make_tasks(4, seed=1).prompt[:16])
    ids = _scored_ids(('Yes', 'yes', 'No', 'no'))
    texts = [lm.render(p) for p in prompts]
    n_tokens = [len(tok.encode(t, add_special_tokens=False)) for t in texts]
    t0 = time.perf_counter(); _forward(lm, texts[:1], ids); single_s = time.perf_counter() - t0
    t0 = time.perf_counter(); _forward(lm, texts, ids); batch_s = time.perf_counter() - t0
    convs = [[prompts[0], 'Yes', f"{q} Answer Yes or No."] for q in FOLLOW_UPS]
    full = [lm.render(c) for c in convs]
    t0 = time.perf_counter(); plain = np.array([r['logprobs'] for r in _forward(lm, full, ids)]); plain_s = time.perf_counter() - t0
    t0 = time.perf_counter(); shared = lm.token_logprobs(convs, ['Yes', 'yes', 'No', 'no']); shared_s = time.perf_counter() - t0
    rows = [dict(measure='load (tokenizer + model, GGUF dequantised to float32)', value=round(load_s, 2), unit='s'),
            dict(measure='peak resident memory after load', value=round(peak_mb), unit='MB'),
            dict(measure=f'one forward, {n_tokens[0]} tokens', value=round(single_s, 3), unit='s'),
            dict(measure=f'batch of 16 prompts ({min(n_tokens)}-{max(n_tokens)} tokens)', value=round(16 / batch_s, 2), unit='forwards/s'),
            dict(measure=f'{len(FOLLOW_UPS)} follow-ups, plain full forwards (naive peer)', value=round(len(convs) / plain_s, 2), unit='forwards/s'),
            dict(measure=f'{len(FOLLOW_UPS)} follow-ups, shared prefix (ours)', value=round(len(convs) / shared_s, 2), unit='forwards/s'),
            dict(measure='speed-up of the shared prefix', value=round(plain_s / shared_s, 2), unit='x'),
            dict(measure='largest log-probability difference shared vs plain', value=float(np.abs(shared - plain).max()), unit=''),
            dict(measure='load average (1 min) at start, 2 cores', value=round(load_before, 2), unit=''),
            dict(measure='torch threads', value=torch.get_num_threads(), unit='')]
    df = pd.DataFrame(rows)
    print(df.to_string(index=False))
    OUT.mkdir(exist_ok=True)
    df.to_csv(OUT / 'llm_bench.csv', index=False)
    (OUT / 'llm_bench.md').write_text(f"# SmolLM2-135M on this machine (load average {load_before:.1f} on 2 cores: NOT idle)\n\n"
                                      + markdown_table(df) + '\n')


if __name__ == '__main__':
    main()
