"Helpers to start, poll and stop a JupyterLab server in tests; every wait is bounded."
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path


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
