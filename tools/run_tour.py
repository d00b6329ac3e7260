"""Execute the tutorials headless and write HTML copies (what `make tour` runs).

    python tools/run_tour.py                              # every tutorials/*.ipynb -> tutorials/_html/
    python tools/run_tour.py 20_fedfact.ipynb --runs 3    # one lesson three times (to look for hangs); --no-html skips the copies
    python tools/run_tour.py --audit test-output/figures  # also save every figure as PNG and measure it (viz.readability)

With `--audit DIR`, every matplotlib figure a lesson displays is measured by `trustml_nb.viz.readability` at 850 px
(the output area of a 1280 x 800 JupyterLab window with the file browser open): smallest text in screen pixels, legends over
data, texts over texts or across a panel's edge, and whether it is shown with alt text (`viz.figure_html`).
The size a reader sees is measured in the browser, in the three renderings (tests/test_browser.py: JupyterLab and Voila;
tests/test_site_readability.py: the static site): `--table DIR` gathers those measurements into benchmarks/results/readability.md. DIR/<lesson>/ gets
each figure as cellNN_K.png and readability.csv (one row per figure); a figure that fails is listed on the console.
Figures an explorer draws are measured too (rows with no PNG file: they live in the widget; the browser test screenshots them).

Each cell gets `--timeout` seconds (default 240: the slowest lesson cell takes well under a minute on a quiet
machine, so this is a few minutes, not the 900 s `make tour` used before). A lesson whose run fails (a cell timed out,
the kernel died) is run once more in a fresh kernel, and the reason is printed.

The hang (issue 16): a lesson stopped for minutes with the kernel idle while the client kept waiting. Its cause was
found: the kernel had sent the cell's `execute_reply`, but nbclient's poll on the shell socket was never woken, because
nbclient synced an Output widget's state on the same socket meanwhile (tools/kernel_wakeup.py explains it; this script
installs the fix). `WatchfulClient` stays as a guard: it polls in 2 s steps, and if IOPub says the kernel finished the
cell but no reply comes within `--reply-grace` seconds, the cell is taken as finished (its outputs, errors included, are
already recorded from IOPub), a line says so, and the run goes on. If neither came, the cell is still running (or the
request was lost) and the cell timeout applies.
"""
import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from queue import Empty

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import kernel_wakeup  # noqa: E402
kernel_wakeup.install()   # the cause of the hang (see the docstring)
AUDIT_MARK = '# run_tour audit'
AUDIT_HOOK = AUDIT_MARK + r'''
import io as _io
import matplotlib.pyplot as _plt
_plt.close(_plt.figure())   # resolve pyplot's backend now: the inline backend's first use (e.g. inside pandas plotting) re-registers its formatter
from matplotlib.figure import Figure as _Figure
import trustml_nb.viz as _viz
_AUDIT = []
def _record(fig, alt):
    r = _viz.readability(fig)
    _AUDIT.append(dict(execution_count=_CELL[0], width_px=round(r.width_px, 1), scale=round(r.scale, 3),
                       min_text_px=round(r.min_text_px, 2), small_texts=' | '.join(r.small_texts), legend_overlaps=' | '.join(r.legend_overlaps),
                       text_overlaps=' | '.join(r.text_overlaps), edge_texts=' | '.join(r.edge_texts), alt=alt, ok=r.ok and bool(alt)))
def _audit_png(fig):   # a figure shown as a bare PNG (no <img alt>): measured, and recorded without alt text
    if not hasattr(fig, '_trustml_png'): _record(fig, '')
    buf = _io.BytesIO(); fig.savefig(buf, format='png', bbox_inches='tight'); return buf.getvalue()
_CELL = [None]
def _register(*_):   # before every cell: `%matplotlib inline` in a lesson re-registers its own PNG formatter for figures
    _CELL[0] = get_ipython().execution_count - 1   # already advanced when pre_run_cell fires (IPython 9): this cell's number
    get_ipython().display_formatter.formatters['image/png'].for_type(_Figure, _audit_png)
_register(); get_ipython().events.register('pre_run_cell', _register)
_figure_html = _viz.figure_html
def _figure_html_audited(fig, alt=None, max_width=760):   # every <img alt> display (NotebookFigure, explorers, pyplot after set_theme)
    html = _figure_html(fig, alt, max_width); _record(fig, _viz.alt_text(fig)); return html
_viz.figure_html = _figure_html_audited
'''
AUDIT_DUMP = AUDIT_MARK + "\nimport json as _json; print('@@AUDIT@@' + _json.dumps(_AUDIT))"


class WatchfulClient(NotebookClient):
    "A NotebookClient that finishes a cell whose kernel went idle on IOPub but whose execute_reply never arrived (and counts it)."

    reply_grace = 30.0  # seconds to wait for a reply once IOPub has said the cell finished

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lost_replies = []  # indices of cells finished without their execute_reply

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        deadline = None if timeout is None else time.monotonic() + timeout
        idle_since = None
        while True:
            wait = 2.0 if deadline is None else max(0.0, min(2.0, deadline - time.monotonic()))
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=wait))
            except Empty:
                if task_poll_output_msg.done():               # IOPub: the kernel went idle after this cell
                    idle_since = idle_since or time.monotonic()
                    if time.monotonic() - idle_since > self.reply_grace:
                        task_poll_kernel_alive.cancel()
                        self.lost_replies.append(self.nb.cells.index(cell))
                        print(f"    cell {self.lost_replies[-1]}: the kernel finished (IOPub idle) but its execute_reply did not "
                              f"arrive within {self.reply_grace:.0f} s; taking the cell as finished", flush=True)
                        return _reply_from_outputs(msg_id, cell)
                if deadline is not None and time.monotonic() >= deadline:
                    task_poll_kernel_alive.cancel()
                    await self._async_check_alive()
                    where = 'IOPub said idle, no reply' if task_poll_output_msg.done() else 'no IOPub idle, no reply'
                    print(f"    cell {self.nb.cells.index(cell)}: no reply after {timeout} s ({where})", flush=True)
                    return await self._async_handle_timeout(timeout, cell)   # raises CellTimeoutError (interrupt_on_timeout=False)
                continue
            if msg['parent_header'].get('msg_id') != msg_id: continue
            try: await asyncio.wait_for(task_poll_output_msg, self.iopub_timeout)
            except (asyncio.TimeoutError, Empty): self.log.warning("Timeout waiting for IOPub output")
            task_poll_kernel_alive.cancel()
            return msg


def _reply_from_outputs(msg_id:str, cell)->dict:
    "An execute_reply rebuilt from the cell's recorded outputs (an error output makes it an error reply)."
    err = next((o for o in cell.get('outputs', []) if o.get('output_type') == 'error'), None)
    content = ({'status': 'error', 'ename': err['ename'], 'evalue': err['evalue'], 'traceback': err['traceback']} if err
               else {'status': 'ok'})
    return {'parent_header': {'msg_id': msg_id}, 'header': {'msg_type': 'execute_reply'}, 'content': content, 'metadata': {}}


def run_once(path:Path, timeout:int, grace:float, audit:bool=False)->tuple:
    "Execute one notebook in a fresh kernel: (executed notebook or None, seconds, error text, cells finished without a reply)."
    nb = nbformat.read(path, as_version=4)
    if audit: nb.cells = [nbformat.v4.new_code_cell(AUDIT_HOOK)] + nb.cells + [nbformat.v4.new_code_cell(AUDIT_DUMP)]
    client = WatchfulClient(nb, timeout=timeout, kernel_name='python3', resources={'metadata': {'path': str(path.parent)}})
    client.reply_grace = grace
    t0 = time.perf_counter()
    try:
        client.execute()
        return nb, time.perf_counter() - t0, '', client.lost_replies
    except (CellExecutionError, CellTimeoutError, DeadKernelError, RuntimeError) as e:
        first = str(e).strip().splitlines()
        return None, time.perf_counter() - t0, f"{type(e).__name__}: {first[0] if first else ''}"[:300], client.lost_replies


def save_audit(nb, folder:Path)->list:
    "Write the figures (cellNN_K.png) and readability.csv of an audited run; drop the audit cells; return the failing rows."
    import base64, json
    import pandas as pd
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for o in nb.cells[-1].get('outputs', []):
        if o.get('name') == 'stdout' and '@@AUDIT@@' in o.get('text', ''): rows = json.loads(o['text'].split('@@AUDIT@@')[1])
    nb.cells = [c for c in nb.cells if not c.source.startswith(AUDIT_MARK)]
    for i, c in enumerate(nb.cells):
        pngs = [o['data']['image/png'] for o in c.get('outputs', []) if 'image/png' in o.get('data', {})]
        for k, b64 in enumerate(pngs): (folder / f"cell{i:02d}_{k}.png").write_bytes(base64.b64decode(b64))
    cell_of = {c.get('execution_count'): i for i, c in enumerate(nb.cells) if c.cell_type == 'code'}
    for r in rows: r['cell'] = cell_of.get(r['execution_count'])
    pd.DataFrame(rows).to_csv(folder / 'readability.csv', index=False)
    return [r for r in rows if not r['ok']]


def readability_table(folder:Path, out:Path=ROOT / 'benchmarks' / 'results' / 'readability.md')->str:
    "Gather the browser tests' figure measurements (folder/<rendering>/<lesson>.json) into a markdown table; write it to `out`."
    import json, datetime
    rows = [r for f in sorted(Path(folder).glob('*/*.json')) for r in json.loads(f.read_text())]
    order = {'JupyterLab': 0, 'Voila': 1, 'site': 2}
    rows.sort(key=lambda r: (r['lesson'], order.get(r['rendering'], 9)))
    small = [r for r in rows if r['min_text_px'] is None or r['min_text_px'] < 10]
    no_alt = [r for r in rows if not (r['alt'] or '').strip()]
    per = {}
    for r in rows: per.setdefault(r['rendering'], set()).add(r['lesson'])
    lines = ["# Figure readability in the browser (issue 39)", "",
             f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC in Debian chromium at a 1280 x 800 window by "
             "tests/test_browser.py (JupyterLab after Run All, and the explorer after its slider moved; Voila: each app's default view) and "
             "tests/test_site_readability.py (the static site's lesson pages); gathered by `python tools/run_tour.py --table test-output/readability`.",
             "*smallest text* = the figure's smallest text at natural size (`data-min-text-px` on its `<img>`, written by "
             "`trustml_nb.viz.figure_html`) x shown width / natural width, in CSS px. The floor is 10 px.", "",
             "Lessons measured per rendering: " + "; ".join(f"{k}: {len(v)} ({', '.join(sorted(l[:2] for l in v))})" for k, v in sorted(per.items(), key=lambda kv: order.get(kv[0], 9))) + ".",
             f"Figures: {len(rows)}; below 10 px: {len(small)}; with alt text: {len(rows) - len(no_alt)}; without: {len(no_alt)}.", "",
             "| lesson | rendering | figure | natural px | shown px | scale | smallest text px | alt text (start) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        alt = (r['alt'] or '').replace('|', '/')
        lines.append(f"| {r['lesson']} | {r['rendering']} | {r['figure']} | {r['natural_px']} | {r['shown_px']} | {r['scale']} | "
                     f"{'unmeasured' if r['min_text_px'] is None else r['min_text_px']} | {alt[:70] + ('...' if len(alt) > 70 else '')} |")
    text = "\n".join(lines) + "\n"
    Path(out).write_text(text)
    return text


def main(argv=None)->int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('names', nargs='*', help='lesson files in --lessons (default: all *.ipynb)')
    parser.add_argument('--lessons', default=str(ROOT / 'tutorials'), help='folder with the lessons')
    parser.add_argument('--out', default=str(ROOT / 'tutorials' / '_html'), help='folder for the HTML copies')
    parser.add_argument('--timeout', type=int, default=240, help='seconds per cell')
    parser.add_argument('--reply-grace', type=float, default=30.0, help='seconds to wait for a reply after IOPub says idle')
    parser.add_argument('--attempts', type=int, default=2, help='tries per lesson, each in a fresh kernel')
    parser.add_argument('--runs', type=int, default=1, help='run each lesson this many times (looking for hangs)')
    parser.add_argument('--no-html', action='store_true', help='do not write HTML copies')
    parser.add_argument('--audit', default=None, help='folder: save every figure and its readability (see above)')
    parser.add_argument('--table', default=None, help='folder of browser measurements (test-output/readability): write benchmarks/results/readability.md and stop')
    args = parser.parse_args(argv)
    if args.table:
        print(readability_table(Path(args.table)).split('\n\n| lesson')[0]); return 0
    folder = Path(args.lessons)
    paths = [folder / n for n in args.names] if args.names else sorted(folder.glob('[0-9]*.ipynb'))
    out = Path(args.out); out.mkdir(parents=True, exist_ok=True)
    failed = []
    for p in paths:
        for run in range(1, args.runs + 1):
            for attempt in range(1, args.attempts + 1):
                load = os.getloadavg()[0]
                nb, sec, err, lost = run_once(p, args.timeout, args.reply_grace, audit=bool(args.audit))
                tag = f"{p.stem} run {run} attempt {attempt}: {sec:.1f} s, load {load:.1f}, replies lost {len(lost)}"
                if nb is not None:
                    print(f"{tag}: ok", flush=True)
                    if args.audit:
                        for r in save_audit(nb, Path(args.audit) / p.stem):
                            print(f"    figure in cell {r['cell']}: small text [{r['small_texts']}] (min {r['min_text_px']} px), "
                                  f"legend over data [{r['legend_overlaps']}], text over text [{r['text_overlaps']}], "
                                  f"across a panel edge [{r['edge_texts']}], alt text {'yes' if r['alt'] else 'NONE'}", flush=True)
                    if not args.no_html:
                        from nbconvert import HTMLExporter
                        html, _ = HTMLExporter().from_notebook_node(nb)
                        (out / f"{p.stem}.html").write_text(html)
                    break
                print(f"{tag}: FAILED ({err})" + ('; retrying in a fresh kernel' if attempt < args.attempts else ''), flush=True)
            else:
                failed.append(p.stem)
    print(f"{len(paths) * args.runs - len(failed)} of {len(paths) * args.runs} runs ok" + (f"; failed: {', '.join(failed)}" if failed else ''))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
