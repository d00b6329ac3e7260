"""Every notebook in nbs/ and tutorials/ runs as one pytest test, through nbdev's own runner.

Cells carrying a flag listed in `[tool.nbdev] tst_flags` (pyproject.toml) are skipped, exactly as
`nbdev-test` does. Tutorials run with their own folder as the working directory, as in JupyterLab.
`make test-slow` runs `test_notebook_with_slow_cells` (marked slow): every notebook that has `#| slow` cells, with them.
"""
import json
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


def _has_slow_cells(nb: Path) -> bool:
    cells = json.loads(nb.read_text())['cells']
    return any(c['cell_type'] == 'code' and any(l.strip().startswith('#| slow') or l.strip().startswith('#|slow') for l in c['source'])
               for c in cells)


SLOW_NOTEBOOKS = [nb for nb in NOTEBOOKS if _has_slow_cells(nb)]


def test_notebooks_found():
    names = {nb.name for nb in NOTEBOOKS}
    assert {"00_core.ipynb", "01_groups.ipynb", "02_data.ipynb", "03_viz.ipynb", "index.ipynb", "00_start_here.ipynb"} <= names
    assert SKIP_FLAGS == ["notest", "slow"]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook(nb, monkeypatch):
    monkeypatch.chdir(nb.parent)
    ok, seconds = run_notebook(nb, skip_flags=SKIP_FLAGS)
    assert ok, f"{nb.relative_to(ROOT)} failed after {seconds:.1f}s: the traceback is in the captured stderr above"


@pytest.mark.slow
@pytest.mark.parametrize("nb", SLOW_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_with_slow_cells(nb, monkeypatch):
    "The notebook again, its `#| slow` cells included (only `notest` cells are skipped)."
    monkeypatch.chdir(nb.parent)
    ok, seconds = run_notebook(nb, skip_flags=[f for f in SKIP_FLAGS if f != "slow"])
    assert ok, f"{nb.relative_to(ROOT)} (slow cells included) failed after {seconds:.1f}s: the traceback is in the captured stderr above"
