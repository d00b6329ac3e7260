"""Real-browser test: JupyterLab + Debian chromium (driven by Playwright) run each tutorial and move its first slider.

Starts a fresh JupyterLab on 127.0.0.1 (free port, test-only empty token) serving a copy of tutorials/, opens
each lesson in LESSONS, runs all cells, checks that no cell failed, presses End on the threshold slider and waits for
the explorer's output to change. Screenshots go to test-output/browser/<lesson>/. Every wait has a timeout; a failed attempt
is retried once with a fresh server; the server is stopped even on failure.

Readability and alt text (issue 39), measured on the page at 1280 x 800: every figure a lesson shows (after Run All, and
the explorer's figure after the slider moved) is an `<img>` whose text, at the size the page shows it, is at least
MIN_TEXT_PX: the figure's smallest text at natural size (`data-min-text-px`, written by `trustml_nb.viz.figure_html`)
times its displayed width over its natural width. Every figure has alt text, a sentence (not a file name), and nothing drawn over itself: no legend over data, no text over
another text or across a panel's edge (`data-overlaps`, written by `figure_html` from `trustml_nb.viz.readability`). The same
measurement runs in Voila (`test_every_app_figure_is_readable_in_voila`: the default suite opens the first app, `--runslow`
all of them) and on the static site (tests/test_site_readability.py). Each run writes its rows to
test-output/readability/<rendering>/<lesson>.json; `python tools/run_tour.py --table test-output/readability` gathers them
into benchmarks/results/readability.md.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from lab_helpers import (chromium_page, free_port, isolated_jupyter_env, require_chromium, stop_process_group, twice,
                         wait_for_status)

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Lesson:
    "A tutorial whose first `Explorer` the browser test drives."
    notebook: str  # file in tutorials/
    ready_text: str  # text the explorer's output shows after the first render
    after_text: str  # text it must show after the first slider is pushed to its maximum (End key)
    press_run: bool = False  # the explorer has a Run button that must be clicked after moving the slider
    timeout_s: int = 180  # bound on running all cells
    app_texts: tuple = ()  # (ready, after) in its Voila app, where the app opens on another state than the lesson leaves


# Every tutorial with a widget gets an entry here.
LESSONS = [
    Lesson("00_start_here.ipynb", ready_text="demographic parity gap", after_text="threshold 0.95"),
    Lesson("40_fairdice.ipynb", ready_text="quality 0.00", after_text="quality 1.00", press_run=True),
    Lesson("20_fedfact.ipynb", ready_text="FedFACT-Post, DP", after_text="xi_g=0.100", press_run=True),
    Lesson("10_path_specific_effects.ipynb", ready_text="device bias 1.00", after_text="device bias 2.00", press_run=True),
    Lesson("30_explaining_gams.ipynb", ready_text="n = 6 features", after_text="n = 12 features"),
    Lesson("50_multicalibration.ipynb", ready_text="learning rate 0.1,", after_text="learning rate 1,", press_run=True),
    Lesson("60_selective_omniprediction.ipynb", ready_text="fp=1.00", after_text="fp=5.00"),
    Lesson("90_matroid_selection.ipynb", ready_text="n = 6 elements", after_text="n = 9 elements"),
    Lesson("80_oath.ipynb", ready_text="eps=0.020", after_text="eps=0.100"),
    Lesson("95_monoculture.ipynb", ready_text="epsilon 0.020", after_text="epsilon 0.100"),
    Lesson("70_mifpo.ipynb", ready_text="gamma 0.05,", after_text="gamma 0.30,", press_run=True),
    Lesson("96_quere.ipynb", ready_text="probe C = 1:", after_text="probe C = 100:"),
    Lesson("97_distributive_fairness.ipynb", ready_text="HP7, money 5:", after_text="HP7, money 20:",  # the check-yourself cell leaves HP7 with 5 units
           app_texts=("HP2, money 0:", "HP2, money 20:")),  # the app opens on the explorer's default
    Lesson("98_unreal.ipynb", ready_text="ratio 10, homophily 0.80", after_text="ratio 20, homophily", press_run=True),
    Lesson("99_fingerprints.ipynb", ready_text="t = 0.8, k = 3: a response", after_text="t = 0.95"),
]

pytestmark = pytest.mark.browser
MIN_TEXT_PX = 10.0   # the smallest text a figure may show, in CSS pixels at a 1280 x 800 window

# every figure on the page: natural and shown width, the smallest text at natural size, its alt text, where it is
FIGURES_JS = """(sel) => [...document.querySelectorAll(sel)].filter(i => i.complete && i.naturalWidth > 0).map((img, k) => {
  const cells = [...document.querySelectorAll('.jp-Cell, .cell, div.cell_output')];
  const cell = img.closest('.jp-Cell, .cell');
  return {k: k, cell: cell ? cells.indexOf(cell) : -1, alt: img.getAttribute('alt') || '', natural: img.naturalWidth,
          shown: img.getBoundingClientRect().width, min_text_natural: parseFloat(img.getAttribute('data-min-text-px')),
          overlaps: img.getAttribute('data-overlaps'),
          src: (img.getAttribute('src') || '').slice(0, 80), explorer: !!img.closest('.trustml-explorer')}; })"""
IMAGES_LOADED = "(sel) => [...document.querySelectorAll(sel)].every(i => i.complete)"


def figure_rows(page, selector: str, lesson: str, rendering: str, when: str = "") -> list:
    "Measure every figure `selector` finds on the page: one row per figure, with its shown smallest text in px and its alt text."
    page.wait_for_function(IMAGES_LOADED, arg=selector, timeout=60_000)
    rows = []
    for f in page.evaluate(FIGURES_JS, selector):
        scale = f["shown"] / f["natural"] if f["natural"] else float("nan")
        where = ("explorer" if f["explorer"] else "figure") + (f" in cell {f['cell']}" if f["cell"] >= 0 else "") + f" (#{f['k']})"
        rows.append(dict(lesson=lesson, rendering=rendering, figure=where + (f", {when}" if when else ""), natural_px=f["natural"],
                         shown_px=round(f["shown"], 1), scale=round(scale, 3), min_text_natural_px=f["min_text_natural"],
                         min_text_px=round(f["min_text_natural"] * scale, 2) if f["min_text_natural"] == f["min_text_natural"] else None,
                         overlaps=f["overlaps"], alt=f["alt"], src=f["src"]))
    return rows


def alt_problem(alt: str):
    "Why `alt` is not alt text (None when it is): missing, a file name or path, or not a sentence."
    if not alt.strip(): return "no alt text"
    if re.search(r"\.(png|jpe?g|svg|gif)$", alt.strip(), re.I) or "/" in alt.split()[0] or "_images" in alt: return f"alt is a file name: {alt!r}"
    if len(alt.split()) < 3: return f"alt is not a sentence: {alt!r}"
    return None


FIX_ALT = ("show it with trustml_nb.viz.show_figure(fig, alt='what it shows'), or end the cell with set_alt(fig, '...') / a "
           "new_figure() figure (those display as <img alt>); after set_theme() pyplot figures do too")


def figure_failures(rows: list) -> list:
    "One line per figure that is too small to read or has no alt text, naming the lesson, the rendering and the figure."
    out = []
    for r in rows:
        where = f"{r['lesson']} ({r['rendering']}), {r['figure']}"
        if r["min_text_px"] is None:
            out.append(f"{where}: not shown through trustml_nb.viz.figure_html (no data-min-text-px; src {r['src']!r}): {FIX_ALT}")
        elif r["min_text_px"] < MIN_TEXT_PX:
            out.append(f"{where}: smallest text {r['min_text_px']:.1f} px < {MIN_TEXT_PX:g} px (shown at {r['scale']:.0%} of "
                       f"{r['natural_px']} px; natural smallest text {r['min_text_natural_px']} px)")
        if r.get("overlaps"):   # written by figure_html from viz.readability: legends over data, texts over texts or across an edge
            out.append(f"{where}: drawn over itself: {r['overlaps']}")
        problem = alt_problem(r["alt"])
        if problem: out.append(f"{where}: {problem}: {FIX_ALT}")
    return out


def save_rows(test_output_dir: Path, rendering: str, lesson: str, rows: list):
    folder = test_output_dir / "readability" / rendering
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{lesson}.json").write_text(json.dumps(rows, indent=1))


def _start_lab(root_dir: Path, tmp: Path, log):
    port = free_port()
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
           "--ServerApp.allow_root=True", "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root_dir}",
           "--LabApp.expose_app_in_browser=True", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    env = isolated_jupyter_env(tmp)   # render every cell, not only those in view: explorer screenshots are otherwise blank
    tracker = tmp / "lab-settings" / "@jupyterlab" / "notebook-extension"; tracker.mkdir(parents=True, exist_ok=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    return proc, f"http://127.0.0.1:{port}"


# textContent, not innerText: JupyterLab skips rendering cells scrolled out of view, and innerText is '' there
OUTPUT_TEXT = "() => { const o = document.querySelector('.trustml-explorer .widget-output'); return o ? o.textContent : ''; }"


LAPTOP = {"width": 1280, "height": 800}   # a small laptop's window: figures must read here (issue 16)


def _shoot_explorer(page, explorer, path: Path, viewport: dict):
    "Screenshot the whole explorer at the laptop width: the window grows in height for the shot only, then is restored."
    # JupyterLab scrolls inside its notebook panel, not the window, so an element screenshot of an explorer taller than the
    # window captured whatever else was in view (issue 39 review: lesson 97's shot showed the allocation table)
    height = int(explorer.bounding_box()["height"])
    page.set_viewport_size({"width": viewport["width"], "height": max(viewport["height"], height + 200)})
    try:
        explorer.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)   # let the panel re-layout at the new height
        explorer.screenshot(path=str(path), timeout=30_000)
    finally:
        page.set_viewport_size(viewport)
        explorer.evaluate("e => e.scrollIntoView({block: 'start'})")


def _run_tutorial(page, base_url: str, shots: Path, lesson: Lesson) -> dict:
    page.goto(f"{base_url}/lab/tree/{lesson.notebook}", timeout=90_000, wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext", timeout=90_000)
    # wait for the kernel to be ready before running anything
    page.wait_for_function("() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
                           " return s.session && s.session.kernel && s.session.kernel.connectionStatus === 'connected'"
                           " && s.session.kernel.status === 'idle'; }", timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # the explorer renders its first output once its cell has run
    page.wait_for_function(f"(t) => ({OUTPUT_TEXT})().includes(t)", arg=lesson.ready_text, timeout=lesson.timeout_s * 1000)
    # then every cell must finish: the kernel goes idle and no cell shows '[*]'
    page.wait_for_function("() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
                           " const busy = [...document.querySelectorAll('.jp-InputPrompt')].some(p => p.innerText.includes('*'));"
                           " return s.session.kernel.status === 'idle' && !busy; }", timeout=lesson.timeout_s * 1000)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']:has-text('Traceback'), "
                          ".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']")
    assert errors.count() == 0, f"a cell failed in the browser: {errors.first.inner_text()[:2000]}"
    stem = Path(lesson.notebook).stem
    figures = figure_rows(page, ".jp-OutputArea-output img", stem, "JupyterLab", "after Run All")
    explorer = page.locator(".trustml-explorer").first
    explorer.scroll_into_view_if_needed(timeout=30_000)
    # later cells may drive the widget (clear_output(wait=True), then a redraw): read it once its output has settled
    page.wait_for_function(f"(t) => ({OUTPUT_TEXT})().includes(t)", arg=lesson.ready_text, timeout=60_000)
    before = page.evaluate(OUTPUT_TEXT)
    _shoot_explorer(page, explorer, shots / "explorer_before.png", LAPTOP)
    handle = explorer.locator(".noUi-handle").first
    handle.click(timeout=30_000)
    page.keyboard.press("End")
    if lesson.press_run: explorer.locator("button:has-text('Run')").first.click(timeout=30_000)
    page.wait_for_function(f"([b, want]) => {{ const t = ({OUTPUT_TEXT})(); return t !== b && t.includes(want); }}",
                           arg=[before, lesson.after_text], timeout=lesson.timeout_s * 1000)
    # the redrawn figure arrives as a PNG in the same output area
    page.wait_for_function("() => { const i = document.querySelector('.trustml-explorer .widget-output img');"
                           " return i && i.complete && i.naturalWidth > 100; }", timeout=30_000)
    after = page.evaluate(OUTPUT_TEXT)
    _shoot_explorer(page, explorer, shots / "explorer_after.png", LAPTOP)
    page.screenshot(path=str(shots / "lab_full_page.png"), timeout=30_000)
    figures += figure_rows(page, ".trustml-explorer .widget-output img", stem, "JupyterLab", "explorer after the slider moved")
    return {"before": before, "after": after, "figures": figures}


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.notebook)
def test_tutorial_widget_renders_and_responds_in_chromium(lesson, tmp_path, test_output_dir):
    require_chromium()
    shots = test_output_dir / "browser" / Path(lesson.notebook).stem
    shutil.rmtree(shots, ignore_errors=True); shots.mkdir(parents=True)
    served = tmp_path / "served"
    shutil.copytree(ROOT / "tutorials", served, ignore=shutil.ignore_patterns("_html", ".ipynb_checkpoints"))

    def attempt_once(attempt):
        with open(shots / f"jupyterlab_attempt{attempt}.log", "w") as log:
            proc, base_url = _start_lab(served, tmp_path / f"jupyter{attempt}", log)
            try:
                wait_for_status(base_url, timeout=120, proc=proc)
                # a small laptop's window: figures must read here (issue 16)
                with chromium_page(dict(LAPTOP), shots / f"failure_attempt{attempt}.png") as page:
                    return _run_tutorial(page, base_url, shots, lesson)
            finally:
                stop_process_group(proc)
                assert proc.poll() is not None, "JupyterLab server must be stopped"

    texts, retried_after = twice("browser test", attempt_once)
    if retried_after: print(f"{lesson.notebook}: passed on the retry after: {retried_after}")   # shown by pytest -rA / on failure
    assert lesson.ready_text in texts["before"] and lesson.after_text in texts["after"]
    assert texts["before"] != texts["after"]
    for name in ("explorer_before.png", "explorer_after.png", "lab_full_page.png"):
        assert (shots / name).stat().st_size > 1000, f"{name} missing or empty"
    save_rows(test_output_dir, "jupyterlab", Path(lesson.notebook).stem, texts["figures"])
    assert texts["figures"], "no figure measured"
    bad = figure_failures(texts["figures"])
    assert not bad, f"{len(bad)} figure problem(s) in JupyterLab at 1280 x 800:\n" + "\n".join(bad)


def _measure_apps(page, base_url: str, shots: Path, names) -> dict:
    "Open each app in turn (one Voila server) and measure the figures of its default view."
    from test_apps import IMG_READY, READY_S
    out = {}
    for name in names:
        lesson = next(l for l in LESSONS if l.notebook == f"{name}.ipynb")
        ready_s = READY_S.get(name, lesson.timeout_s)
        page.goto(f"{base_url}/voila/render/{name}.ipynb", timeout=ready_s * 1000, wait_until="domcontentloaded")
        # the app's own default view (its text may differ from the lesson's, which later cells drive): wait for its figure
        page.wait_for_function(IMG_READY, timeout=ready_s * 1000)
        page.screenshot(path=str(shots / f"{name}.png"), timeout=30_000)
        out[name] = {"figures": figure_rows(page, "img", name, "Voila", "default view"),
                     "text": page.evaluate("() => document.body.innerText")}
    return out


@pytest.mark.parametrize("names", [pytest.param("fast", id="first-app"), pytest.param("all", id="every-app", marks=pytest.mark.slow)])
def test_every_app_figure_is_readable_in_voila(names, tmp_path, test_output_dir):
    "The Voila apps' default views at 1280 x 800: every figure's text >= MIN_TEXT_PX, alt text on each, no progress bar left."
    require_chromium()
    from test_apps import APPS, FAST, _offline, _start_voila, _wait_http
    apps = [FAST] if names == "fast" else sorted(p.stem for p in APPS.glob("*.ipynb"))
    only = [a.strip() for a in os.environ.get("TRUSTML_VOILA_APPS", "").split(",") if a.strip()]   # re-measure a few apps
    if only and names == "all": apps = [a for a in apps if a in only]
    shots = test_output_dir / "readability" / "voila_shots"; shots.mkdir(parents=True, exist_ok=True)

    def attempt_once(attempt):
        with open(shots / f"voila_{names}_attempt{attempt}.log", "w") as log:
            proc, base_url = _start_voila(tmp_path / f"voila{attempt}", log)
            try:
                _wait_http(f"{base_url}/", proc)
                with chromium_page(dict(LAPTOP), shots / f"failure_{names}_attempt{attempt}.png") as page:
                    _offline(page, [])
                    return _measure_apps(page, base_url, shots, apps)
            finally:
                stop_process_group(proc)

    out, _ = twice("Voila readability", attempt_once)
    rows = []
    for name in apps:
        save_rows(test_output_dir, "voila", name, out[name]["figures"])
        rows += out[name]["figures"]
        assert out[name]["figures"], f"{name}: the app's default view shows no figure"
        assert not re.search(r"\d+%\|", out[name]["text"]), f"{name}: a progress bar is left on the page"
    bad = figure_failures(rows)
    assert not bad, f"{len(bad)} figure problem(s) in Voila at 1280 x 800:\n" + "\n".join(bad)
