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


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    "Tests marked slow run only with --runslow or TRUSTML_NB_SLOW=1 (make test-slow)."
    if config.getoption("--runslow") or os.environ.get("TRUSTML_NB_SLOW") == "1": return
    skip = pytest.mark.skip(reason="slow study: run with `make test-slow`")
    for item in items:
        if "slow" in item.keywords: item.add_marker(skip)
