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


# ---- small fits of every public estimator (issue 33): shared by the labelled-input and global-state contract tests ------

class SmallFit:
    """One estimator fitted on small data: `make()` an unfitted estimator, `fit(est)` fits it, `outputs(est)` runs every
    fitted method (predict, predict_proba, transform...) and returns what they computed. `frames` maps an input's name to
    `(frame, call)`: a labelled input (DataFrame, or a Series labelled by feature) and `call(est, frame)` that runs a fitted
    method (or, for inputs read only at fit, a fresh fit) on it, for the labelled-input contract."""
    def __init__(self, make, fit, outputs, frames=None):
        self.make, self.fit, self.outputs, self.frames = make, fit, outputs, frames or {}


def _fed_tiny():
    import dataclasses
    from trustml_nb.fedfact import synthetic_conflict
    fd = synthetic_conflict(n=600, sizes=(0.6, 0.4), group_share=(0.7, 0.3), bias=(1.0, -1.0), seed=0)
    # a federation whose features carry names (as make_fed_data gives for a DataFrame X): frames are matched by them
    return dataclasses.replace(fd, named_features=True)


def _fed_fit(kind):
    from trustml_nb.core import NumericalWarning, quiet
    from trustml_nb.fedfact import FedAvg, FedFactIn, FedFactPost
    fd = _fed_tiny()
    avg = dict(n_rounds=1, local_steps=3, show_progress=False)
    make = {'FedAvg': lambda: FedAvg(**avg),
            'FedFactPost': lambda: FedFactPost(n_rounds=2, local_steps=2, base_model=FedAvg(**avg), show_progress=False),
            'FedFactIn': lambda: FedFactIn(n_rounds=2, local_steps=2, n_history=2, base_model=FedAvg(**avg), show_progress=False)}[kind]
    def fit(e):
        with quiet(NumericalWarning): return e.fit(fd)     # two rounds cannot meet the budgets; reported, not the point here
    Xt = pd.DataFrame(fd.X_test, columns=fd.feature_names)
    run = {'FedAvg': lambda e, X: e.predict_proba(X),
           'FedFactPost': lambda e, X: e.predict(X, sensitive=fd.a_test, clients=fd.k_test),
           'FedFactIn': lambda e, X: e.predict(X, clients=fd.k_test)}[kind]
    return SmallFit(make, fit, lambda e: run(e, fd.X_test), {'X': (Xt, run)})


def _pse_sim():
    from trustml_nb.pse_simulator import sim_oximetry
    return sim_oximetry(600, seed=20)


def _glm_data(n=200, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({'a': rng.normal(size=n), 'b': rng.normal(size=n) * 3, 'c': rng.uniform(size=n)})
    lin = X['a'] - 0.5 * X['b'] / 3 + 2 * X['c']
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-lin))).astype(int).to_numpy() if binary else (lin + rng.normal(size=n)).to_numpy()
    return X, y


def _typed(n=300, seed=0):
    "Typed features (numbers, a category, a flag) and labels, as in test_monoculture."
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({'age': rng.integers(18, 70, n), 'hours': rng.normal(40, 8, n),
                      'job': pd.Categorical(rng.choice(['a', 'b', 'c'], n)), 'owner': rng.uniform(size=n) < 0.4})
    logit = 0.05 * (X['age'] - 40) + 0.08 * (X['hours'] - 40) + (X['job'] == 'a') * 0.8
    return X, (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int).to_numpy()


def small_fits() -> dict:
    "Every public estimator's SmallFit, by 'module.Class' (the names tests/test_api.py discovers)."
    from trustml_nb import core, fairdice, fedfact, mifpo, momdp, monoculture, multicalibration, omniprediction, pse, quere

    def prefit():
        P = np.array([0.1, 0.8, 0.6, 0.3, 0.9, 0.2])
        return SmallFit(core.PrefitClassifier, lambda e: e.fit(), lambda e: (e.predict_proba(P), e.predict(P)))

    def fairdice_fit(neural):
        rd = momdp.random_momdp(n_states=8, n_actions=2, deterministic=True, seed=0)
        D = momdp.collect_dataset(rd, momdp.uniform_policy(rd), 60, 20, seed=0)
        make = ((lambda: fairdice.NeuralFairDICE(gamma=rd.gamma, steps=30, seed=5, refit_steps=5, show_progress=False)) if neural
                else (lambda: fairdice.FairDICE(gamma=rd.gamma)))
        return SmallFit(make, lambda e: e.fit(D), lambda e: e.policy_)

    def fair_representation():
        f = mifpo.synthetic_mifpo(600, seed=8)
        return SmallFit(lambda: mifpo.FairRepresentation(gamma=0.1), lambda e: e.fit(f['p_true'], f['y'], sensitive=f['group']),
                        lambda e: (e.transform(f['p_true'], sensitive=f['group']), e.predict(f['p_true'], sensitive=f['group']),
                                   e.predict_proba(f['p_true'], sensitive=f['group'])))

    def group_calibrated():
        f = mifpo.synthetic_mifpo(400, seed=9)
        X = pd.DataFrame({'logit': np.log(f['p_true'] / (1 - f['p_true'])), 'noise': np.random.default_rng(0).normal(size=len(f))})
        run = lambda e, X: e.predict_proba(X, sensitive=f['group'])
        return SmallFit(lambda: mifpo.GroupCalibratedScores(n_folds=2, max_iter=10), lambda e: e.fit(X, f['y'], sensitive=f['group']),
                        lambda e: run(e, X), {'X': (X, run)})

    def ecosystem():
        X, y = _typed()
        run = lambda e, X: (e.predict_proba(X), e.predict(X))
        return SmallFit(lambda: monoculture.ModelEcosystem(n_models=5, seed=2, show_progress=False), lambda e: e.fit(X, y),
                        lambda e: run(e, X), {'X': (X, run)})

    def mc(kind):
        d = multicalibration.make_mc_synthetic(600, seed=4)
        make = ((lambda: multicalibration.Multicalibrator(learning_rates=(0.3, 1.0), max_rounds=50, patience=5, seed=1)) if kind == 'mc'
                else (lambda: multicalibration.MCBoost(n_levels=8, tolerance=0.005)))
        run = lambda e, G: e.predict(d['p0'], groups=G)
        return SmallFit(make, lambda e: e.fit(d['p0'], d['y'], groups=d['groups']), lambda e: run(e, d['groups']), {'groups': (d['groups'], run)})

    def omni():
        syn = omniprediction.synthetic_selective(800, seed=10); G = omniprediction.synthetic_groups(syn)
        base = 1 / (1 + np.exp(-syn['x1'].to_numpy())); y = syn['y'].to_numpy()
        T = pd.DataFrame({'one': np.ones(800), 'x1': syn['x1'], 'x2': syn['x2']})
        return SmallFit(lambda: omniprediction.OmniPredictor(tolerance=0.01, n_bins=None, n_bins_candidates=(5, 10), folds=2, seed=3),
                        lambda e: e.fit(base, y, groups=G, tests=T), lambda e: e.predict(base, groups=G, tests=T),
                        {'groups': (G, lambda e, F: e.predict(base, groups=F, tests=T)),
                         'tests': (T, lambda e, F: e.predict(base, groups=G, tests=F))})

    def conformal():
        syn = omniprediction.synthetic_selective(800, seed=10); G = omniprediction.synthetic_groups(syn)
        y = syn['y'].to_numpy(); cal = np.arange(800) < 400; Gt = G[~cal].reset_index(drop=True); p = syn['p_true'].to_numpy()
        run = lambda e, F: e.predict(p[~cal], groups=F)
        return SmallFit(lambda: omniprediction.GroupConformal(alpha=0.2, seed=4), lambda e: e.fit(p[cal], y[cal], groups=G[cal]),
                        lambda e: run(e, Gt), {'groups': (Gt, run)})

    def glm(cls, binary, methods):
        X, y = _glm_data(binary=binary)
        run = lambda e, X: tuple(getattr(e, m)(X) for m in methods)
        return SmallFit(cls, lambda e: e.fit(X, y), lambda e: run(e, X), {'X': (X, run)})

    def pse_fit():
        s = _pse_sim()
        make = lambda: pse.PathSpecificEffects(**s.roles_for('vented'), learners='glm', n_folds=2, star=False, warn=False, seed=0)
        return SmallFit(make, lambda e: e.fit(s.data), lambda e: e.report_.table,
                        {'data': (s.data, lambda e, D: clone(e).fit(D).report_.table)})

    def probe():
        rng = np.random.default_rng(1)
        X = pd.DataFrame(rng.normal(size=(300, 4)) * [1, 5, 0.1, 2] + [0, 3, 0, -1], columns=['q1', 'q2', 'q3', 'q4'])
        y = (X['q1'] + rng.normal(size=300) > 0).astype(int).to_numpy()
        run = lambda e, X: (e.predict_proba(X), e.predict(X))
        return SmallFit(lambda: quere.QueReProbe(C=0.5), lambda e: e.fit(X, y), lambda e: run(e, X), {'X': (X, run)})

    def fair_division_fit():
        from trustml_nb import distributive_fairness as dfair
        V = pd.DataFrame([[49, 46, 5], [47, 48, 5]], index=['Person 1', 'Person 2'], columns=['Good A', 'Good B', 'Good C'])
        return SmallFit(lambda: dfair.FairDivision(), lambda e: e.fit(V, money=2),
                        lambda e: (e.report_.table, e.classify([0, 1, -1], money=[1, 1])))

    def unreal_fit(kind):
        from trustml_nb import unreal
        g = unreal.make_csbm(200, 3, homophily=0.85, separation=1.5, seed=0)
        y = unreal.imbalanced_split(g.y, 5, n_per_class=10, n_minority=1, seed=0)
        X = pd.DataFrame(g.X, columns=[f'w{i}' for i in range(g.X.shape[1])])
        make = {'gcn': lambda: unreal.GCNClassifier(epochs=10, show_progress=False),
                'renode': lambda: unreal.ReNodeGCN(epochs=10, show_progress=False),
                'unreal': lambda: unreal.UNREAL(epochs=10, rounds=1, budget=3, n_clusters=5, show_progress=False)}[kind]
        run = lambda e, X: (e.predict_proba(X, edges=g.edges), e.predict(X, edges=g.edges), e.transform(X, edges=g.edges))
        return SmallFit(make, lambda e: e.fit(X, y, edges=g.edges), lambda e: run(e, X), {'X': (X, run)})

    return {
        'trustml_nb.core.PrefitClassifier': prefit,
        'trustml_nb.unreal.GCNClassifier': lambda: unreal_fit('gcn'),
        'trustml_nb.unreal.UNREAL': lambda: unreal_fit('unreal'),
        'trustml_nb.unreal.ReNodeGCN': lambda: unreal_fit('renode'),
        'trustml_nb.distributive_fairness.FairDivision': fair_division_fit,
        'trustml_nb.fairdice.FairDICE': lambda: fairdice_fit(False),
        'trustml_nb.fairdice.NeuralFairDICE': lambda: fairdice_fit(True),
        'trustml_nb.fedfact.FedAvg': lambda: _fed_fit('FedAvg'),
        'trustml_nb.fedfact.FedFactPost': lambda: _fed_fit('FedFactPost'),
        'trustml_nb.fedfact.FedFactIn': lambda: _fed_fit('FedFactIn'),
        'trustml_nb.mifpo.FairRepresentation': fair_representation,
        'trustml_nb.mifpo.GroupCalibratedScores': group_calibrated,
        'trustml_nb.monoculture.ModelEcosystem': ecosystem,
        'trustml_nb.multicalibration.Multicalibrator': lambda: mc('mc'),
        'trustml_nb.multicalibration.MCBoost': lambda: mc('mcboost'),
        'trustml_nb.omniprediction.OmniPredictor': omni,
        'trustml_nb.omniprediction.GroupConformal': conformal,
        'trustml_nb.pse.GLMClassifier': lambda: glm(pse.GLMClassifier, True, ('predict_proba', 'predict', 'decision_function')),
        'trustml_nb.pse.GLMRegressor': lambda: glm(pse.GLMRegressor, False, ('predict',)),
        'trustml_nb.pse.StackClassifier': lambda: glm(pse.StackClassifier, True, ('predict_proba', 'predict')),
        'trustml_nb.pse.StackRegressor': lambda: glm(pse.StackRegressor, False, ('predict',)),
        'trustml_nb.pse.PathSpecificEffects': pse_fit,
        'trustml_nb.quere.QueReProbe': probe,
    }


def package_estimators() -> dict:
    "Every public BaseEstimator subclass of the package, by 'module.Class' (the same discovery as tests/test_api.py)."
    found = {}
    for mod in package_modules():
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseEstimator) and obj is not BaseEstimator
                    and obj.__module__ == mod.__name__ and not name.startswith('_')):
                found[f"{mod.__name__}.{name}"] = obj
    found.pop('trustml_nb.core.Estimator', None)    # the skeleton itself is abstract: every estimator above is built on it
    return found
