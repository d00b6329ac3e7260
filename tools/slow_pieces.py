"""`make test-slow` in pieces, for a shared machine: each piece is one pytest run (tests marked slow, or one notebook with
its `#| slow` cells), timed, with the load average beside it. Results go to benchmarks/results/slow_suite.md and .csv
(re-running a piece replaces its row).

    .venv/bin/python tools/slow_pieces.py                      # every piece, one after another
    .venv/bin/python tools/slow_pieces.py --only quere 96_quere
    .venv/bin/python tools/slow_pieces.py --list
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / 'benchmarks' / 'results' / 'slow_suite'
SLOW_TESTS = ['fairdice', 'fedfact', 'llm', 'monoculture', 'omniprediction', 'pse', 'quere']   # tests/test_<name>.py -m slow
# the notebooks with `#| slow` cells (as tests/test_notebooks.py finds them)
SLOW_NOTEBOOKS = [p.stem for d in ('nbs', 'tutorials') for p in sorted((ROOT / d).glob('*.ipynb')) if '#| slow' in p.read_text()]


def pieces() -> dict:
    "name: pytest arguments (after `pytest -n 0 -p no:cacheprovider --runslow -m slow`)."
    out = {t: [f'tests/test_{t}.py'] for t in SLOW_TESTS}
    out.update({nb: ['tests/test_notebooks.py', '-k', f'test_notebook_with_slow_cells and {nb}'] for nb in SLOW_NOTEBOOKS})
    return out


def run(name: str, args: list) -> dict:
    env = {**os.environ, 'TRUSTML_NB_SLOW': '1', 'PYTHONPATH': str(ROOT), 'TRUSTML_NB_PROGRESS': '0'}
    cmd = [sys.executable, '-m', 'pytest', '-n', '0', '-p', 'no:cacheprovider', '--runslow', '-m', 'slow', '-q', *args]
    load0, t0 = os.getloadavg()[0], time.time()
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    secs = time.time() - t0
    tail = (p.stdout + p.stderr).strip().splitlines()
    summary = next((l for l in reversed(tail) if re.search(r'\d+ (passed|failed|error|skipped|deselected)', l)), tail[-1] if tail else '')
    (Path('/tmp') / f'slow_piece_{name}.log').write_text(p.stdout + p.stderr)
    return dict(piece=name, command=' '.join(['pytest', '--runslow', '-m', 'slow', *args]), returncode=p.returncode,
                result=summary.strip('= '), seconds=round(secs), load_start=round(load0, 2), load_end=round(os.getloadavg()[0], 2),
                finished=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()))


def write(rows: dict):
    order = list(pieces())
    rows = [rows[k] for k in order if k in rows]
    with open(OUT.with_suffix('.csv'), 'w', newline='') as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
    done = [r for r in rows if r['returncode'] in (0, 5, '0', '5')]
    total = sum(int(r['seconds']) for r in rows)
    lines = ['# The slow suite in pieces (`tools/slow_pieces.py`; `make test-slow` runs the same selection at once)', '',
             'Each piece ran alone with `-n 0`, on a shared 2-core machine (load averages beside each). returncode 0: passed; 5: nothing selected.', '',
             f'{len(done)} of {len(rows)} pieces run passed; {len(order) - len(rows)} not run; total wall time of the pieces run: {total} s.', '',
             '| piece | result | returncode | seconds | load at start / end | finished | command |', '|---|---|---|---|---|---|---|']
    lines += [f"| {r['piece']} | {r['result']} | {r['returncode']} | {r['seconds']} | {r['load_start']} / {r['load_end']} | {r['finished']} | `{r['command']}` |"
              for r in rows]
    missing = [k for k in order if k not in {r['piece'] for r in rows}]
    if missing: lines += ['', 'Not run yet: ' + ', '.join(missing)]
    OUT.with_suffix('.md').write_text('\n'.join(lines) + '\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--only', nargs='*', default=None)
    ap.add_argument('--list', action='store_true')
    a = ap.parse_args()
    P = pieces()
    if a.list: print('\n'.join(f'{k}: {v}' for k, v in P.items())); return
    rows = {}
    if OUT.with_suffix('.csv').exists():
        with open(OUT.with_suffix('.csv')) as fh: rows = {r['piece']: r for r in csv.DictReader(fh)}
    for name in a.only or list(P):
        r = run(name, P[name]); rows[name] = r
        print(f"{name}: {r['result']} ({r['seconds']} s, load {r['load_start']} -> {r['load_end']})", flush=True)
        write(rows)


if __name__ == '__main__':
    main()
