"""Every notebook in nbs/ and tutorials/ runs as one pytest test, through nbdev's own runner.

Cells carrying a flag listed in `[tool.nbdev] tst_flags` (pyproject.toml) are skipped, exactly as
`nbdev-test` does. Tutorials run with their own folder as the working directory, as in JupyterLab.
"""
from pathlib import Path

import pytest
from nbdev.config import get_config
from nbdev.test import test_nb as run_notebook  # renamed so pytest does not collect it

ROOT = Path(__file__).resolve().parents[1]
CFG = get_config(ROOT)
SKIP_FLAGS = CFG.tst_flags.split() if isinstance(CFG.tst_flags, str) else list(CFG.tst_flags)


def _notebooks():
    found = []
    for folder in (CFG.nbs_path, ROOT / "tutorials"):
        for nb in sorted(Path(folder).rglob("*.ipynb")):
            rel = nb.relative_to(ROOT)
            if any(part.startswith((".", "_")) for part in rel.parts): continue
            found.append(nb)
    return found


NOTEBOOKS = _notebooks()


def test_notebooks_found():
    names = {nb.name for nb in NOTEBOOKS}
    assert {"00_core.ipynb", "01_groups.ipynb", "02_data.ipynb", "03_viz.ipynb", "index.ipynb", "00_start_here.ipynb"} <= names
    assert SKIP_FLAGS == ["notest", "slow"]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook(nb, monkeypatch):
    monkeypatch.chdir(nb.parent)
    ok, seconds = run_notebook(nb, skip_flags=SKIP_FLAGS)
    assert ok, f"{nb.relative_to(ROOT)} failed after {seconds:.1f}s: the traceback is in the captured stderr above"
