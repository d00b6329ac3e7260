"""Study (no peer library): The idle-kernel stall of headless lesson runs, with and without tools/kernel_wakeup.py: runs, missed wake-ups, time.

    python benchmarks/bench_kernel_wakeup.py                        # 90_matroid_selection, 20 runs per arm, 20 s cell timeout
    python benchmarks/bench_kernel_wakeup.py --lesson 20_fedfact.ipynb --runs 4

Each run executes the lesson in a fresh kernel through plain nbclient (arms alternate: plain jupyter_client, then
with the fix). A "missed wake-up" is a shell poll that ran to its full timeout and then found a message already
waiting: the stall. With a cell timeout the run still finishes (late); with none it would wait forever. Writes
results/kernel_wakeup.{csv,md} with the load average beside each run.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
from jupyter_client.channels import AsyncZMQSocketChannel
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'tools'))
import kernel_wakeup  # noqa: E402

MISSED = []
_get_msg = AsyncZMQSocketChannel.get_msg


async def _watched_get_msg(self, timeout=None):
    "jupyter_client's get_msg, noting a poll that slept to its timeout although a message was waiting."
    t0 = time.monotonic()
    ready = await self.socket.poll(timeout=0)
    if ready: return await _get_msg(self, timeout=timeout)
    msg = await _get_msg(self, timeout=timeout)          # raises Empty on a true timeout
    if timeout is not None and timeout >= 1 and time.monotonic() - t0 >= 0.98 * timeout: MISSED.append(timeout)
    return msg

AsyncZMQSocketChannel.get_msg = _watched_get_msg


def run_once(path: Path, timeout: int) -> dict:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name='python3', resources={'metadata': {'path': str(path.parent)}})
    MISSED.clear(); t0, error = time.perf_counter(), ''
    try: client.execute()
    except Exception as e: error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
    return dict(seconds=round(time.perf_counter() - t0, 1), missed_wakeups=len(MISSED), error=error,
                load_1min=round(os.getloadavg()[0], 2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--lesson', default='90_matroid_selection.ipynb', help='a lesson in tutorials/ with an explorer')
    parser.add_argument('--runs', type=int, default=20, help='runs per arm')
    parser.add_argument('--timeout', type=int, default=20, help='seconds per cell')
    parser.add_argument('--out', default=str(HERE / 'results' / 'kernel_wakeup'))
    args = parser.parse_args()
    os.environ['TRUSTML_NB_PROGRESS'] = '0'
    path = HERE.parent / 'tutorials' / args.lesson
    rows = []
    for i in range(args.runs):
        for arm in ('plain jupyter_client', 'with kernel_wakeup'):
            kernel_wakeup.install() if arm == 'with kernel_wakeup' else kernel_wakeup.uninstall()
            row = dict(lesson=path.stem, arm=arm, run=i + 1, **run_once(path, args.timeout))
            rows.append(row); print(row, flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(args.out + '.csv', index=False)
    summary = df.groupby('arm', sort=False).agg(runs=('run', 'size'), runs_with_a_stall=('missed_wakeups', lambda m: int((m > 0).sum())),
                                               missed_wakeups=('missed_wakeups', 'sum'), failed=('error', lambda e: int((e != '').sum())),
                                               median_s=('seconds', 'median'), max_s=('seconds', 'max'), total_s=('seconds', 'sum'),
                                               median_load=('load_1min', 'median')).reset_index()
    cmd = ' '.join(['.venv/bin/python', 'benchmarks/bench_kernel_wakeup.py'] + sys.argv[1:])
    Path(args.out + '.md').write_text(
        f"# Missed shell wake-ups in headless lesson runs, with and without tools/kernel_wakeup.py\n\n"
        f"Lesson `{path.name}`, {args.runs} runs per arm (alternating), plain nbclient, cell timeout {args.timeout} s "
        f"(a stall costs one timeout). Command: `{cmd}`.\n\n" + summary.to_markdown(index=False) + "\n")
    print(summary.to_string(index=False))


if __name__ == '__main__':
    main()
