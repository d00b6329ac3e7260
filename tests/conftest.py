"Shared pytest setup: headless matplotlib, quiet progress bars, repository paths."
import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("TRUSTML_NB_PROGRESS", "0")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def test_output_dir() -> Path:
    "Folder for screenshots and logs that tests leave behind for humans to inspect."
    out = ROOT / "test-output"
    out.mkdir(exist_ok=True)
    return out
