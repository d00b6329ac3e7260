"""Labelled input is matched by label, everywhere (issue 33, item 4).

For every public estimator (tests/contract.py `package_estimators`, the discovery tests/test_api.py uses) and every public
function that takes a DataFrame or Series (discovered below from `__all__`: a parameter annotated DataFrame/Series, or named
like a frame input), a case here checks:

- **reordered**: the same frame with its columns in another order (a Series row: its index in another order) gives an
  identical result (after lining up outputs that are themselves labelled, for inputs whose columns name groups or models);
- **renamed / missing** (inputs with a schema: fitted feature names, required columns, role names): a clear ValueError from
  trustml_nb that names the column.

A meta-test fails when a discovered estimator or frame-taking function has neither a case nor an exemption with a reason, so a
new method cannot miss this contract. Cases for estimators come from `contract.small_fits()` (their `frames`).
"""
from __future__ import annotations

import dataclasses
import inspect
import numbers
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
import pytest
from badinput import _raised_in_package
from contract import package_estimators, package_modules, small_fits
from matplotlib.axes import Axes

from trustml_nb.core import NumericalWarning, SmallGroupWarning, quiet

# ---- discovery --------------------------------------------------------------------------------------------------

FRAME_NAMES = {'X', 'x', 'df', 'data', 'table', 'tasks', 'groups', 'groups_fit', 'groups_cal', 'groups_test', 'groups_of_rows',
               'sensitive', 'sensitive_test', 'attributes', 'y_pred', 'tests', 'by_group', 'scores', 'features'}


def frame_params(fn) -> list:
    """The parameters of `fn` that may receive a DataFrame or Series: annotated as one, or unannotated with a frame-like name
    (a parameter annotated as something else, e.g. `np.ndarray` or `OfflineDataset`, is not one)."""
    try: sig = inspect.signature(fn)
    except (TypeError, ValueError): return []
    out = []
    for p in sig.parameters.values():
        ann = '' if p.annotation is inspect.Parameter.empty else str(p.annotation)
        if 'DataFrame' in ann or 'Series' in ann or (not ann and p.name in FRAME_NAMES): out.append(p.name)
    return out


def discovered_functions() -> dict:
    "'module.function(param)' -> function, for every public function (in a module's __all__) with a frame parameter."
    found = {}
    for mod in package_modules():
        short = mod.__name__.split('.', 1)[1]
        for name in getattr(mod, '__all__', []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or not callable(obj): continue
            if getattr(obj, '__module__', mod.__name__) != mod.__name__: continue   # a re-export is checked in its home module
            for p in frame_params(obj): found[f"{short}.{name}({p})"] = obj
    return found


# ---- cases ------------------------------------------------------------------------------------------------------

@dataclass
class Case:
    frame: object                     # the labelled input: a DataFrame, or a Series labelled by feature name
    call: Callable                    # call(frame) -> result
    free: bool = False                # the labels name groups/models/outputs (no schema): renaming relabels, it is not an error
    align: Callable | None = None     # lines a result up by its own labels before comparing (for free labels)
    tol: float = 0.0                  # relative tolerance (sums over groups in another order may differ in the last bits)


def _axes_summary(ax):
    "What an Axes shows: line data, point positions, bar heights, texts and tick labels."
    return dict(lines=[l.get_xydata().tolist() for l in ax.lines], points=[c.get_offsets().tolist() for c in ax.collections],
                bars=sorted((round(p.get_x(), 9), round(p.get_height(), 9)) for p in ax.patches),
                texts=sorted(t.get_text() for t in ax.texts), yticks=[t.get_text() for t in ax.get_yticklabels()],
                xticks=[t.get_text() for t in ax.get_xticklabels()], labels=(ax.get_xlabel(), ax.get_ylabel()))


def _norm(x):
    "A result in comparable form: DataFrames with sorted columns/rows by label, reports and dataclasses field by field."
    if isinstance(x, Axes): return _axes_summary(x)
    if isinstance(x, pd.DataFrame):
        x = x.sort_index(axis=1)
        return x.sort_values(list(x.columns), kind='stable').reset_index(drop=True) if len(x.columns) else x
    if isinstance(x, pd.Series): return x.sort_index()
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _norm(getattr(x, f.name)) for f in dataclasses.fields(x) if not f.name.startswith('seconds')}
    if isinstance(x, dict): return {k: _norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)): return [_norm(v) for v in x]
    return x


def same(a, b, tol=0.0) -> bool:
    "Identical results (numbers within a relative tol)."
    if isinstance(a, Axes): a, b = _axes_summary(a), _axes_summary(b)
    if isinstance(a, pd.DataFrame):
        if not isinstance(b, pd.DataFrame) or list(a.columns) != list(b.columns) or a.shape != b.shape: return False
        return all(same(a[c].to_numpy(), b[c].to_numpy(), tol) for c in a.columns) and list(a.index) == list(b.index)
    if isinstance(a, pd.Series):
        return isinstance(b, pd.Series) and list(a.index) == list(b.index) and same(a.to_numpy(), b.to_numpy(), tol)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape: return False
        if a.dtype.kind in 'fc' or b.dtype.kind in 'fc':
            return bool(np.allclose(a.astype(complex if 'c' in a.dtype.kind + b.dtype.kind else float), b, rtol=tol, atol=tol * 1e-3, equal_nan=True)) if tol else np.array_equal(a, b, equal_nan=True)
        return np.array_equal(a, b)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name), tol) for f in dataclasses.fields(a)
                                          if not f.name.startswith('seconds') and not f.name.endswith('_ms'))
    if isinstance(a, dict): return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k], tol) for k in a)
    if isinstance(a, (list, tuple)): return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and not isinstance(a, bool):
        return (np.isnan(a) and np.isnan(b)) or (abs(a - b) <= tol * max(1.0, abs(a)) if tol else a == b)
    try: return bool(a == b)
    except Exception: return repr(a) == repr(b)


def reordered(frame):
    "The same input with its labels in reverse order (values travel with their labels)."
    if isinstance(frame, pd.Series): return frame.iloc[::-1]
    assert frame.shape[1] >= 2, "a case's frame needs at least two columns to be reordered"
    return frame.iloc[:, ::-1]


def renamed(frame):
    label = frame.index[0] if isinstance(frame, pd.Series) else frame.columns[0]
    new = f"{label}_renamed"
    out = frame.rename(index={label: new}) if isinstance(frame, pd.Series) else frame.rename(columns={label: new})
    return out, (str(label), new)


def missing(frame):
    label = frame.index[0] if isinstance(frame, pd.Series) else frame.columns[0]
    return (frame.drop(index=label) if isinstance(frame, pd.Series) else frame.drop(columns=label)), (str(label),)


# ---- function cases: small data, built lazily ---------------------------------------------------------------------

def _rng(seed=0): return np.random.default_rng(seed)


def _gam_case(fn_name, **kw):
    def build():
        from trustml_nb import gam_explain, gam_models
        gam = gam_models.random_gam(4, seed=3)
        x = pd.Series(gam_models.random_instance(gam, seed=1), index=gam.feature_names)
        fn = getattr(gam_explain, fn_name, None) or getattr(gam_models, fn_name)
        align = (lambda g: g.ranges()) if fn_name == 'linf_ball' else None
        return Case(x, lambda F: fn(gam, F, **kw), align=align)
    return build


def _gam_batch_case(fn_name, **kw):
    def build():
        from trustml_nb import gam_explain, gam_models
        gam = gam_models.random_gam(4, seed=3)
        X = pd.DataFrame([gam_models.random_instance(gam, seed=s) for s in range(20)], columns=gam.feature_names)
        fn = getattr(gam_explain, fn_name)
        return Case(X, lambda F: fn(gam, F, **kw))
    return build


def _groups_frame(n=400, seed=0):
    rng = _rng(seed)
    sex = rng.choice(['F', 'M'], n); age = rng.choice(['young', 'old'], n)
    return pd.DataFrame({'female': sex == 'F', 'young': age == 'young', 'female & young': (sex == 'F') & (age == 'young'), 'all': np.ones(n, bool)})


def _scores(n=400, seed=0):
    rng = _rng(seed); p = rng.uniform(0.05, 0.95, n); y = (rng.uniform(size=n) < p).astype(int)
    return y, p


def _decisions(n=300, m=4, seed=0):
    rng = _rng(seed); y = rng.integers(0, 2, n)
    D = pd.DataFrame({f"model_{j}": np.where(rng.uniform(size=n) < 0.8, y, 1 - y) for j in range(m)})
    return y, D


def _case_check_columns():
    from trustml_nb.core import check_columns
    df = pd.DataFrame({'a': [1, 2], 'b': [3, 4], 'c': [5, 6]})
    return Case(df, lambda F: check_columns(F, ['a', 'b']), align=_norm)


def _case_match_columns():
    from trustml_nb.core import column_names, match_columns
    df = pd.DataFrame({'a': [1, 2], 'b': [3, 4], 'c': [5, 6]}); names = column_names(df)
    return Case(df, lambda F: match_columns(F, names))


def _case_split_features():
    from trustml_nb.data import load_german, split_features
    df = load_german().iloc[:200]
    df = df[[df.attrs['label']] + [c for c in df.columns if c != df.attrs['label']]]   # the label first: renamed/dropped below
    return Case(df, lambda F: split_features(F), align=_norm)


def _case_dataset_summary():
    from trustml_nb.data import dataset_summary, load_german
    df = load_german().iloc[:300]
    return Case(df[[df.attrs['label']] + [c for c in df.columns if c != df.attrs['label']]], dataset_summary)


def _case_adult_attributes():
    from trustml_nb.data import adult_attributes, load_adult
    return Case(load_adult().iloc[:300], adult_attributes)


def _case_encode_features():
    from trustml_nb.data import encode_features
    X = pd.DataFrame({'h': _rng().normal(size=50), 'w': pd.Categorical(_rng(1).choice(['a', 'b'], 50)), 'k': _rng(2).integers(0, 9, 50)})
    return Case(X, lambda F: encode_features(F, fit=np.arange(30)), free=True,
                align=lambda out: pd.DataFrame(out[0], columns=out[1]).sort_index(axis=1))


def _case_check_groups():
    from trustml_nb.groups import check_groups
    G = _groups_frame(); fitted = list(G.columns)
    return Case(G, lambda F: check_groups(F, len(G), columns=fitted, min_size=0))


def _case_intersect():
    from trustml_nb.groups import intersect
    rng = _rng(); A = pd.DataFrame({'sex': rng.choice(['F', 'M'], 200), 'race': rng.choice(['B', 'W'], 200), 'age': rng.choice(['<25', '25+'], 200)})
    canonical = lambda G: G.rename(columns=lambda c: ' & '.join(sorted(c.split(' & ')))).sort_index(axis=1)
    # an intersection is named in the order of the attributes given ('sex=F & race=B'): the same group, spelled in that order
    return Case(A, lambda F: intersect(F, max_order=2), free=True, align=canonical)


def _case_group_sizes():
    from trustml_nb.groups import group_sizes
    return Case(_groups_frame(), group_sizes, free=True, align=_norm)


def _free_groups(fn_path, make_args, tol=1e-12, align=_norm):
    "A function of (..., groups=...) whose group columns are names of groups: reordering them changes nothing but the order of labelled output."
    def build():
        import importlib
        mod, name = fn_path.rsplit('.', 1)
        fn = getattr(importlib.import_module(f'trustml_nb.{mod}'), name)
        G = _groups_frame()
        args, kwargs, slot = make_args(G)
        def call(F):
            a, k = list(args), dict(kwargs)
            if isinstance(slot, int): a[slot] = F
            else: k[slot] = F
            with quiet(SmallGroupWarning, NumericalWarning): return fn(*a, **k)
        return Case(G, call, free=True, tol=tol, align=align)
    build.free = True
    return build


def _y_p_groups(G, slot=2):
    y, p = _scores(len(G))
    return [y, p, G], {}, slot


def _case_threshold_decisions():
    from trustml_nb.monoculture import threshold_decisions
    S = pd.DataFrame({f"model_{j}": _rng(j).uniform(size=100) for j in range(4)})
    return Case(S, lambda F: threshold_decisions(F, accept_share=0.3), free=True, align=_norm)


def _free_decisions(name, extra=None, align=_norm, tol=1e-12):
    def build():
        from trustml_nb import monoculture
        fn = getattr(monoculture, name); y, D = _decisions()
        def call(F):
            with quiet(NumericalWarning): return fn(F) if extra is None else extra(fn, y, F)
        return Case(D, call, free=True, align=align, tol=tol)
    build.free = True
    return build


def _sym(df):
    "A model-by-model matrix lined up by model name on both axes."
    return df.sort_index().sort_index(axis=1)


def _report_scalars(rep):
    "The numbers a report states (scalar fields), for results whose tables list pairs or models in input order."
    return {f.name: getattr(rep, f.name) for f in dataclasses.fields(rep) if isinstance(getattr(rep, f.name), (int, float, str))
            and not f.name.startswith(('worst_', 'most_', 'least_'))}


def _case_serialize_rows():
    from trustml_nb.monoculture import serialize_rows
    X = pd.DataFrame({'age': [30, 41], 'job': ['clerk', 'nurse'], 'hours': [40, 35]})
    return Case(X, lambda F: serialize_rows(F, {'age': 'Age', 'job': 'Job', 'hours': 'Hours'}))


def _case_build_prompts():
    from trustml_nb.monoculture import build_prompts
    X = pd.DataFrame({'age': [30, 41], 'job': ['clerk', 'nurse'], 'hours': [40, 35]})
    return Case(X, lambda F: build_prompts(F, {'age': 'Age', 'job': 'Job', 'hours': 'Hours'}, 'Approve?', '{record}\n{question}'))


def _case_synthetic_groups():
    from trustml_nb.omniprediction import synthetic_groups, synthetic_selective
    df = synthetic_selective(300, seed=0)
    return Case(df[['female', 'young'] + [c for c in df.columns if c not in ('female', 'young')]], synthetic_groups)


def _case_adult_tests():
    from trustml_nb.data import adult_task
    from trustml_nb.omniprediction import adult_tests
    with quiet(SmallGroupWarning):
        t = adult_task({'a': 1.0}, max_rows=300, sensitive='sex', base_model=None)
    X = t.a.X; score = _rng().uniform(0.05, 0.95, len(X))
    return Case(X, lambda F: adult_tests(F, score))


def _case_multiaccuracy_tests():
    from trustml_nb.omniprediction import multiaccuracy_violations
    y, p = _scores(); T = pd.DataFrame({'one': np.ones(len(y)), 'x1': _rng(3).uniform(-1, 1, len(y)), 'x2': _rng(4).uniform(-1, 1, len(y))})
    return Case(T, lambda F: multiaccuracy_violations(y, p, tests=F), free=True, align=_norm, tol=1e-12)


def _case_compare_omni():
    from trustml_nb.omniprediction import compare_omniprediction
    G = _groups_frame(600); y, p = _scores(600); yf, pf = _scores(600, seed=5)
    def call(F):
        with quiet(SmallGroupWarning, NumericalWarning):
            return compare_omniprediction(y, p, F, score=p, y_fit=yf, score_fit=pf, groups_fit=G, per_group_tuning=True)
    return Case(G, call, free=True, tol=1e-12, align=lambda r: (_norm(r.table), _norm(r.by_group), r.mean_omni, r.mean_tuned, r.ratio_global))


def _case_pse_effects():
    from trustml_nb.pse import pse_effects
    from trustml_nb.pse_simulator import sim_oximetry
    s = sim_oximetry(600, seed=20); R = s.roles
    return Case(s.data, lambda F: pse_effects(F, R['x'], R['z'], R['w'], R['v'], 'vented', learners='glm', n_folds=2, star=False, warn=False).table)


def _case_binary_sfm_nuisances():
    from trustml_nb.pse_simulator import binary_sfm_nuisances, sim_binary_sfm
    return Case(sim_binary_sfm(300, seed=0).data, binary_sfm_nuisances)


def _case_nonlinear_nuisances():
    from trustml_nb.pse_simulator import nonlinear_nuisances, sim_nonlinear
    return Case(sim_nonlinear(300, seed=0).data, lambda F: nonlinear_nuisances(F, n_nodes=4))


def _case_make_fed_data():
    "X_test labelled like X: a test frame with its columns in another order is lined up with the training columns."
    from trustml_nb.fedfact import make_fed_data
    rng = _rng(); n = 120
    X = pd.DataFrame({'f0': rng.normal(size=n), 'f1': rng.normal(size=n), 'f2': rng.normal(size=n)})
    y, a, k = rng.integers(0, 2, n), rng.integers(0, 2, n), rng.integers(0, 2, n)
    return Case(X.iloc[60:], lambda F: make_fed_data(X.iloc[:60], y[:60], a[:60], k[:60], F, y[60:], a[60:], k[60:]).X_test)


def _viz_case(fn_name, df, *args, **kw):
    def build():
        from trustml_nb import viz
        fn = getattr(viz, fn_name)
        return Case(df, lambda F: fn(F, *args, **kw))
    return build


_EST = pd.DataFrame({'label': ['direct', 'indirect'], 'estimate': [0.03, 0.01], 'ci_low': [0.02, 0.0], 'ci_high': [0.04, 0.02], 'truth': [0.03, 0.012]})
_RATES = pd.DataFrame({'group': ['F', 'M', 'X'], 'rate': [0.1, 0.3, 0.2], 'model': ['a', 'a', 'b']})
_CURVE = pd.DataFrame({'gap': [0.1, 0.05, 0.01], 'accuracy': [0.85, 0.83, 0.8], 'xi': [0.1, 0.05, 0.01]})

FUNCTION_CASES = {
    'core.check_columns(df)': _case_check_columns,
    'core.match_columns(X)': _case_match_columns,
    'data.split_features(df)': _case_split_features,
    'data.dataset_summary(df)': _case_dataset_summary,
    'data.adult_attributes(df)': _case_adult_attributes,
    'data.encode_features(X)': _case_encode_features,
    'groups.check_groups(groups)': _case_check_groups,
    'groups.intersect(attributes)': _case_intersect,
    'groups.group_sizes(groups)': _case_group_sizes,
    'viz.plot_estimates(df)': _viz_case('plot_estimates', _EST, truth='truth'),
    'viz.plot_group_metric(df)': _viz_case('plot_group_metric', _RATES, 'group', 'rate', hue='model'),
    'viz.plot_tradeoff(df)': _viz_case('plot_tradeoff', _CURVE, 'gap', 'accuracy', annotate='xi'),
    # a row given as a Series labelled by feature name
    **{f'gam_explain.{f}(x)': _gam_case(f, **kw) for f, kw in [
        ('csr', dict(features=[0, 1])), ('msr', {}), ('mcr', {}), ('csr_bf', dict(features=[0, 1])), ('msr_bf', {}), ('mcr_bf', {}),
        ('cc_bf', dict(features=[0, 1])), ('shap_bf', {}), ('csr_paper_sign', dict(features=[0, 1])), ('shap_regression', {}),
        ('cc', dict(features=[0, 1])), ('shap_classification', {}), ('csr_tol', dict(features=[0, 1], delta=0.5)), ('mcr_tol', dict(delta=0.5)),
        ('msr_tol', dict(delta=0.5)), ('run_query', dict(query='MSR')), ('delta_sufficient_reason', dict(delta=0.5)), ('explain', {})]},
    'gam_models.linf_ball(x)': _gam_case('linf_ball', radius=1),
    # many rows given as a DataFrame labelled by feature name (the batch API)
    **{f'gam_explain.{f}(X)': _gam_batch_case(f, **kw) for f, kw in [
        ('shap_regression_batch', {}), ('shap_classification_batch', {}), ('msr_batch', {}), ('mcr_batch', {}),
        ('csr_batch', dict(features=[0, 1])), ('cc_batch', dict(features=[0, 1]))]},
    # columns that name groups: free labels
    'multicalibration.mc_table(groups)': _free_groups('multicalibration.mc_table', _y_p_groups),
    'multicalibration.mc_error(groups)': _free_groups('multicalibration.mc_error', _y_p_groups),
    'multicalibration.mc_error_to_truth(groups)': _free_groups('multicalibration.mc_error_to_truth', _y_p_groups),
    'multicalibration.weighted_smooth_ece(groups)': _free_groups('multicalibration.weighted_smooth_ece', _y_p_groups),
    'multicalibration.reliability_table(groups)': _free_groups('multicalibration.reliability_table', _y_p_groups),
    'omniprediction.selective_report(groups)': _free_groups('omniprediction.selective_report',
        lambda G: ([_scores(len(G))[0], (_scores(len(G))[1] > 0.5).astype(int)], dict(loss=__import__('trustml_nb.omniprediction', fromlist=['x']).Loss(1, 1, 0.3)), 'groups')),
    'omniprediction.multiaccuracy_violations(groups)': _free_groups('omniprediction.multiaccuracy_violations', lambda G: ([*_scores(len(G))], {}, 'groups')),
    'omniprediction.multiaccuracy_violations(tests)': _case_multiaccuracy_tests,
    'omniprediction.compare_omniprediction(groups)': _case_compare_omni,
    'omniprediction.group_ratio_sd(groups)': _free_groups('omniprediction.group_ratio_sd',
        lambda G: ([*_scores(len(G))], dict(score=_scores(len(G))[1], y_fit=_scores(len(G), 5)[0], score_fit=_scores(len(G), 5)[1], n_boot=20), 'groups')),
    'omniprediction.coverage_report(groups)': _free_groups('omniprediction.coverage_report',
        lambda G: ([_scores(len(G))[0], pd.DataFrame({'has0': _rng(6).uniform(size=len(G)) < 0.7, 'has1': _rng(7).uniform(size=len(G)) < 0.7})], {}, 'groups')),
    'omniprediction.explore_losses(groups)': _free_groups('omniprediction.explore_losses', lambda G: ([*_scores(len(G))], {}, 'groups'),
                                                          align=lambda out: _norm(out[0])),
    'omniprediction.synthetic_groups(df)': _case_synthetic_groups,
    'omniprediction.adult_tests(X)': _case_adult_tests,
    'monoculture.measure_ecosystem(groups)': _free_groups('monoculture.measure_ecosystem',
        lambda G: ([_decisions(len(G))[0], _decisions(len(G))[1]], {}, 'groups'), align=_report_scalars),
    # columns that name models: free labels
    'monoculture.check_decisions(y_pred)': _free_decisions('check_decisions'),
    'monoculture.pairwise_agreement(y_pred)': _free_decisions('pairwise_agreement', align=_sym),
    'monoculture.pairwise_kappa(y_pred)': _free_decisions('pairwise_kappa', align=_sym),
    'monoculture.error_correlation(y_pred)': _free_decisions('error_correlation', lambda fn, y, F: fn(y, F), align=_sym),
    'monoculture.rashomon_set(y_pred)': _free_decisions('rashomon_set', lambda fn, y, F: fn(y, F)),
    'monoculture.rashomon_measures(y_pred)': _free_decisions('rashomon_measures', lambda fn, y, F: fn(y, F)),
    'monoculture.measure_ecosystem(y_pred)': _free_decisions('measure_ecosystem', lambda fn, y, F: fn(y, F), align=_report_scalars),
    'monoculture.bootstrap_ecosystem(y_pred)': _free_decisions('bootstrap_ecosystem', lambda fn, y, F: fn(y, F, n_boot=20, seed=0, show_progress=False),
                                                               align=lambda r: _norm(r.table)),
    'monoculture.threshold_decisions(scores)': _case_threshold_decisions,
    # columns read by name
    'monoculture.serialize_rows(X)': _case_serialize_rows,
    'monoculture.build_prompts(X)': _case_build_prompts,
    'pse.pse_effects(data)': _case_pse_effects,
    'pse_simulator.binary_sfm_nuisances(df)': _case_binary_sfm_nuisances,
    'pse_simulator.nonlinear_nuisances(data)': _case_nonlinear_nuisances,
    'fedfact_constraints.make_fed_data(X)': _case_make_fed_data,
}

# Discovered parameters that do not take a labelled frame, or whose computation is covered by another case; each with why.
_VECTOR = "one value per row (a vector of labels, decisions or scores): no column labels to match"
_WIDGET = "an explorer/render wrapper that builds widgets around a covered function"
EXEMPT = {
    'gam_explain.csr(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.csr_batch(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.cc_batch(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.cc(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.csr_tol(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.csr_bf(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.cc_bf(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.csr_paper_sign(features)': "a set of feature indices or names (the paper's S), not a frame",
    'gam_explain.run_query(features)': "a set of feature indices or names (the paper's S), not a frame",
    'core.check_array(x)': "validates an unlabelled array by position by design (the tool estimators use before match_columns)",
    'core.check_scalar(x)': "a scalar", 'core.check_flag(x)': "a scalar flag", 'core.check_seed(x)': "a scalar seed",
    'core.check_show_progress(x)': "a scalar flag",
    'core.column_names(X)': "records the column order by design (sklearn's feature_names_in_); match_columns is the matching half",
    'core.check_is_fitted(attributes)': "names of fitted attributes, not a frame",
    'core.markdown_table(df)': "displays the columns in the order given (a rendering, not a computation)",
    'data.adult_task(sensitive)': "names of sensitive columns (strings), not a frame",
    'data.german_task(sensitive)': "names of sensitive columns (strings), not a frame",
    'fedfact_constraints.confusion_matrices(y_pred)': _VECTOR, 'fedfact_constraints.direct_disparities(y_pred)': _VECTOR,
    'fedfact_constraints.prediction_counts(y_pred)': _VECTOR, 'fedfact_constraints.check_codes(x)': _VECTOR,
    'momdp.check_dataset(data)': "an OfflineDataset of transitions (arrays), not a frame",
    'omniprediction.quantile_fit(features)': "the numeric basis the caller built (the paper's Phi), used by position",
    'omniprediction.quantile_fit(scores)': _VECTOR,
    'core.describe_input(x)': "describes any refused input for an error message; reads no values",
    'oath.challenge_sample(groups)': _VECTOR, 'quere.auroc_over_splits(groups_of_rows)': _VECTOR,
    'fedfact_protocols.client_counts(data)': "a client's partition inside a federated protocol (arrays), not a user frame",
    'gam_explain.plot_runtime(df)': "draws runtime_table's own output (columns it wrote itself)",
    'mifpo.bin_scores(sensitive)': _VECTOR, 'mifpo.assign_bins(sensitive)': _VECTOR,
    'mifpo.compare_peers(sensitive)': _VECTOR, 'mifpo.compare_peers(sensitive_test)': _VECTOR,
    'mifpo.render_mifpo(sensitive)': _WIDGET, 'mifpo.render_mifpo(sensitive_test)': _WIDGET,
    'mifpo.mifpo_explorer(sensitive)': _WIDGET, 'mifpo.mifpo_explorer(sensitive_test)': _WIDGET,
    'monoculture.render_ecosystem(scores)': _WIDGET, 'monoculture.render_ecosystem(groups)': _WIDGET,
    'monoculture.ecosystem_explorer(scores)': _WIDGET, 'monoculture.ecosystem_explorer(groups)': _WIDGET,
    'monoculture.ask_templates(X)': "needs the language model; the prompts it sends come from build_prompts (covered)",
    'multicalibration.plot_group_reliability(groups)': "draws reliability_table (covered)",
    'oath.query_bytes(features)': "encodes one numeric feature vector for a commitment: positional by protocol design",
    'oath.simulate_service(features)': "numeric feature rows sent through the protocol as arrays (query_bytes)",
    'oath.simulate_service(sensitive)': _VECTOR,
    'oath.detection_study(features)': "numeric feature rows sent through the protocol as arrays (query_bytes)",
    'oath.detection_study(sensitive)': _VECTOR,
    'oath.explore_detection(features)': _WIDGET, 'oath.explore_detection(sensitive)': _WIDGET,
    'oath.oath_explorer(features)': _WIDGET, 'oath.oath_explorer(sensitive)': _WIDGET,
    'omniprediction.realized_loss(y_pred)': _VECTOR, 'omniprediction.selective_report(y_pred)': _VECTOR,
    'omniprediction.coverage_report(y_pred)': "prediction sets as columns has0/has1, read by name (the groups case passes them)",
    'omniprediction.compare_omniprediction(groups_fit)': "the groups case passes groups reordered against groups_fit: they must line up by name",
    'omniprediction.plot_omni_ratios(by_group)': "draws compare_omniprediction's by_group table (covered)",
    'omniprediction.omni_explorer(groups)': _WIDGET, 'omniprediction.coverage_explorer(groups_cal)': _WIDGET,
    'omniprediction.coverage_explorer(groups_test)': _WIDGET,
    'pse.gmf_weights(x)': "x is the exposure vector (the paper's X), not a frame",
    'pse.gmf_estimate(x)': "x is the exposure vector (the paper's X), not a frame",
    'pse.riesz_weights(x)': "x is the exposure vector (the paper's X), not a frame; the blocks are matched by PathSpecificEffects (covered)",
    'distributive_fairness.study_shares(study)': "summarises the frame generative_study returned (the package's own columns, read by name)",
    'distributive_fairness.position_bias(menu)': "summarises menu_choice_shares rows (the package's own columns, read by name)",
    'pse.riesz_tradeoff(table)': "pools the Riesz screening table the package's own benchmark wrote, read by column name",
    'pse.plot_riesz_tradeoff(table)': "draws riesz_tradeoff of the package's own benchmark table (read by column name)",
    'pse.crossfit_gmf(x)': "x is the exposure vector and blocks are arrays; pse_effects (covered) maps named columns to them",
    'pse.plot_coverage(table)': "draws the coverage table the package's own benchmark wrote",
    'distributive_fairness.menu_prompt(options)': "menu_options' own table, read by its 'allocation' column; its row order is the menu order by design",
    'distributive_fairness.property_shares(classified)': "classify_answers' own table, read by column name (status and the property flags); shares do not depend on row or column order",
    'quere.elicit(tasks)': "needs the language model; reads tasks['prompt'] by name",
    'quere.compare_probes(groups_of_rows)': _VECTOR,
}

# Estimators whose inputs are not labelled frames
EXEMPT_ESTIMATORS = {
    'trustml_nb.distributive_fairness.FairDivision': "valuations' labels name the instance's agents and goods (free labels, no fitted schema); reordered goods give the same allocation sets (tests/test_distributive_fairness.py::test_labelled_valuations_keep_their_names_and_reordered_goods_give_the_same_sets)",
    'trustml_nb.core.PrefitClassifier': "X is a vector of base scores passed to proba_fn: no column labels",
    'trustml_nb.fairdice.FairDICE': "fits an OfflineDataset or a TabularMOMDP (arrays of states and actions), no frame",
    'trustml_nb.fairdice.NeuralFairDICE': "fits an OfflineDataset (arrays of states and actions), no frame",
    'trustml_nb.mifpo.FairRepresentation': "X is a vector of scores and sensitive one label per row (see the one-column test below)",
}


def _estimator_cases():
    out = {}
    for name, build in small_fits().items():
        short = name.split('.', 1)[1]
        def make(build=build, which=None):
            sf = build(); est = sf.make(); sf.fit(est)
            frame, run = sf.frames[which]
            return Case(frame, lambda F: run(est, F))
        for which in _ESTIMATOR_FRAMES.get(name, ()):
            out[f"{short}({which})"] = (lambda make=make, which=which: make(which=which))
    return out


_ESTIMATOR_FRAMES = {   # which labelled inputs each estimator's SmallFit.frames holds (checked against the SmallFit itself)
    'trustml_nb.unreal.GCNClassifier': ('X',), 'trustml_nb.unreal.UNREAL': ('X',), 'trustml_nb.unreal.ReNodeGCN': ('X',),
    'trustml_nb.fedfact.FedAvg': ('X',), 'trustml_nb.fedfact.FedFactPost': ('X',), 'trustml_nb.fedfact.FedFactIn': ('X',),
    'trustml_nb.mifpo.GroupCalibratedScores': ('X',), 'trustml_nb.monoculture.ModelEcosystem': ('X',),
    'trustml_nb.multicalibration.Multicalibrator': ('groups',), 'trustml_nb.multicalibration.MCBoost': ('groups',),
    'trustml_nb.omniprediction.OmniPredictor': ('groups', 'tests'), 'trustml_nb.omniprediction.GroupConformal': ('groups',),
    'trustml_nb.pse.GLMClassifier': ('X',), 'trustml_nb.pse.GLMRegressor': ('X',), 'trustml_nb.pse.StackClassifier': ('X',),
    'trustml_nb.pse.StackRegressor': ('X',), 'trustml_nb.pse.PathSpecificEffects': ('data',), 'trustml_nb.quere.QueReProbe': ('X',),
}

ESTIMATOR_CASES = _estimator_cases()
CASES = {**FUNCTION_CASES, **ESTIMATOR_CASES}
for _b in (_case_encode_features, _case_intersect, _case_group_sizes, _case_threshold_decisions, _case_multiaccuracy_tests, _case_compare_omni):
    _b.free = True      # their columns name groups, models or tests: renaming relabels the output, dropping one drops it
SCHEMA = sorted(k for k, b in CASES.items() if not getattr(b, 'free', False))   # inputs with a schema: renamed/missing is an error


# ---- meta-tests: nothing discovered goes without a case -------------------------------------------------------------

def test_every_frame_taking_function_has_a_case_or_a_reason():
    found = discovered_functions()
    assert len(found) >= 50, f"discovery found only {len(found)} frame parameters: is the rule broken?"
    uncovered = sorted(k for k in found if k not in FUNCTION_CASES and k not in EXEMPT)
    assert not uncovered, f"public functions taking a frame without a labelled-input case (add one to FUNCTION_CASES) or a reason in EXEMPT: {uncovered}"
    stale = sorted(k for k in {**FUNCTION_CASES, **EXEMPT} if k not in found)
    assert not stale, f"cases or exemptions for functions/parameters that no longer exist (renamed?): {stale}"
    assert not set(FUNCTION_CASES) & set(EXEMPT), "a function is both covered and exempt"


def test_every_estimator_has_a_case_or_a_reason():
    ests = package_estimators()
    covered = {k for k, v in _ESTIMATOR_FRAMES.items() if v}
    uncovered = sorted(set(ests) - covered - set(EXEMPT_ESTIMATORS))
    assert not uncovered, f"estimators without a labelled-input case (frames in contract.small_fits and _ESTIMATOR_FRAMES) or a reason: {uncovered}"
    fits = small_fits()
    for name, which in _ESTIMATOR_FRAMES.items():   # the registry of names agrees with what the small fits hold
        assert name in ests, f"{name} is not a public estimator"
        assert name in fits, f"{name} has no small fit"


def test_small_fits_declare_their_frames():
    "Each SmallFit's frames are exactly the inputs _ESTIMATOR_FRAMES lists (built here without fitting)."
    import contract
    src = inspect.getsource(contract.small_fits) + inspect.getsource(contract._fed_fit)
    for name, which in _ESTIMATOR_FRAMES.items():
        for w in which: assert f"'{w}'" in src, f"contract.small_fits has no frame {w!r} (for {name})"


# ---- the contract ---------------------------------------------------------------------------------------------------

def _run(case, frame):
    with quiet(SmallGroupWarning, NumericalWarning): return case.call(frame)


@pytest.mark.parametrize('key', sorted(CASES))
def test_reordered_labels_give_an_identical_result(key):
    case = CASES[key]()
    first = _run(case, case.frame)
    again = _run(case, reordered(case.frame))
    if case.align is not None: first, again = case.align(first), case.align(again)
    assert same(first, again, case.tol), f"{key}: the same input with its labels in another order gave a different result"


def _clear_error(key, fn, labels):
    try: out = fn()
    except ValueError as e:
        inside, where = _raised_in_package(e)
        assert inside, f"{key}: the ValueError came from outside trustml_nb (at {where}): {e}"
        assert any(l in str(e) for l in labels), f"{key}: the error does not name the column {labels}: {e}"
        return
    except Exception as e:
        raise AssertionError(f"{key}: expected a clear ValueError naming {labels}, got {type(e).__name__}: {e}") from e
    raise AssertionError(f"{key}: no error: the call returned {type(out).__name__} {str(out)[:200]}")


@pytest.mark.parametrize('key', SCHEMA)
def test_renamed_label_is_a_clear_error(key):
    case = CASES[key]()
    frame, labels = renamed(case.frame)
    _clear_error(key, lambda: _run(case, frame), labels)


@pytest.mark.parametrize('key', SCHEMA)
def test_missing_label_is_a_clear_error(key):
    case = CASES[key]()
    frame, labels = missing(case.frame)
    _clear_error(key, lambda: _run(case, frame), labels)


# ---- one label per row given as a one-column DataFrame (issue 33, item 8) ---------------------------------------------

def _sensitive_cases():
    from trustml_nb import groups, mifpo
    from trustml_nb.fedfact import FedAvg, FedFactPost
    from contract import _fed_tiny
    f = mifpo.synthetic_mifpo(400, seed=9)
    def fair_rep(s): return mifpo.FairRepresentation(gamma=0.1).fit(f['p_true'], f['y'], sensitive=s).transform(f['p_true'], sensitive=s)
    def calibrated(s):
        X = pd.DataFrame({'logit': np.log(f['p_true'] / (1 - f['p_true'])), 'noise': _rng().normal(size=len(f))})
        return mifpo.GroupCalibratedScores(n_folds=2, max_iter=10).fit(X, f['y'], sensitive=s).predict_proba(X, sensitive=s)
    def fed_post(s):
        fd = _fed_tiny()
        est = FedFactPost(n_rounds=2, local_steps=2, base_model=FedAvg(n_rounds=1, local_steps=3, show_progress=False), show_progress=False)
        with quiet(NumericalWarning): est.fit(fd)
        return est.predict(fd.X_test, sensitive=pd.Series(fd.a_test, name='a') if s is None else s, clients=fd.k_test)
    fd_a = _fed_tiny().a_test
    return {
        'groups.check_sensitive': (f['group'], lambda s: groups.check_sensitive(s, kind='binary')),
        'mifpo.bin_scores': (f['group'], lambda s: mifpo.bin_scores(f['y'], f['p_true'], s, n_bins=4)),
        'mifpo.FairRepresentation': (f['group'], fair_rep),
        'mifpo.GroupCalibratedScores': (f['group'], calibrated),
        'fedfact.FedFactPost.predict': (pd.Series(fd_a, name='a'), fed_post),
    }


@pytest.mark.parametrize('key', ['groups.check_sensitive', 'mifpo.bin_scores', 'mifpo.FairRepresentation', 'mifpo.GroupCalibratedScores',
                                 'fedfact.FedFactPost.predict'])
def test_sensitive_as_a_one_column_frame_equals_the_series(key):
    """`groups.check_sensitive` takes one label per row as a Series, an array or a one-column DataFrame; every estimator and
    function that takes `sensitive` accepts the same and computes the same (a wider frame is a clear error)."""
    series, call = _sensitive_cases()[key]
    with quiet(NumericalWarning, SmallGroupWarning):
        first = call(series)
        assert same(call(series.to_frame('who')), first), f"{key}: a one-column DataFrame of the same labels gave another result"
    wide = pd.concat([series.rename('a'), series.rename('b')], axis=1)
    _clear_error(key, lambda: call(wide), ('sensitive', 'column'))
