"""Every module's top-level imports are covered by the package's base dependencies (pyproject's [project]
dependencies and what they pull in); optional libraries go through core.require inside functions. A lean install
(`pip install trustml_nb[lessons]`) found trustml_nb.llm importing fastcore, which only the dev extra had."""
import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPTIONAL_MODULES = {'fedfact_flower'}   # needs the `fl` extra to import at all (documented; tests skip it without flwr)


def _norm(name:str)->str: return re.sub(r'[-_.]+', '-', name).lower()


def _req_name(req:str)->str: return _norm(re.split(r'[\s<>=!~;\[(]', req.strip(), maxsplit=1)[0])


def _closure(names)->set:
    "The distributions `names` install, following installed metadata (requirements behind an extra are skipped)."
    seen, todo = set(), [_norm(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen: continue
        seen.add(name)
        try: reqs = requires(name) or []
        except PackageNotFoundError: continue
        todo += [_req_name(r) for r in reqs if 'extra ==' not in r and 'extra==' not in r]
    return seen


def _top_level_imports(path:Path)->set:
    "Names imported by statements at module level (not inside functions), relative imports excluded."
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import): names |= {a.name.split('.')[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module: names.add(node.module.split('.')[0])
    return names


def test_module_level_imports_are_base_dependencies():
    deps = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['dependencies']
    allowed = _closure(_req_name(d) for d in deps)
    dists = packages_distributions()
    missing = {}
    for path in sorted((ROOT / 'trustml_nb').glob('*.py')):
        if path.stem.startswith('_') or path.stem in OPTIONAL_MODULES: continue
        for name in _top_level_imports(path) - set(sys.stdlib_module_names) - {'__future__', 'trustml_nb'}:
            provided = {_norm(d) for d in dists.get(name, [name])}
            if not provided & allowed: missing.setdefault(path.stem, []).append(f"{name} ({', '.join(sorted(provided))})")
    assert not missing, f"module-level imports not covered by [project] dependencies (add them, or import through core.require): {missing}"
