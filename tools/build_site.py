"""Build the static site (`make site`): Sphinx + myst-nb over docs/, lessons executed once and cached by jupyter-cache.

    python tools/build_site.py            # docs/_build/html; records the build time in benchmarks/results/site_build.md
    python tools/build_site.py --fresh    # empty the execution cache and the build first (a cold build, as on a fresh clone)
    python tools/build_site.py --all      # re-read and write every page (sphinx -E), lessons from the execution cache

A lesson whose execution fails (a cell error, or a cell that hangs until the per-cell timeout; the usual hang, a missed
wake-up of nbclient's shell poll, is fixed by tools/kernel_wakeup.py, which docs/conf.py installs) fails the build; the build is then run once more, which executes only the lessons
not yet in the cache. After the build, `tidy_pages` replaces the temporary file a warning names when it comes from a
lesson cell (`/tmp/ipykernel_123/456.py:7: DroppedRowsWarning: ...` becomes `(cell, line 7): DroppedRowsWarning: ...`) and
counts the lesson figures with and without alt text (each figure is an `<img alt="a sentence">` written by
`trustml_nb.viz.figure_html`, so its alt text travels into the page with it; an image Sphinx wrote from a bare PNG has its
file path as alt and is counted as without). Every build appends a row (seconds, cold or warm cache, the load average before and after) to
benchmarks/results/site_build.md: the machines are shared, so a time under load is an upper bound.
"""
import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS, BUILD = ROOT / "docs", ROOT / "docs" / "_build"
RESULTS = ROOT / "benchmarks" / "results" / "site_build.md"
HEADER = ("# Static site build times (`make site`)\n\nWall time of `python tools/build_site.py` (Sphinx + myst-nb; lessons executed "
          "by jupyter-cache). cache *cold*: empty execution cache (every lesson runs); *warm*: cache filled (no lesson runs). "
          "pages: *all* = every page read and written (`--fresh`, `--all`, or a changed Sphinx setting), *incremental* = "
          "only changed pages. Load = 1-minute load average on a 2-core machine shared with other work.\n\n"
          "| date (UTC) | cache | pages rebuilt | seconds | attempts | load before | load after | pages | site MB |\n"
          "|---|---|---|---|---|---|---|---|---|\n")


def sphinx(out: Path, every_page: bool) -> int:
    "One sphinx-build run into `out` (-E: read every page again); returns its exit status."
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-d", str(BUILD / "doctrees"), str(DOCS), str(out)]
    if every_page: cmd.insert(3, "-E")
    return subprocess.call(cmd, cwd=ROOT)


KERNEL_FILE = re.compile(r"/tmp/ipykernel_\d+/\d+\.py:(\d+)")


class _Images(HTMLParser):
    def __init__(self):
        super().__init__(); self.alts = []

    def handle_starttag(self, tag, attrs):
        if tag == "img": self.alts.append(dict(attrs).get("alt") or "")


def tidy_pages(out: Path) -> dict:
    "Replace kernel temp-file paths in warnings by '(cell, line N)'; count lesson figures with and without alt text."
    fixed, with_alt, without = 0, 0, []
    for page in sorted(out.rglob("*.html")):
        text = page.read_text(errors="replace")
        new, n = KERNEL_FILE.subn(lambda m: f"(cell, line {m.group(1)})", text)
        if n: page.write_text(new); fixed += n
        if page.parent.name == "lessons":
            p = _Images(); p.feed(new)
            for k, alt in enumerate(p.alts):
                if len(alt.split()) >= 3 and not alt.strip().endswith((".png", ".jpg", ".svg")): with_alt += 1
                else: without.append(f"{page.stem} image #{k}: alt {alt!r}")
    return {"paths_replaced": fixed, "figures_with_alt": with_alt, "figures_without_alt": without}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fresh", action="store_true", help="empty the execution cache and the build folder first")
    p.add_argument("--all", action="store_true", help="read and write every page again (sphinx -E); lessons come from the cache")
    p.add_argument("--out", default=str(BUILD / "html"), help="output folder (default docs/_build/html)")
    p.add_argument("--no-record", action="store_true", help="do not append the time to benchmarks/results/site_build.md")
    a = p.parse_args(argv)
    out, cache = Path(a.out), BUILD / ".jupyter_cache"
    if a.fresh: shutil.rmtree(BUILD, ignore_errors=True)
    cold = not cache.exists()
    every = a.fresh or a.all or not (BUILD / "doctrees").exists()
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    attempts, rc = 0, 1
    while attempts < 2 and rc != 0:
        attempts += 1
        print(f">>> sphinx-build, attempt {attempts} ({'cold' if cold else 'warm'} execution cache {cache})", flush=True)
        rc = sphinx(out, every and attempts == 1)
    secs, load1 = time.perf_counter() - t0, os.getloadavg()[0]
    if rc != 0:
        print(f"FAILED: sphinx-build exited with {rc} twice ({secs:.0f} s)"); return rc
    tidy = tidy_pages(out)
    print(f">>> {tidy['paths_replaced']} temporary kernel file path(s) replaced; lesson figures with alt text: {tidy['figures_with_alt']}, "
          f"without: {len(tidy['figures_without_alt'])}" + "".join(f"\n    {w}" for w in tidy['figures_without_alt']))
    pages = sum(1 for _ in out.rglob("*.html"))
    mb = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20
    print(f">>> site built in {secs:.0f} s ({attempts} attempt(s), load {load0:.1f} -> {load1:.1f}): {pages} pages, {mb:.0f} MB in {out}")
    print(f">>> open {out / 'index.html'}, or serve it: {sys.executable} -m http.server -b 127.0.0.1 -d {out} 8000")
    if not a.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        if not RESULTS.exists(): RESULTS.write_text(HEADER)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
        with RESULTS.open("a") as f:
            f.write(f"| {now} | {'cold' if cold else 'warm'} | {'all' if every else 'incremental'} | {secs:.0f} | {attempts} | {load0:.2f} | {load1:.2f} | {pages} | {mb:.0f} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
