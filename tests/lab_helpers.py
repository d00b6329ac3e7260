"Helpers for the server and browser tests: start, poll and stop a server; a chromium page; one retry. Every wait is bounded."
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]


def require_chromium():
    "Skip without Debian chromium, or fail under CI (where .ci/run installs it)."
    if Path(CHROMIUM).exists(): return
    msg = "Debian chromium not found (apt-get install chromium); .ci/run installs it"
    if os.environ.get("CI"): pytest.fail(msg)
    pytest.skip(msg)


@contextmanager
def chromium_page(viewport: dict, failure_shot: Path):
    "A page in headless Debian chromium (60 s default timeout); if the block raises, a screenshot to `failure_shot` first."
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS, timeout=60_000)
        try:
            page = browser.new_page(viewport=viewport)
            page.set_default_timeout(60_000)
            try: yield page
            except Exception:
                try: page.screenshot(path=str(failure_shot), timeout=10_000)
                except Exception: pass
                raise
        finally:
            browser.close()


def twice(what: str, attempt_once):
    "Call `attempt_once(attempt)` for attempt 1, then 2 if the first failed; (its result, the first failure or ''). Fails the test after two."
    from playwright.sync_api import Error as PlaywrightError
    failures = []
    for attempt in (1, 2):  # one retry: each attempt starts its own server and browser
        try: return attempt_once(attempt), (failures[0] if failures else '')
        except (PlaywrightError, AssertionError, TimeoutError, RuntimeError) as e:
            failures.append(f"attempt {attempt}: {type(e).__name__}: {e}")
    pytest.fail(f"{what} failed twice:\n" + "\n".join(failures))


def free_port() -> int:
    "A TCP port on 127.0.0.1 that is free right now."
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_status(base_url: str, token: str = "", timeout: float = 120.0, proc=None) -> dict:
    "Poll `{base_url}/api/status` until it answers 200; return its JSON. Fails after `timeout` seconds."
    url = f"{base_url}/api/status" + (f"?token={token}" if token else "")
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server process exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200: return json.loads(r.read())
        except (urllib.error.URLError, ConnectionError, OSError) as e:
            last = e
        time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s (last error: {last})")


def stop_process_group(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    "Stop `proc` and its children (started with start_new_session=True): SIGTERM, then SIGKILL."
    if proc.poll() is not None: return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try: os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError: pass
        proc.wait(timeout=timeout)


def isolated_jupyter_env(tmp: Path) -> dict:
    "Environment whose Jupyter config, data, runtime and lab settings live under `tmp`, with news/update checks off."
    env = dict(os.environ)
    for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"), ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"),
                     ("IPYTHONDIR", "ipython")]:
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / sub)
    notif = tmp / "lab-settings" / "@jupyterlab" / "apputils-extension"
    notif.mkdir(parents=True, exist_ok=True)
    (notif / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    return env
