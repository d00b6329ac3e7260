"""The estimator contract every trustml_nb estimator keeps (scikit-learn's rules plus the package's report rules).

    from contract import check_estimator_contract
    check_estimator_contract(Multicalibrator(seed=0), fit=lambda est: est.fit(p0, y, groups=G),
                             output=lambda est: est.predict(p0, groups=G))

`fit(est)` must fit `est` on small data and return what `est.fit` returned; `output(est)` (optional) computes something
from a fitted estimator that must be identical for two fits with the same settings (same seed, same result).
"""
from __future__ import annotations

import inspect
import pickle
from dataclasses import FrozenInstanceError, fields

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError

from trustml_nb.core import Report

CHECKED: list = []   # names of the estimator classes that passed, for the closing report


def _same(a, b) -> bool:
    if isinstance(a, pd.DataFrame): return a.equals(b)
    if isinstance(a, (pd.Series,)): return a.equals(b)
    if isinstance(a, np.ndarray): return np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)): return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict): return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, Report): return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a)
                                        if isinstance(getattr(a, f.name), (int, float, str, bool, np.ndarray, pd.DataFrame)))
    try: return bool(a == b)
    except Exception: return a is b


def check_report(rep) -> None:
    "A fitted estimator's report: a frozen Report dataclass with documented, non-single-letter fields."
    assert isinstance(rep, Report), f"report_ must be a trustml_nb.core.Report, got {type(rep).__name__}"
    names = [f.name for f in fields(rep)]
    short = [n for n in names if len(n) < 2]
    assert not short, f"{type(rep).__name__} has single-letter field(s) {short}: name what they are"
    docs = type(rep).field_docs()
    undocumented = [n for n in names if not docs.get(n)]
    assert not undocumented, f"{type(rep).__name__} field(s) {undocumented} have no documentation comment"
    try:
        object.__getattribute__(rep, names[0])
        setattr(rep, names[0], None)
        raise AssertionError(f"{type(rep).__name__} is not frozen: a field could be reassigned")
    except FrozenInstanceError: pass
    assert isinstance(rep.to_frame(), pd.DataFrame)
    assert isinstance(rep._repr_html_(), str) and isinstance(repr(rep), str)


def check_estimator_contract(est, fit, output=None, fitted_methods=('predict', 'predict_proba', 'transform')) -> None:
    "Check scikit-learn's estimator rules and the package's report rules on an unfitted estimator `est`."
    name = type(est).__name__
    assert isinstance(est, BaseEstimator), f"{name} must subclass sklearn.base.BaseEstimator"
    # 1. every setting an explicit keyword of __init__, stored unchanged under its own name
    sig = inspect.signature(type(est).__init__)
    params = [p for p in sig.parameters.values() if p.name != 'self']
    bad = [p.name for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert not bad, f"{name}.__init__ takes *args/**kwargs ({bad}); every setting must be an explicit keyword"
    got = est.get_params(deep=False)
    assert set(got) == {p.name for p in params}, f"{name}.get_params() keys {sorted(got)} differ from __init__ {[p.name for p in params]}"
    extra = [k for k in vars(est) if k not in got]
    assert not extra, f"{name}.__init__ sets attributes that are not parameters: {extra}"
    # 2. clone and set_params round-trip
    c = clone(est)
    assert type(c) is type(est) and set(c.get_params(deep=False)) == set(got)
    simple = (int, float, str, bool, tuple, type(None))
    for k, v in got.items():
        if isinstance(v, simple): assert _same(c.get_params(deep=False)[k], v), f"clone changed the parameter {k!r} of {name}"
    assert clone(est).set_params(**got).get_params(deep=False).keys() == got.keys()
    repr(est)
    # 3. unfitted: fitted methods and report_ are refused with NotFittedError
    for m in fitted_methods:
        if hasattr(est, m):
            try:
                getattr(est, m)(None)
                raise AssertionError(f"unfitted {name}.{m} did not raise")
            except NotFittedError: pass
    assert not hasattr(est, 'report_'), f"unfitted {name} already has report_"
    # 4. fit returns self; fitted state ends in '_'
    before = set(vars(est))
    ret = fit(est)
    assert ret is est, f"{name}.fit must return self, got {type(ret).__name__}"
    new = [k for k in vars(est) if k not in before]
    not_us = [k for k in new if not k.endswith('_') or k.startswith('__')]
    assert not not_us, f"{name}.fit set attributes without a trailing underscore: {not_us}"
    after = est.get_params(deep=False)
    changed = [k for k, v in got.items() if isinstance(v, simple) and not _same(after[k], v)]
    assert not changed, f"{name}.fit changed its own parameters {changed}: fitted values belong in attributes ending in '_'"
    check_report(est.report_)
    # 5. a clone of a fitted estimator is unfitted, and refitting it gives the same result (same seed, same result)
    c = clone(est)
    assert not hasattr(c, 'report_'), f"clone of a fitted {name} kept report_"
    if output is not None:
        first = output(est)
        fit(c)
        assert _same(output(c), first), f"{name}: two fits with the same settings gave different results"
        # 6. pickling a fitted estimator keeps what it computes
        again = pickle.loads(pickle.dumps(est))
        assert _same(output(again), first), f"{name}: a pickled and restored estimator computes something else"
    CHECKED.append(name)


OPTIONAL_MODULES = {'fedfact_flower'}   # modules that need an optional extra to import


def package_modules():
    """Every public module of trustml_nb (those needing a missing optional extra are left out)."""
    import importlib, pkgutil
    import trustml_nb
    out = []
    for m in pkgutil.iter_modules(trustml_nb.__path__):
        if m.name.startswith('_'): continue
        try: out.append(importlib.import_module(f'trustml_nb.{m.name}'))
        except ImportError:
            if m.name not in OPTIONAL_MODULES: raise
    return out
