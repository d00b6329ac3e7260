"""Study (no peer library): Run every lesson headless, one kernel each, and record its wall time, the load average beside it, and the Python
distributions it imported (what the `lessons` extra must hold). Writes results/lesson_times.{csv,md}.

    python benchmarks/bench_lesson_times.py                       # the lessons in tutorials/, this environment's kernel
    python benchmarks/bench_lesson_times.py --lessons DIR --out results/NAME   # e.g. a copy made by trustml-nb-lessons

Progress bars are switched off (TRUSTML_NB_PROGRESS=0), as in a quiet classroom run.
Runs used to hang now and then with the kernel idle and nbclient waiting (3 of about 15 under heavy load): the cause
was a missed wake-up of nbclient's shell poll in jupyter_client, fixed by tools/kernel_wakeup.py, which this script
installs. A run that still fails ends at the per-cell timeout and is retried once (`attempt` in the results). The machines are shared, so the load average is recorded beside every time: re-measure on a quiet machine
before quoting a time.
"""
import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'tools'))
import kernel_wakeup  # noqa: E402
kernel_wakeup.install()  # the missed shell wake-up that made runs stall (tools/kernel_wakeup.py)
DUMP = r'''
import sys, json, importlib.metadata as _md
_top = {m.split('.')[0] for m in list(sys.modules) if not m.startswith('_')}
_dists = _md.packages_distributions()
print('@@DISTS@@' + json.dumps(sorted({d for t in _top for d in _dists.get(t, [])})))
'''


def run_lesson(path:Path, timeout:int)->dict:
    "Execute one lesson in a fresh kernel (its own folder as working directory); time it and list what it imported."
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(DUMP))
    client = NotebookClient(nb, timeout=timeout, kernel_name='python3', resources={'metadata': {'path': str(path.parent)}})
    load_before, t0, error = os.getloadavg()[0], time.perf_counter(), ''
    try: client.execute()
    except Exception as e: error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    seconds = time.perf_counter() - t0
    dists = []
    for out in nb.cells[-1].get('outputs', []):
        if out.get('name') == 'stdout' and '@@DISTS@@' in out.get('text', ''): dists = json.loads(out['text'].split('@@DISTS@@')[1])
    return dict(lesson=path.stem, seconds=round(seconds, 1), ok=not error, error=error, load_1min_before=round(load_before, 2),
                load_1min_after=round(os.getloadavg()[0], 2), distributions=';'.join(dists))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--lessons', default=str(HERE.parent / 'tutorials'), help='folder with the lesson notebooks')
    parser.add_argument('--out', default=str(HERE / 'results' / 'lesson_times'), help='results path without extension')
    parser.add_argument('--timeout', type=int, default=300, help='seconds per cell (a hung run ends after this)')
    parser.add_argument('--attempts', type=int, default=2, help='tries per lesson (the first that passes is recorded)')
    parser.add_argument('names', nargs='*', help='lesson files to run (default: all *.ipynb in --lessons)')
    args = parser.parse_args()
    os.environ['TRUSTML_NB_PROGRESS'] = '0'
    folder = Path(args.lessons)
    paths = [folder / n for n in args.names] if args.names else sorted(folder.glob('[0-9]*.ipynb'))
    rows = []
    for p in paths:
        for attempt in range(1, args.attempts + 1):   # a run that timed out is retried: see the note on hangs above
            row = run_lesson(p, args.timeout)
            row['attempt'] = attempt
            if row['ok']: break
            print(f"{p.stem}: attempt {attempt} failed: {row['error']}", flush=True)
        rows.append(row)
        r = rows[-1]; print(f"{r['lesson']}: {r['seconds']} s, {'ok' if r['ok'] else r['error']} (load {r['load_1min_before']} -> {r['load_1min_after']})", flush=True)
    df = pd.DataFrame(rows)
    df.insert(0, 'python', f"{platform.python_version()} {sys.executable}")
    df.to_csv(args.out + '.csv', index=False)
    base = set(df['distributions'].iloc[0].split(';')) if len(df) else set()
    lines = [f"# Lesson run times ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, kernel {sys.executable})", '',
             'Wall time of running every cell headless in a fresh kernel, progress bars off. The load average (1 min) is',
             'recorded before and after: the machine is shared, so times under load are upper bounds.', '',
             '| lesson | seconds | ok | load before | load after | distributions imported beyond the first lesson |', '|---|---|---|---|---|---|']
    for r in rows:
        extra = sorted(set(r['distributions'].split(';')) - base - {''})
        lines.append(f"| {r['lesson']} | {r['seconds']} | {r['ok']} | {r['load_1min_before']} | {r['load_1min_after']} | {', '.join(extra)} |")
    lines += ['', f"Total: {df['seconds'].sum():.0f} s for {len(df)} lessons; {int(df['ok'].sum())} ran without error; "
              f"lessons that needed a second attempt (the first hung until the cell timeout): {', '.join(df.loc[df['attempt'] > 1, 'lesson']) or 'none'}."]
    Path(args.out + '.md').write_text('\n'.join(lines) + '\n')
    print(f"wrote {args.out}.csv and .md")


if __name__ == '__main__':
    main()
