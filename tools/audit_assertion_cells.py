"""Static audit: notebook assertion cells that touch no package code.

For every code cell of nbs/ and tutorials/ that asserts (`assert`, `test_eq`, `test_close`, `test_fail`, ...), collect
the names the cell reads. The cell touches package code when it reads a name that trustml_nb defines (any module's
public or private top-level name, the module itself, or what the notebook's export cells define) or a *tainted* name:
one assigned, in this or an earlier cell, by a statement that read a package name or another tainted name. A cell
reading neither asserts only on values computed without the package: it would pass with the package removed or
replaced. Such cells are listed; exit status 1 when any is found.

    .venv/bin/python tools/audit_assertion_cells.py            # writes benchmarks/results/assertion_cell_audit.md
"""
import ast
import builtins
import importlib
import json
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSERTS = {'test_eq', 'test_close', 'test_fail', 'test_ne', 'test_is', 'test_warns', 'test_eq_type', 'test_shuffled', 'expect_fail',
           'assert_allclose', 'assert_array_equal', 'assert_frame_equal'}


def package_names() -> set:
    import trustml_nb
    names = {'trustml_nb'}
    for m in pkgutil.iter_modules(trustml_nb.__path__):
        if m.name.startswith('_'): continue
        names.add(m.name)
        try: mod = importlib.import_module(f'trustml_nb.{m.name}')
        except ImportError: continue
        names.update(n for n in vars(mod) if not n.startswith('__'))
    return names - set(dir(builtins)) - {'np', 'pd', 'plt', 'warnings', 'torch', 'sys', 'os', 'time', 're', 'math', 'itertools'}


def _code(cell) -> str:
    lines = ''.join(cell['source']).splitlines()
    return '\n'.join(l for l in lines if not l.lstrip().startswith(('%', '!')))


def _asserts(tree) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert): return True
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, 'id', '')
            if name in ASSERTS: return True
    return False


def _reads(node) -> set:
    r = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return r | {n.value.id for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}


def _targets(node) -> set:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)): return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)): return {a.asname or a.name.split('.')[0] for a in node.names}
    out = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    # containers filled in place: rows.append(...), fits[k] = ..., df.loc[...] = ...
    out |= {n.func.value.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)}
    out |= {n.value.id for n in ast.walk(node) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)}
    return out


def audit(nb_path: Path, pkg: set) -> list:
    "(cell index, first line of the assertion) for every assertion statement that reads no package or tainted name."
    cells = json.loads(nb_path.read_text())['cells']
    tainted, flagged = set(pkg), []
    for i, cell in enumerate(cells):
        if cell['cell_type'] != 'code': continue
        src = _code(cell)
        try: tree = ast.parse(src)
        except SyntaxError: continue
        if src.lstrip().startswith(('#| export', '#|export')):
            for st in tree.body: tainted |= _targets(st)            # the package's own definitions
            continue
        for st in tree.body:
            if isinstance(st, (ast.For, ast.While, ast.With, ast.If, ast.Try)) and (_reads(st) & tainted):
                tainted |= _targets(st)                                  # a block that reads package values taints what it assigns
            if _asserts(st) and not (_reads(st) & tainted):
                flagged.append((i, ast.get_source_segment(src, st).splitlines()[0][:100]))
            if ((isinstance(st, ast.ImportFrom) and (st.module or '').startswith('trustml_nb'))
                    or (isinstance(st, ast.Import) and any(a.name.split('.')[0] == 'trustml_nb' for a in st.names)) or (_reads(st) & tainted)):
                tainted |= _targets(st)
    return flagged


def main():
    sys.path.insert(0, str(ROOT))
    pkg = package_names()
    notebooks = sorted((ROOT / 'nbs').glob('*.ipynb')) + sorted((ROOT / 'tutorials').glob('*.ipynb'))
    rows, n_cells = [], 0
    for nb in notebooks:
        for i, first in audit(nb, pkg): rows.append(f"| {nb.relative_to(ROOT)} | {i} | `{first}` |")
    out = ROOT / 'benchmarks' / 'results'
    text = ['# Assertion statements in notebooks that read no value computed by package code', '',
            f'{len(rows)} flagged in {len(notebooks)} notebooks (`tools/audit_assertion_cells.py`).', '',
            '| notebook | cell | first line |', '|---|---|---|', *rows]
    (out / 'assertion_cell_audit.md').write_text('\n'.join(text) + '\n')
    print('\n'.join(text))
    sys.exit(1 if rows else 0)


if __name__ == '__main__':
    main()
