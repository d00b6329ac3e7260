"""Real-browser test: JupyterLab + Debian chromium (driven by Playwright) run each tutorial and move its first slider.

Starts a fresh JupyterLab on 127.0.0.1 (free port, test-only empty token) serving a copy of tutorials/, opens
each lesson in LESSONS, runs all cells, checks that no cell failed, presses End on the threshold slider and waits for
the explorer's output to change. Screenshots go to test-output/browser/<lesson>/. Every wait has a timeout; a failed attempt
is retried once with a fresh server; the server is stopped even on failure.
"""
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
    Lesson("97_distributive_fairness.ipynb", ready_text="HP7, money 5:", after_text="HP7, money 20:"),  # the check-yourself cell leaves HP7 with 5 units
    Lesson("98_unreal.ipynb", ready_text="ratio 10, homophily 0.80", after_text="ratio 20, homophily", press_run=True),
]

pytestmark = pytest.mark.browser


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
    explorer = page.locator(".trustml-explorer").first
    explorer.scroll_into_view_if_needed(timeout=30_000)
    # later cells may drive the widget (clear_output(wait=True), then a redraw): read it once its output has settled
    page.wait_for_function(f"(t) => ({OUTPUT_TEXT})().includes(t)", arg=lesson.ready_text, timeout=60_000)
    before = page.evaluate(OUTPUT_TEXT)
    explorer.screenshot(path=str(shots / "explorer_before.png"), timeout=30_000)
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
    explorer.screenshot(path=str(shots / "explorer_after.png"), timeout=30_000)
    page.screenshot(path=str(shots / "lab_full_page.png"), timeout=30_000)
    return {"before": before, "after": after}


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
                with chromium_page({"width": 1280, "height": 800}, shots / f"failure_attempt{attempt}.png") as page:
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
