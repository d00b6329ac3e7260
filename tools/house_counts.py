"""Count the shape of the house (issue 34): cell sizes, definitions per cell, private names imported across modules,
inline progress conversions, seed parameter names and keyword-only estimator parameters.

    .venv/bin/python tools/house_counts.py            # prints the table
    .venv/bin/python tools/house_counts.py --markdown # the same as a markdown table

Exported cells are the code cells of nbs/*.ipynb whose first line is `#| export` or `#| exports`; a cell's size is its
number of lines (the `#| export` line included). Definitions are top-level `def` and `class` statements (ast).
"""
import argparse
import ast
import importlib
import inspect
import json
import pkgutil
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPORT = re.compile(r'^#\|\s*exports?\b')
# `progress(..., disable=None if show_progress is None else not show_progress)` written out instead of progress(show=...)
INLINE_PROGRESS = re.compile(r'None if [\w.]*show_progress is None else not [\w.]*show_progress')
SEED_ALIASES = ('random_state', 'init_seed')


def exported_cells(nbs: Path = ROOT / 'nbs') -> list:
    "(notebook, cell index, non-blank lines, top-level definitions) for every exported code cell."
    out = []
    for nb in sorted(nbs.glob('*.ipynb')):
        cells = json.loads(nb.read_text())['cells']
        for i, c in enumerate(cells):
            src = ''.join(c['source']) if isinstance(c['source'], list) else c['source']
            if c['cell_type'] != 'code' or not src or not EXPORT.match(src.lstrip().splitlines()[0]): continue
            lines = src.splitlines()
            try: defs = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in ast.parse(src).body)
            except SyntaxError: defs = 0
            out.append((nb.name, i, len(lines), defs))
    return out


def private_cross_imports(pkg: Path = ROOT / 'trustml_nb') -> list:
    "(module, imported module, name) for every private name one package module imports from another."
    out = []
    for py in sorted(pkg.glob('*.py')):
        if py.name.startswith('_'): continue
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or '').startswith('trustml_nb')):
                out += [(py.stem, node.module, a.name) for a in node.names if a.name.startswith('_') and not a.name.startswith('__')]
    return out


def inline_progress(pkg: Path = ROOT / 'trustml_nb') -> list:
    "(module, line number) of every inline show_progress -> disable conversion."
    return [(py.stem, i + 1) for py in sorted(pkg.glob('*.py')) for i, l in enumerate(py.read_text().splitlines())
            if INLINE_PROGRESS.search(l)]


def _public_callables():
    import trustml_nb
    from sklearn.base import BaseEstimator
    for m in pkgutil.iter_modules(trustml_nb.__path__):
        if m.name.startswith('_'): continue
        try: mod = importlib.import_module(f'trustml_nb.{m.name}')
        except ImportError: continue
        for name, obj in vars(mod).items():
            if name.startswith('_') or getattr(obj, '__module__', None) != mod.__name__: continue
            if inspect.isclass(obj): yield f'{m.name}.{name}', obj.__init__, issubclass(obj, BaseEstimator) and name != 'Estimator'  # the skeleton itself is abstract
            elif inspect.isfunction(obj): yield f'{m.name}.{name}', obj, False


def seed_aliases(deprecated:bool=False) -> list:
    "(callable, parameter) for every public parameter named random_state or init_seed (deprecated=True: only old keywords kept for one release: declared Renamed, or defaulting to core.DEPRECATED)."
    from trustml_nb.core import DEPRECATED, Renamed
    out = []
    for qual, fn, _ in _public_callables():
        try: params = inspect.signature(fn).parameters
        except (TypeError, ValueError): continue
        mod, _, name = qual.partition('.')
        cls = getattr(importlib.import_module(f'trustml_nb.{mod}'), name.split('.')[0], None)
        declared = getattr(cls, 'parameters', {}) if inspect.isclass(cls) else {}
        old = lambda p: isinstance(declared.get(p), Renamed) or isinstance(params[p].default, str) and params[p].default == DEPRECATED
        out += [(qual, p) for p in params if p in SEED_ALIASES and old(p) == deprecated]
    return out


def estimator_keyword_only() -> tuple:
    "(estimators whose __init__ parameters are all keyword-only, all estimators)."
    ok, every = [], []
    for qual, init, is_est in _public_callables():
        if not is_est: continue
        every.append(qual)
        ps = [p for p in inspect.signature(init).parameters.values() if p.name != 'self']
        if all(p.kind == p.KEYWORD_ONLY for p in ps): ok.append(qual)
    return ok, every


def estimators_on_skeleton() -> tuple:
    "(estimators built on core.Estimator whose fit begins with self._validate_params() and calls self._fit, all estimators)."
    import ast, textwrap
    from trustml_nb.core import Estimator
    ok, every = [], []
    for qual, init, is_est in _public_callables():
        if not is_est: continue
        every.append(qual)
        cls = init.__globals__.get(qual.rsplit('.', 1)[1]) if hasattr(init, '__globals__') else None
        cls = cls if isinstance(cls, type) else None
        if cls is None or not issubclass(cls, Estimator) or not hasattr(cls, '_fit'): continue
        body = ast.parse(textwrap.dedent(inspect.getsource(cls.fit))).body[0].body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant): body = body[1:]
        if body and 'self._validate_params()' in ast.unparse(body[0]): ok.append(qual)
    return ok, every


def counts() -> dict:
    cells = exported_cells()
    sizes = [c[2] for c in cells]
    kw_ok, estimators = estimator_keyword_only()
    sk_ok, _ = estimators_on_skeleton()
    return {
        'exported cells': len(cells),
        'exported cells over 80 lines': sum(s > 80 for s in sizes),
        'exported cells over 100 lines': sum(s > 100 for s in sizes),
        'median exported cell lines': statistics.median(sizes) if sizes else 0,
        'largest exported cell (lines)': max(sizes, default=0),
        'mean definitions per exported cell': round(statistics.mean(c[3] for c in cells), 2) if cells else 0,
        'exported cells with >= 2 definitions': sum(c[3] >= 2 for c in cells),
        'exported cells with >= 5 definitions': sum(c[3] >= 5 for c in cells),
        'private names imported across modules': len(private_cross_imports()),
        'inline progress conversions': len(inline_progress()),
        'public parameters named random_state/init_seed': len(seed_aliases()),
        '  ... kept one release as deprecated old keywords': len(seed_aliases(deprecated=True)),
        'estimators with keyword-only parameters': f'{len(kw_ok)} of {len(estimators)}',
        'estimators on the one skeleton (core.Estimator)': f'{len(sk_ok)} of {len(estimators)}',
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--markdown', action='store_true', help='print a markdown table')
    ap.add_argument('--details', action='store_true', help='also list the offending places')
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    c = counts()
    if args.markdown:
        print('| measure | value |\n|---|---|')
        for k, v in c.items(): print(f'| {k} | {v} |')
    else:
        w = max(map(len, c))
        for k, v in c.items(): print(f'{k:<{w}}  {v}')
    if args.details:
        print('\ncells over 80 lines:', [(nb, i, n) for nb, i, n, _ in exported_cells() if n > 80])
        print('private cross-module imports:', private_cross_imports())
        print('inline progress conversions:', inline_progress())
        print('seed aliases:', seed_aliases())
        ok, every = estimator_keyword_only()
        print('estimators without keyword-only parameters:', sorted(set(every) - set(ok)))


if __name__ == '__main__':
    main()
