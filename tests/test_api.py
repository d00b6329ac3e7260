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
ESTIMATORS = _classes(BaseEstimator)


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
