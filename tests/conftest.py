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


# Under pytest-xdist (`make test` runs 2 workers with --dist loadgroup) these tests stay on one worker each:
# the browser lessons (each drives its own JupyterLab and chromium) and everything that starts a Ray cluster (Flower).
XDIST_GROUPS = {"browser": ("tests/test_browser.py",),
                "ray": ("tests/test_fedfact.py::test_flower", "nbs/21_fedfact_flower.ipynb", "tutorials/20_fedfact.ipynb")}


def _xdist_group(nodeid: str):
    for name, prefixes in XDIST_GROUPS.items():
        if any(nodeid.startswith(p) or f"[{p}]" in nodeid for p in prefixes): return name
    return None


def pytest_collection_modifyitems(config, items):
    "Group tests for pytest-xdist; tests marked slow run only with --runslow or TRUSTML_NB_SLOW=1 (make test-slow)."
    for item in items:
        group = _xdist_group(item.nodeid)
        if group: item.add_marker(pytest.mark.xdist_group(group))
    if config.getoption("--runslow") or os.environ.get("TRUSTML_NB_SLOW") == "1": return
    skip = pytest.mark.skip(reason="slow study: run with `make test-slow`")
    for item in items:
        if "slow" in item.keywords: item.add_marker(skip)


def pytest_sessionfinish(session):
    "On an xdist worker, hand the bad-input outcomes to the controller, which prints the totals."
    if not hasattr(session.config, "workeroutput"): return
    try: import badinput
    except ImportError: return
    session.config.workeroutput["badinput_outcomes"] = [list(o) for o in badinput.OUTCOMES]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    "xdist controller: collect each worker's bad-input outcomes."
    outcomes = getattr(node, "workeroutput", {}).get("badinput_outcomes", [])
    if not outcomes: return
    import badinput
    badinput.OUTCOMES.extend(tuple(o) for o in outcomes)


def pytest_terminal_summary(terminalreporter):
    "Totals of the bad-input sweep (tests/badinput.py), when any sweep ran."
    try: import badinput
    except ImportError: return
    s = badinput.summary()
    if not s['calls']: return
    c = s['counts']
    terminalreporter.write_sep('-', 'bad-input sweep')
    terminalreporter.write_line(
        f"{s['calls']} calls: {c.get(badinput.CLEAR, 0)} clear trustml_nb errors naming the argument, "
        f"{c.get(badinput.CORRECT, 0)} correct results; ended well: {s['ok_share']:.1%}; "
        f"silent wrong results {c.get(badinput.SILENT, 0) + c.get(badinput.FAILED_CHECK, 0)}, "
        f"deep third-party tracebacks {c.get(badinput.DEEP, 0)}, errors not naming the argument {c.get(badinput.UNNAMED, 0)}, "
        f"wrong exception type {c.get(badinput.WRONG_TYPE, 0)}")
    by_mod = {}
    for m, _, o in badinput.OUTCOMES: by_mod.setdefault(m or '?', []).append(o)
    for m, outs in sorted(by_mod.items()):
        ok = sum(o in (badinput.CLEAR, badinput.CORRECT) for o in outs)
        terminalreporter.write_line(f"  {m}: {len(outs)} calls, {ok} ended well")
