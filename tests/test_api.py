"""Package-wide checks of the one API (CONTRIBUTING.md): every report is documented and named, every estimator keeps
scikit-learn's rules and has a contract test, nothing silences warnings wholesale, and no lesson or test reads numbers
back out of displayed text."""
import importlib
import inspect
import pkgutil
import re
from dataclasses import fields
from pathlib import Path

import pytest
from contract import package_modules
from sklearn.base import BaseEstimator

import trustml_nb
from trustml_nb.core import Report

ROOT = Path(__file__).resolve().parents[1]


_modules = package_modules


def _classes(base):
    found = {}
    for mod in _modules():
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, base) and obj is not base and obj.__module__ == mod.__name__
                    and not name.startswith('_')):
                found[f"{mod.__name__}.{name}"] = obj
    return found


REPORTS = _classes(Report)
ESTIMATORS = {k: v for k, v in _classes(BaseEstimator).items() if k != 'trustml_nb.core.Estimator'}  # the skeleton itself is abstract


def test_the_package_has_reports_and_estimators():
    assert len(REPORTS) >= 5 and len(ESTIMATORS) >= 5, (sorted(REPORTS), sorted(ESTIMATORS))


@pytest.mark.parametrize('name', sorted(REPORTS))
def test_report_fields_are_named_and_documented(name):
    cls = REPORTS[name]
    names = [f.name for f in fields(cls)]
    assert names, f"{name} has no fields"
    assert not [n for n in names if len(n) < 2], f"{name} has single-letter fields"
    docs = cls.field_docs()
    missing = [n for n in names if not docs.get(n)]
    assert not missing, f"{name}: fields without a documentation comment: {missing}"
    assert cls.__doc__ and len(cls.__doc__.splitlines()) == 1, f"{name} needs a one-line docstring"
    assert cls.__dataclass_params__.frozen, f"{name} must be frozen (use @report)"


@pytest.mark.parametrize('name', sorted(ESTIMATORS))
def test_estimator_init_is_explicit_keywords_only(name):
    cls = ESTIMATORS[name]
    sig = inspect.signature(cls.__init__)
    bad = [p.name for p in sig.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert not bad, f"{name}.__init__ takes *args/**kwargs"


@pytest.mark.parametrize('name', sorted(ESTIMATORS))
def test_every_estimator_has_a_contract_test(name):
    short = name.rsplit('.', 1)[1]
    if short in ('PrefitClassifier',): return      # core's adapter: tested in test_core
    # a test function that builds the estimator and runs the contract (or scikit-learn's check_estimator) on it
    funcs = [f for p in (ROOT / 'tests').glob('test_*.py') for f in re.split(r"\n(?=def |@)", p.read_text())]
    hits = [f for f in funcs if re.search(rf"\b{short}\(", f) and re.search(r"check_estimator(_contract)?\(", f)]
    assert hits, f"no test function builds {short}(...) and calls check_estimator_contract or check_estimator on it"


BLANKET = re.compile(r"""(simplefilter|filterwarnings)\(\s*['"]ignore['"]\s*\)""")


def _sources():
    for folder, pattern in (('trustml_nb', '*.py'), ('nbs', '*.ipynb'), ('tutorials', '*.ipynb'), ('benchmarks', '*.py'), ('tests', '*.py')):
        for p in (ROOT / folder).rglob(pattern):
            if '.ipynb_checkpoints' in p.parts or '_html' in p.parts: continue
            yield p


def test_no_blanket_warning_filters():
    bad = [str(p.relative_to(ROOT)) for p in _sources() if p.name != 'test_api.py' and BLANKET.search(p.read_text())]
    assert not bad, f"blanket warning filters (filter by category instead, e.g. core.quiet(NumericalWarning)): {bad}"


def test_no_lesson_or_test_parses_widget_text():
    pattern = re.compile(r"(\.result\b[^\n]*\.split\(|\btext\.split\(|\btxt\.split\(|\.data\.split\()")
    files = list((ROOT / 'tutorials').glob('*.ipynb')) + list((ROOT / 'tests').glob('test_*.py')) + list((ROOT / 'nbs').glob('*.ipynb'))
    bad = [str(p.relative_to(ROOT)) for p in files if p.name != 'test_api.py' and pattern.search(p.read_text())]
    assert not bad, f"read report fields (explorer.report.<field>) instead of parsing displayed text: {bad}"


def test_core_result_is_gone():
    assert not hasattr(trustml_nb.core, 'Result')
    users = [str(p.relative_to(ROOT)) for p in _sources() if re.search(r"\bResult\(|import[^\n]*\bResult\b", p.read_text())]
    assert not users, f"core.Result is gone: use a typed report: {users}"


# ---- the estimator skeleton (issue 34): parameters declared once, seed and show_progress by name, fit = validate, _fit ----

from functools import partial  # noqa: E402
import ast  # noqa: E402
import textwrap  # noqa: E402

from trustml_nb.core import DEPRECATED, Estimator, Renamed, check_seed, check_show_progress  # noqa: E402

RANDOMNESS = re.compile(r"make_rng\(|derived_(seed|rng)\(|random_state\s*=|manual_seed\(|default_rng\(|\.permutation\(|"
                        r"\.choice\(|\.integers\(|isolated_seed\(|seed_everything\(|KFold\(|shuffle\s*=\s*True")
OLD_SEED_NAMES = ('random_state', 'init_seed', 'random_seed', 'rng', 'seeds', 'random_seeds')


def _init_params(cls) -> dict:
    return {p.name: p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]}


def _method_sources(cls) -> str:
    "Source of every method the class (and its package bases) defines, patched ones included."
    out = []
    for klass in cls.__mro__:
        if klass in (Estimator, BaseEstimator, object) or not klass.__module__.startswith('trustml_nb'): continue
        for v in vars(klass).values():
            f = getattr(v, '__func__', v)
            if inspect.isfunction(f):
                try: out.append(inspect.getsource(f))
                except (OSError, TypeError): pass
    return '\n'.join(out)


def _is_check(rule, fn) -> bool:
    return rule is fn or isinstance(rule, partial) and rule.func is fn


@pytest.mark.parametrize('name', sorted(ESTIMATORS))
def test_estimator_is_built_on_the_skeleton(name):
    cls = ESTIMATORS[name]
    assert issubclass(cls, Estimator), f"{name} must subclass trustml_nb.core.Estimator (the one estimator skeleton)"
    params = _init_params(cls)
    bad = [p for p, v in params.items() if v.kind is not v.KEYWORD_ONLY]
    assert not bad, f"{name}.__init__ parameters must be keyword-only (after *): {bad}"
    declared = cls.parameters
    assert set(declared) == set(params), (f"{name}.parameters must declare every __init__ keyword once: "
                                          f"undeclared {sorted(set(params) - set(declared))}, not keywords {sorted(set(declared) - set(params))}")
    for p, rule in declared.items():
        if isinstance(rule, Renamed):
            assert rule.new in declared and not isinstance(declared[rule.new], Renamed), f"{name}: {p} is renamed to a missing {rule.new!r}"
            assert params[p].default == DEPRECATED, f"{name}: the old keyword {p} must default to core.DEPRECATED"
        else: assert callable(rule), f"{name}.parameters[{p!r}] must be a check(value, name), got {rule!r}"


@pytest.mark.parametrize('name', sorted(ESTIMATORS))
def test_estimator_names_seed_and_progress_the_one_way(name):
    cls = ESTIMATORS[name]
    params, declared, source = _init_params(cls), cls.parameters, _method_sources(cls)
    old = [p for p in params if p in OLD_SEED_NAMES and not isinstance(declared.get(p), Renamed)]
    assert not old, f"{name}: randomness is set by `seed`, not {old}"
    if 'seed' in params: assert _is_check(declared['seed'], check_seed), f"{name}: declare seed=check_seed"
    if 'show_progress' in params:
        assert _is_check(declared['show_progress'], check_show_progress), f"{name}: declare show_progress=check_show_progress"
    if re.search(r"\bprogress\(", source):
        assert 'show_progress' in params, f"{name} shows a progress bar but has no show_progress parameter"
        assert 'disable=' not in source, f"{name}: pass show=self.show_progress to core.progress instead of converting it inline"
    if RANDOMNESS.search(source): assert 'seed' in params, f"{name} draws random numbers but has no seed parameter"


@pytest.mark.parametrize('name', sorted(ESTIMATORS))
def test_fit_reads_validate_then_fit(name):
    cls = ESTIMATORS[name]
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls.fit)))
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant): body = body[1:]  # the docstring
    first = ast.unparse(body[0]) if body else ''
    assert 'self._validate_params()' in first, f"{name}.fit must begin by checking its settings (self._validate_params()), begins: {first!r:.80}"
    calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert 'self._fit' in calls, f"{name}.fit must hand the work to self._fit(...) after the checks"
    assert '_fit' in {k for klass in cls.__mro__ for k in vars(klass)}, f"{name} defines no _fit"
