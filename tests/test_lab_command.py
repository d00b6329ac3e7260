"The README's main command (`make lab`) starts JupyterLab on 127.0.0.1: start it, poll its status endpoint, stop it."
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from lab_helpers import free_port, isolated_jupyter_env, stop_process_group, wait_for_status

ROOT = Path(__file__).resolve().parents[1]


def test_make_lab_serves_the_first_tutorial(tmp_path, test_output_dir):
    port, token = free_port(), "trustml-lab-test"
    env = isolated_jupyter_env(tmp_path)
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "data")  # the kernel registration lands here, not in ~/.local
    log_path = test_output_dir / "make_lab.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "lab", f"LAB_PORT={port}",
             f"LAB_FLAGS=--no-browser --IdentityProvider.token={token} --ServerApp.port_retries=0"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = wait_for_status(f"http://127.0.0.1:{port}", token, timeout=180, proc=proc)
            assert "started" in status
            url = f"http://127.0.0.1:{port}/api/contents/tutorials/00_start_here.ipynb?content=0&token={token}"
            with urllib.request.urlopen(url, timeout=10) as r:
                assert json.loads(r.read())["type"] == "notebook"
            kernels = tmp_path / "data" / "kernels" / "trustml_nb" / "kernel.json"
            assert kernels.exists(), "make lab must register the trustml_nb kernel"
            assert json.loads(kernels.read_text())["argv"][0].startswith(str(ROOT / ".venv"))
        finally:
            stop_process_group(proc)
    text = log_path.read_text()
    assert "starting JupyterLab on http://127.0.0.1" in text, text[-2000:]
    assert f"127.0.0.1:{port}" in text, text[-2000:]
