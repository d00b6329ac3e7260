"""The lesson explorers as code-free Voila apps (apps/*.ipynb, served by `make apps`), checked in Debian chromium.

Each test starts a fresh Voila server on 127.0.0.1 (free port) with the repository's `trustml` template
(share/jupyter/voila/templates/trustml: Voila's lab template without its CDN links), opens one app in a 1280x800
window in which every request that does not go to 127.0.0.1 is aborted (the app must work offline), waits for the
explorer's first render, pushes the first slider to its maximum (End key; Run where the explorer has one) and waits
for the output to change. Screenshots go to test-output/apps/<app>/. Every wait has a timeout; a failed attempt is
retried once with a fresh server; the server is stopped even on failure. The default suite opens the list of apps
and the first lesson's app; `--runslow` opens all twelve.
"""
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from lab_helpers import chromium_page, free_port, isolated_jupyter_env, require_chromium, stop_process_group, twice
from test_browser import LESSONS, OUTPUT_TEXT

ROOT = Path(__file__).resolve().parents[1]
APPS = ROOT / "apps"
TEMPLATE_PATH = ROOT / "share" / "jupyter"
FAST = "00_start_here"  # the app the default suite opens (its setup takes a few seconds)
READY_S = {FAST: 90}  # bound on opening an app and its first render (others: the lesson's timeout_s, 180 s)
VIEWPORT = {"width": 1280, "height": 800}
# the explorer's figure arrives as a PNG in its output area (every lesson explorer draws one)
IMG_READY = ("() => { const i = document.querySelector('.trustml-explorer .widget-output img');"
             " return i && i.complete && i.naturalWidth > 100"
             " && !document.querySelector('.trustml-explorer').innerText.includes('computing...'); }")


def _apps():
    return sorted(p.stem for p in APPS.glob("*.ipynb"))


def test_every_lesson_explorer_has_an_app():
    "One app per lesson in tests/test_browser.py's LESSONS, each a title, one line of context, setup code and the explorer."
    assert _apps() == sorted(Path(l.notebook).stem for l in LESSONS)
    for name in _apps():
        nb = nbformat.read(APPS / f"{name}.ipynb", as_version=4)
        md, *code = nb.cells
        assert md.cell_type == "markdown" and md.source.startswith("# "), name
        title, context = [l for l in md.source.splitlines() if l.strip()][:2]
        assert len(title) > 5 and f"(lesson {name[:2]})" in context, (name, context)
        assert [c.cell_type for c in code] == ["code", "code"] and code[-1].source.strip() == "ex", name
        assert "from trustml_nb" in code[0].source and not any(c.get("outputs") for c in code), name
        # the app builds the same explorer as its lesson
        lesson = nbformat.read(ROOT / "tutorials" / f"{name}.ipynb", as_version=4)
        builders = {w for w in ("explorer(", "pse_explorer(", "fedfact_explorer(", "gam_explorer(", "fairdice_explorer(",
                                "mc_explorer(", "omni_explorer(", "mifpo_explorer(", "oath_explorer(", "selection_explorer(",
                                "ecosystem_explorer(", "quere_explorer(") if w in code[0].source}
        assert builders and all(any(b in c.source for c in lesson.cells if c.cell_type == "code") for b in builders), (name, builders)


def test_template_drops_the_cdn_links():
    "The trustml template renders Voila's lab page without the links to cdn.jsdelivr.net that the stock template has."
    stock = (Path(sys.prefix) / "share" / "jupyter" / "voila" / "templates" / "lab" / "index.html.j2").read_text()
    ours = (TEMPLATE_PATH / "voila" / "templates" / "trustml" / "index.html.j2").read_text()
    links = [l.strip() for l in stock.splitlines() if "https://cdn." in l and "<link" in l]
    assert len(links) == 2, "Voila's lab template changed: check the links that share/jupyter/voila/templates/trustml removes"
    for link in links: assert link in ours, link      # each is named in a replace() filter of our template
    page = (TEMPLATE_PATH / "voila" / "templates" / "trustml" / "page.html").read_text()
    assert "https://" not in page


def _start_voila(tmp: Path, log):
    port = free_port()
    env = isolated_jupyter_env(tmp)
    env["JUPYTER_PATH"] = str(TEMPLATE_PATH)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env["TRUSTML_NB_PROGRESS"] = "0"
    cmd = [sys.executable, str(ROOT / "tools" / "serve_apps.py"), str(APPS), "--no-browser", "--Voila.ip=127.0.0.1", f"--port={port}",
           "--template=trustml"]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp)
    return proc, f"http://127.0.0.1:{port}"


def _wait_http(url: str, proc, timeout: float = 120.0):
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        if proc.poll() is not None: raise RuntimeError(f"voila exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200: return
        except (urllib.error.URLError, ConnectionError, OSError) as e: last = e
        time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s (last error: {last})")


def _offline(page, blocked: list):
    "Abort every request that leaves 127.0.0.1 and note it."
    def handle(route):
        url = route.request.url
        if url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")): return route.continue_()
        blocked.append(url); return route.abort()
    page.route("**/*", handle)


def _drive_app(page, base_url: str, shots: Path, name: str) -> dict:
    lesson = next(l for l in LESSONS if l.notebook == f"{name}.ipynb")
    if lesson.app_texts: lesson = dataclasses.replace(lesson, ready_text=lesson.app_texts[0], after_text=lesson.app_texts[1])
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # Voila runs the app's setup before the page arrives. Its first renders used to stall until a timeout (the missed
    # shell wake-up that tools/kernel_wakeup.py fixes, installed by tools/serve_apps.py); the fast app keeps a short first
    # wait and a retry in case a page still does not come.
    ready_s = READY_S.get(name, lesson.timeout_s)
    page.goto(f"{base_url}/voila/render/{name}.ipynb", timeout=ready_s * 1000, wait_until="domcontentloaded")
    page.wait_for_function(f"(t) => ({OUTPUT_TEXT})().includes(t)", arg=lesson.ready_text, timeout=ready_s * 1000)
    page.wait_for_function(IMG_READY, timeout=60_000)
    title = page.locator("h1").first.inner_text(timeout=30_000)
    body = page.evaluate("() => document.body.innerText")
    before = page.evaluate(OUTPUT_TEXT)
    page.screenshot(path=str(shots / "app_before.png"), timeout=30_000)
    explorer = page.locator(".trustml-explorer").first
    explorer.locator(".noUi-handle").first.click(timeout=30_000)
    page.keyboard.press("End")
    if lesson.press_run: explorer.locator("button:has-text('Run')").first.click(timeout=30_000)
    page.wait_for_function(f"([b, want]) => {{ const t = ({OUTPUT_TEXT})(); return t !== b && t.includes(want); }}",
                           arg=[before, lesson.after_text], timeout=lesson.timeout_s * 1000)
    page.wait_for_function(IMG_READY, timeout=60_000)
    after = page.evaluate(OUTPUT_TEXT)
    page.screenshot(path=str(shots / "app_after.png"), timeout=30_000)
    page.screenshot(path=str(shots / "app_after_full_page.png"), full_page=True, timeout=30_000)
    return {"before": before, "after": after, "title": title, "body": body, "errors": errors,
            "ready": lesson.ready_text, "want": lesson.after_text}


def _run(name: str, tmp_path: Path, shots: Path, drive) -> dict:
    def attempt_once(attempt):
        with open(shots / f"voila_attempt{attempt}.log", "w") as log:
            proc, base_url = _start_voila(tmp_path / f"voila{attempt}", log)
            try:
                _wait_http(f"{base_url}/", proc)
                with chromium_page(VIEWPORT, shots / f"failure_attempt{attempt}.png") as page:
                    blocked = []
                    _offline(page, blocked)
                    return {**drive(page, base_url, shots, name), "blocked": blocked}
            finally:
                stop_process_group(proc)
                assert proc.poll() is not None, "Voila server must be stopped"

    out, retried_after = twice("Voila app test", attempt_once)
    if retried_after: print(f"{name}: passed on the retry after: {retried_after}")
    return out


def _shots(test_output_dir: Path, name: str) -> Path:
    shots = test_output_dir / "apps" / name
    shutil.rmtree(shots, ignore_errors=True); shots.mkdir(parents=True)
    return shots


def _drive_tree(page, base_url, shots, name):
    "The page `make apps` opens on: the list of apps."
    page.goto(f"{base_url}/", timeout=60_000, wait_until="networkidle")
    page.wait_for_function("() => document.body.innerText.includes('00_start_here')", timeout=60_000)
    text = page.evaluate("() => document.body.innerText")
    page.screenshot(path=str(shots / "app_list.png"), timeout=30_000)
    return {"list": text}


def _drive_list_then_app(page, base_url, shots, name):
    "The default suite's run: the list page, then the first lesson's app, with one server (saves a Voila start)."
    return {**_drive_tree(page, base_url, shots, name), **_drive_app(page, base_url, shots, name)}


@pytest.mark.browser
@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n == FAST else [pytest.mark.slow]) for n in _apps()])
def test_voila_app_responds_offline_in_chromium(name, tmp_path, test_output_dir):
    require_chromium()
    shots = _shots(test_output_dir, name)
    out = _run(name, tmp_path, shots, _drive_list_then_app if name == FAST else _drive_app)
    (shots / "texts.json").write_text(json.dumps(out, indent=1))
    md = nbformat.read(APPS / f"{name}.ipynb", as_version=4).cells[0].source
    assert out["title"].strip().rstrip("¶#").strip() == md.splitlines()[0][2:].strip()
    setup = nbformat.read(APPS / f"{name}.ipynb", as_version=4).cells[1].source
    shown = [l for l in setup.splitlines() if len(l.strip()) > 12 and l.strip() in out["body"]]
    assert not shown, f"the app shows its code: {shown[:3]}"
    assert out["ready"] in out["before"] and out["want"] in out["after"] and out["before"] != out["after"]
    assert not out["errors"], out["errors"]
    assert all("cdn" not in u for u in out["blocked"]), f"the app page asked a CDN: {out['blocked']}"
    for shot in ("app_before.png", "app_after.png"):
        assert (shots / shot).stat().st_size > 5000, f"{shot} missing or empty"
    if name == FAST:   # `make apps` opens on a list of every app; that page asks nothing of the network either
        for app in _apps(): assert f"{app}.ipynb" in out["list"], app
        assert out["blocked"] == [], f"the list or app page asked the network: {out['blocked']}"
