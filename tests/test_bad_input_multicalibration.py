"""Bad-input sweep of trustml_nb.multicalibration: every public entry point (the metrics, the two estimators' fit,
predict and saturation_check, the data builders, the study and the explorer) with NaN and inf, empty input, length
mismatch, wrong dtypes, duplicate/missing/renamed/reordered group columns, a single class, a single group, one-row
groups, out-of-range probabilities and hyper-parameters, unknown options. Every call ends in a clear trustml_nb error
naming the argument, or in a correct result checked against something exact. Tiny data, a few boosting rounds."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb.core import NumericalWarning
from trustml_nb.data import Task, TaskSplit
from trustml_nb.groups import intersect
from trustml_nb.multicalibration import (MCBoost, Multicalibrator, adult_mc_task, make_mc_synthetic, mc_error, mc_explorer,
                                         mc_table, multicalibration_study, plot_group_reliability, reliability_table,
                                         smooth_ece, weighted_smooth_ece)

M = 'multicalibration'
FAST = dict(learning_rates=(0.3,), max_rounds=5, patience=2)
D = make_mc_synthetic(120, seed=0)
Y, P, G = D['y'], D['p0'], D['groups']
N = len(Y)


def err(fn, *a, arg, **k): return expect_error(fn, *a, arg=arg, module=M, **k)
def ok(fn, *a, check, **k): return expect_ok(fn, *a, check=check, module=M, **k)


def _probs(p): return isinstance(p, np.ndarray) and p.shape == (N,) and finite(p) and 0 <= p.min() and p.max() <= 1


def _mce_brute(y, p, groups, n_bins):
    "The MC error straight from its definition: max over groups of (1/n) sum over bins of |sum of residuals|."
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    return max(sum(abs((y - p)[m & (b == v)].sum()) for v in range(n_bins)) / len(y) for m in np.asarray(groups, bool).T)


@pytest.fixture(scope='module')
def fitted():
    return Multicalibrator(**FAST).fit(P, Y, groups=G)


@pytest.fixture(scope='module')
def boosted():
    return MCBoost(tolerance=0.01).fit(P, Y, groups=G)


# ---- metrics -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('fn', [mc_error, mc_table, weighted_smooth_ece, reliability_table])
@pytest.mark.parametrize('case,args,arg', [
    ('nan prob', (Y, with_nan(P), G), 'y_prob'), ('inf prob', (Y, with_inf(P), G), 'y_prob'),
    ('prob > 1', (Y, P + 0.5, G), 'y_prob'), ('prob < 0', (Y, P - 0.5, G), 'y_prob'),
    ('text probs', (Y, np.array(['0.5'] * N), G), 'y_prob'), ('bool probs', (Y, P > 0.5, G), 'y_prob'),
    ('labels 0/1/2', (np.where(Y == 1, 2, 0), P, G), 'y_true'), ('nan label', (with_nan(Y), P, G), 'y_true'),
    ('text labels', (np.array(['yes'] * N), P, G), 'y_true'), ('length mismatch', (Y[:-1], P, G), 'y_true'),
    ('groups too short', (Y, P, G[:-1]), 'groups'), ('empty', ([], [], G[:0]), 'y_prob'),
    ('duplicate group names', (Y, P, pd.concat([G['a=1'], G['a=1']], axis=1)), 'groups'),
    ('group 0/1/2', (Y, P, G.assign(**{'a=1': G['a=1'].astype(int) * 2})), 'groups'),
    ('empty group', (Y, P, G.assign(**{'a=1': False})), 'groups'), ('groups None', (Y, P, None), 'groups'),
    ('groups nan', (Y, P, G.astype(float).assign(**{'a=1': with_nan(G['a=1'])})), 'groups'),
])
def test_metric_bad_inputs(fn, case, args, arg):
    err(fn, *args, arg=arg, case=f"{fn.__name__}: {case}")


@pytest.mark.parametrize('fn,kw,arg', [(mc_error, dict(n_bins=0), 'n_bins'), (mc_error, dict(n_bins=2.5), 'n_bins'),
                                       (mc_table, dict(n_bins='10'), 'n_bins'), (mc_error, dict(n_bins=10**7), 'n_bins'),
                                       (reliability_table, dict(n_bins=-1), 'n_bins')])
def test_metric_bins(fn, kw, arg):
    err(fn, Y, P, G, arg=arg, **kw)


def test_metrics_correct_on_edge_cases():
    one_class = np.zeros(N, int)
    ok(mc_error, one_class, P, G, check=lambda v: v == pytest.approx(_mce_brute(one_class, P, G, 10)), case='mc_error: a single class')
    ok(mc_error, Y, P, G['a=1'], check=lambda v: v == pytest.approx(_mce_brute(Y, P, G[['a=1']], 10)), case='mc_error: a single group (Series)')
    ok(mc_error, Y, P, G['a=1'].to_numpy(int), check=lambda v: v == pytest.approx(_mce_brute(Y, P, G[['a=1']], 10)), case='mc_error: one 0/1 vector')
    one_row = pd.DataFrame({'solo': np.arange(N) == 3, 'rest': np.arange(N) != 3})
    ok(mc_table, Y, P, one_row, check=lambda t: t['weighted'][0] == pytest.approx(abs(Y[3] - P[3]) / N) and t['size'].tolist() == [1, N - 1],
       case='mc_table: a one-row group')
    cat = pd.DataFrame({'sex': pd.Categorical(np.where(G['a=1'], 'F', 'M'))})
    ok(mc_error, Y, P, cat, check=lambda v: v == pytest.approx(_mce_brute(Y, P, np.column_stack([G['a=1'], ~G['a=1']]), 10)),
       case='mc_error: a categorical column (one group per level)')
    ok(mc_error, Y.astype(bool), P, G, check=lambda v: v == pytest.approx(_mce_brute(Y, P, G, 10)), case='mc_error: boolean labels')
    ok(mc_error, Y, pd.DataFrame({'score': P}), G, check=lambda v: v == pytest.approx(_mce_brute(Y, P, G, 10)), case='mc_error: one-column table of scores')
    ok(mc_error, Y, P, G[G.columns[::-1]], check=lambda v: v == pytest.approx(_mce_brute(Y, P, G, 10)), case='mc_error: reordered group columns')
    ok(weighted_smooth_ece, Y, P, G[['a=1']], check=lambda v: v == pytest.approx(smooth_ece(Y[G['a=1']], P[G['a=1']])),
       case='weighted_smooth_ece: a single group')


@pytest.mark.parametrize('case,args,kw,arg', [
    ('nan prob', (Y, with_nan(P)), {}, 'y_prob'), ('prob > 1', (Y, P * 2), {}, 'y_prob'),
    ('length mismatch', (Y, P[:-1]), {}, 'y_true'), ('labels 0/1/2', (Y * 2, P), {}, 'y_true'), ('empty', ([], []), {}, 'y_prob'),
    ('2-D probs', (Y, np.column_stack([P, P])), {}, 'y_prob'), ('n_grid 1', (Y, P), dict(n_grid=1), 'n_grid'), ('n_grid huge', (Y, P), dict(n_grid=10 ** 6), 'n_grid'),
    ('resolution 0', (Y, P), dict(resolution=0), 'resolution'), ('resolution float', (Y, P), dict(resolution=2.5), 'resolution'),
])
def test_smooth_ece_bad_inputs(case, args, kw, arg):
    err(smooth_ece, *args, arg=arg, case=f"smooth_ece: {case}", **kw)


def test_mc_error_to_truth_bad_inputs():
    from trustml_nb.multicalibration import mc_error_to_truth
    err(mc_error_to_truth, P, P, G, n_bins=0, arg='n_bins', case='mc_error_to_truth: n_bins 0')
    err(mc_error_to_truth, P, P[:-1], G, arg='y_prob', case='mc_error_to_truth: length mismatch')
    err(mc_error_to_truth, P * 2, P, G, arg='p_true', case='mc_error_to_truth: p_true > 1')
    ok(mc_error_to_truth, P, P, G, check=lambda v: v == 0.0, case='mc_error_to_truth: the truth itself')


def test_reliability_inputs():
    err(reliability_table, Y, {}, G, arg='y_prob', case='reliability_table: empty dict')
    err(reliability_table, Y, {'ok': P, 'bad': P + 1}, G, arg="y_prob['bad']", case='reliability_table: one bad predictor')
    ok(reliability_table, Y, {'a': P, 'b': P}, G[['a=1']], check=lambda t: t.groupby('model')['count'].sum().tolist() == [G['a=1'].sum()] * 2,
       case='reliability_table: two predictors')
    err(plot_group_reliability, Y, P, G, show=['nope'], arg='show', case='plot_group_reliability: unknown group')
    err(plot_group_reliability, Y, P, G, show=[], arg='show', case='plot_group_reliability: no group')
    err(plot_group_reliability, Y, P, G, min_count=-1, arg='min_count', case='plot_group_reliability: negative min_count')
    err(plot_group_reliability, Y, P, G, show=['a=1'], n_bins=0, arg='n_bins', case='plot_group_reliability: n_bins 0')
    ok(plot_group_reliability, Y, P, G, show='a=1', check=lambda axes: len(axes) == 1 and axes[0].get_title() == 'a=1',
       case='plot_group_reliability: one group by name')
    err(plot_group_reliability, Y, P, G.assign(nobody=False), show=['nobody'], arg='show', case='plot_group_reliability: an empty group drawn')
    ok(plot_group_reliability, Y, P, G.assign(nobody=False), show=['a=1'], check=lambda axes: len(axes) == 1,
       case='plot_group_reliability: an empty group not drawn')
    err(plot_group_reliability, Y, P, G[:-1], show=['a=1'], arg='groups', case='plot_group_reliability: groups too short')


# ---- Multicalibrator and MCBoost: fit ------------------------------------------------------------------------------

FIT_DATA = [
    ('nan X', (with_nan(P), Y, G), 'X'), ('inf X', (with_inf(P), Y, G), 'X'), ('X > 1', (P + 1, Y, G), 'X'),
    ('X < 0', (P - 1, Y, G), 'X'), ('empty', ([], [], G[:0]), 'X'), ('text X', (np.array(['a'] * N), Y, G), 'X'),
    ('object X', (np.array([None] * N, dtype=object), Y, G), 'X'), ('bool X', (P > 0.5, Y, G), 'X'),
    ('categorical X', (pd.Series(pd.Categorical(np.round(P, 1))), Y, G), 'X'), ('two-column X', (np.column_stack([P, P]), Y, G), 'X'),
    ('length mismatch', (P, Y[:-1], G), 'y'), ('single class', (P, np.ones(N, int), G), 'y'), ('labels 0/1/2', (P, Y * 2, G), 'y'),
    ('nan y', (P, with_nan(Y), G), 'y'), ('text y', (P, np.array(['1'] * N), G), 'y'),
    ('groups None', (P, Y, None), 'groups'), ('groups too long', (P, Y, pd.concat([G, G[:1]])), 'groups'),
    ('duplicate group names', (P, Y, pd.concat([G[['a=1']], G[['a=1']]], axis=1)), 'groups'),
    ('empty group', (P, Y, G.assign(**{'a=1': False})), 'groups'), ('group 0/1/2', (P, Y, G.astype(int) * 2), 'groups'),
    ('groups as text', (P, Y, 'a=1'), 'groups'), ('one row', (P[:1], Y[:1], G[:1]), 'y'),
]


@pytest.mark.parametrize('make', [lambda: Multicalibrator(**FAST), lambda: MCBoost()], ids=['Multicalibrator', 'MCBoost'])
@pytest.mark.parametrize('case,args,arg', FIT_DATA, ids=[c[0] for c in FIT_DATA])
def test_fit_bad_data(make, case, args, arg):
    est = make()
    err(est.fit, *args, arg=arg, case=f"{type(est).__name__}.fit: {case}")


MC_SETTINGS = [
    (dict(learning_rates=()), 'learning_rates'), (dict(learning_rates=0.1), 'learning_rates'),
    (dict(learning_rates='0.1'), 'learning_rates'), (dict(learning_rates=(0.0,)), 'learning_rates'),
    (dict(learning_rates=(-0.1,)), 'learning_rates'), (dict(learning_rates=(np.nan,)), 'learning_rates'),
    (dict(learning_rates=(0.1, 2.0)), 'learning_rates'), (dict(learning_rates=None), 'learning_rates'),
    (dict(learning_rates=[[0.1]]), 'learning_rates'), (dict(learning_rates=[0.1, 'a']), 'learning_rates'),
    (dict(learning_rates=[0.1, [1, 2]]), 'learning_rates'), (dict(learning_rates=np.array(0.1)), 'learning_rates'),
    (dict(learning_rates=(True,)), 'learning_rates'),
    (dict(bagging_fractions=(0.0,)), 'bagging_fractions'), (dict(bagging_fractions=(1.5,)), 'bagging_fractions'),
    (dict(bagging_fractions=[]), 'bagging_fractions'), (dict(max_depth=0), 'max_depth'), (dict(max_depth=9), 'max_depth'),
    (dict(max_depth=2.5), 'max_depth'), (dict(max_depth='2'), 'max_depth'), (dict(max_depth=True), 'max_depth'),
    (dict(val_fraction=0), 'val_fraction'), (dict(val_fraction=1), 'val_fraction'), (dict(val_fraction=np.nan), 'val_fraction'),
    (dict(max_rounds=0), 'max_rounds'), (dict(max_rounds=1.5), 'max_rounds'), (dict(max_rounds=np.inf), 'max_rounds'),
    (dict(patience=0), 'patience'), (dict(seed=-1), 'seed'), (dict(seed=2**40), 'seed'), (dict(seed=1.5), 'seed'),
    (dict(seed=None), 'seed'), (dict(seed='0'), 'seed'), (dict(show_progress='yes'), 'show_progress'),
    (dict(show_progress=1), 'show_progress'), (dict(show_progress=np.array([True])), 'show_progress'),
    (dict(loss='hinge'), 'loss'), (dict(loss=None), 'loss'), (dict(loss=['log']), 'loss'), (dict(recalibrate='yes'), 'recalibrate'),
    (dict(recalibrate=1), 'recalibrate'), (dict(recalibrate=None), 'recalibrate'), (dict(n_folds=0), 'n_folds'), (dict(n_folds=1.5), 'n_folds'),
    (dict(n_folds=51), 'n_folds'), (dict(n_folds='5'), 'n_folds'), (dict(min_leaf_rows=0), 'min_leaf_rows'), (dict(min_leaf_rows=2.5), 'min_leaf_rows'),
    (dict(min_leaf_rows='20'), 'min_leaf_rows'), (dict(max_bins=1), 'max_bins'), (dict(max_bins=255.5), 'max_bins'), (dict(max_bins=None), 'max_bins'),
]


@pytest.mark.parametrize('kw,arg', MC_SETTINGS, ids=[f"{k}={v!r}" for kw, _ in MC_SETTINGS for k, v in kw.items()])
def test_multicalibrator_bad_settings(kw, arg):
    est = Multicalibrator(**{**FAST, **kw})          # accepted by __init__ (no validation there) ...
    err(est.fit, P, Y, groups=G, arg=arg, case=f"Multicalibrator({kw})")   # ... refused by fit


@pytest.mark.parametrize('kw,arg', [(dict(n_levels=0), 'n_levels'), (dict(n_levels=2.5), 'n_levels'), (dict(tolerance=0), 'tolerance'),
                                    (dict(tolerance=-1), 'tolerance'), (dict(tolerance=np.nan), 'tolerance'), (dict(alpha=1.5), 'alpha'),
                                    (dict(max_iter=0), 'max_iter'), (dict(max_iter='10'), 'max_iter')])
def test_mcboost_bad_settings(kw, arg):
    err(MCBoost(**kw).fit, P, Y, groups=G, arg=arg, case=f"MCBoost({kw})")


def test_fit_correct_on_edge_cases():
    "Odd but valid inputs give valid, checked results."
    one_group = pd.DataFrame({'everyone': np.ones(N, bool)})
    ok(lambda: Multicalibrator(**FAST).fit(P, Y, groups=one_group).predict(P, groups=one_group), check=_probs, case='Multicalibrator: a single group')
    solo = G.assign(solo=np.arange(N) == 7)
    ok(lambda: Multicalibrator(**FAST).fit(P, Y, groups=solo).predict(P, groups=solo), check=_probs, case='Multicalibrator: a one-row group')
    ok(lambda: Multicalibrator(**FAST).fit(P.reshape(-1, 1), Y.astype(bool), groups=G.astype(int)).predict(P, groups=G),
       check=_probs, case='Multicalibrator: one-column X, boolean y, 0/1 groups')
    two = dict(n_folds=1, recalibrate=False, loss='squared')
    ok(lambda: Multicalibrator(**FAST, **two).fit(P[:2], np.array([0, 1]), groups=G[:2].assign(x=True)[['x']]).predict(P[:2], groups={'x': [1, 1]}),
       check=lambda p: np.allclose(p, P[:2]), case='Multicalibrator: two rows, one split (too few to split: the base score comes back)')
    err(Multicalibrator(**FAST).fit, P[:9], Y[:9], groups=G[:9].assign(x=True)[['x']], arg='X', case='Multicalibrator: 9 rows, too few for 5 folds')
    # labels separable by the score: the recalibration runs off, the fit says so and boosts from the base score itself
    sep_p, sep_y = np.linspace(0.05, 0.95, 40), (np.linspace(0.05, 0.95, 40) > 0.5).astype(int)
    with pytest.warns(NumericalWarning, match='recalibration of the base score did not converge'):
        m = Multicalibrator(**FAST).fit(sep_p, sep_y, groups={'x': np.ones(40, bool)})
    assert (m.report_.recalibration_slope, m.report_.recalibration_intercept) == (1.0, 0.0) and 'did not converge' in m.report_.notes[0]
    cat = pd.DataFrame({'sex': pd.Categorical(np.where(G['a=1'], 'F', 'M'))})
    ok(lambda: MCBoost(tolerance=0.01).fit(P, Y, groups=cat).groups_, check=lambda g: g == ['sex=F', 'sex=M'], case='MCBoost: categorical groups')
    # MCBoost on one group with a big alpha makes no patch: the prediction is the base score rounded to the level midpoints
    ok(lambda: MCBoost(tolerance=0.99).fit(P, Y, groups=one_group).predict(P, groups=one_group),
       check=lambda p: np.allclose(p, (np.minimum((P * 10).astype(int), 9) + 0.5) / 10), case='MCBoost: no patch')


# ---- predict and saturation_check ---------------------------------------------------------------------------------

@pytest.mark.parametrize('which', ['fitted', 'boosted'])
def test_predict_groups_by_name(which, request):
    est = request.getfixturevalue(which)
    name = type(est).__name__
    base = est.predict(P, groups=G)
    ok(est.predict, P, groups=G[G.columns[::-1]], check=lambda p: np.array_equal(p, base), case=f"{name}.predict: reordered group columns")
    ok(est.predict, P[:3], groups=G[:3], check=lambda p: np.array_equal(p, base[:3]), case=f"{name}.predict: a few rows (empty groups allowed)")
    ok(est.predict, P, groups=dict(G.items()), check=lambda p: np.array_equal(p, base), case=f"{name}.predict: dict of masks")
    err(est.predict, P, groups=G.rename(columns={'a=1': 'A=1'}), arg='groups', case=f"{name}.predict: renamed group")
    err(est.predict, P, groups=G.drop(columns='a=1'), arg='groups', case=f"{name}.predict: missing group")
    err(est.predict, P, groups=G.assign(extra=True), arg='groups', case=f"{name}.predict: unexpected group")
    err(est.predict, P, groups=G.to_numpy(), arg='groups', case=f"{name}.predict: unnamed array")
    err(est.predict, P, groups=G[:-1], arg='groups', case=f"{name}.predict: length mismatch")
    err(est.predict, with_nan(P), groups=G, arg='X', case=f"{name}.predict: NaN")
    err(est.predict, P + 1, groups=G, arg='X', case=f"{name}.predict: X > 1")
    err(est.predict, [], groups=G[:0], arg='X', case=f"{name}.predict: empty")
    err(type(est)().predict, P, groups=G, arg=name, case=f"{name}.predict: not fitted")


def test_saturation_check_inputs(fitted):
    err(fitted.saturation_check, P[::-1].copy(), Y, groups=G, arg='X', case='saturation_check: other data of the same length')
    err(fitted.saturation_check, P[:-1], Y[:-1], groups=G[:-1], arg='X', case='saturation_check: fewer rows')
    err(fitted.saturation_check, P, Y, groups=G, max_rounds=0, arg='max_rounds', case='saturation_check: max_rounds 0')
    err(fitted.saturation_check, P, Y, groups=G, tolerance=-0.1, arg='tolerance', case='saturation_check: negative tolerance')
    err(fitted.saturation_check, P, Y, groups=G.rename(columns={'a=1': 'x'}), arg='groups', case='saturation_check: renamed group')
    ok(fitted.saturation_check, P, Y, groups=G[G.columns[::-1]],
       check=lambda r: finite(r.relative_drop) and r.val_mse_first == pytest.approx(np.mean((Y - fitted.predict(P, groups=G))[fitted.folds_ >= 0] ** 2)),
       case='saturation_check: reordered group columns')


@settings(max_examples=15, deadline=None)
@given(perm_seed=st.integers(0, 10_000), n=st.integers(1, 40))
def test_predict_any_column_order_and_rows(perm_seed, n):
    "Hypothesis: any order of the group columns and any subset of rows predicts the same as the fitted order."
    est = _FITTED
    rng = np.random.default_rng(perm_seed)
    rows, cols = rng.choice(N, n, replace=False), list(rng.permutation(G.columns))
    ok(est.predict, P[rows], groups=G.iloc[rows][cols], check=lambda p: np.array_equal(p, est.predict(P, groups=G)[rows]),
       case='Multicalibrator.predict: random column order and rows')


@settings(max_examples=15, deadline=None)
@given(bad=st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda v: not -1e-5 <= v <= 1 + 1e-5),
                     st.just(float('nan'))), at=st.integers(0, N - 1))
def test_out_of_range_scores_anywhere(bad, at):
    "Hypothesis: one bad score anywhere is refused, naming X."
    x = P.copy(); x[at] = bad
    err(_FITTED.predict, x, groups=G, arg='X', case='Multicalibrator.predict: one bad score')


_FITTED = Multicalibrator(**FAST).fit(P, Y, groups=G)


# ---- data builders, the study and the explorer --------------------------------------------------------------------

@pytest.mark.parametrize('kw,arg', [(dict(n_rows=5), 'n_rows'), (dict(n_rows=100.0), 'n_rows'), (dict(group_shift=0.5), 'group_shift'), (dict(delta=np.nan), 'group_shift'),
                                    (dict(intersection_shift=-0.1), 'intersection_shift'), (dict(seed=-1), 'seed'), (dict(seed='0'), 'seed')])
def test_make_mc_synthetic(kw, arg):
    err(make_mc_synthetic, arg=arg, **kw)


@pytest.mark.parametrize('kw,arg', [(dict(max_rows=5), 'max_rows'), (dict(max_rows=1000.5), 'max_rows'), (dict(min_group_size=0), 'min_group_size'),
                                    (dict(min_group_size=2.5), 'min_group_size'), (dict(seed=-1), 'seed'), (dict(seed=1.5), 'seed')])
def test_adult_mc_task(kw, arg):
    err(adult_mc_task, arg=arg, **kw)     # refused before the data are loaded


def _tiny_task(n=300, seed=0):
    "A Task with calib/test splits built from synthetic data (no Adult load): attributes sex, race, age_group."
    rng = np.random.default_rng(seed)
    splits = {}
    for name in ('calib', 'test'):
        A = pd.DataFrame({'sex': rng.choice(['F', 'M'], n), 'race': rng.choice(['x', 'y'], n), 'age_group': rng.choice(['<30', '30+'], n)}).astype('category')
        p = rng.uniform(0.05, 0.95, n)
        y = rng.binomial(1, np.clip(p + 0.2 * (A['sex'] == 'F').to_numpy(), 0, 1))
        splits[name] = TaskSplit(name, pd.DataFrame({'x': p}), y, A, intersect(A), p, np.arange(n))
    return Task('synthetic', label='y', classes=(0, 1), sensitive=('sex', 'race', 'age_group'), splits=splits, base_model=None,
                base_split='', n_rows=2 * n, dropped_rows=0)


TINY = _tiny_task()


@pytest.mark.parametrize('kw,arg', [(dict(task='adult'), 'task'), (dict(task=None), 'task'), (dict(family='age'), 'family'),
                                    (dict(family=None), 'family'), (dict(learning_rate=0), 'learning_rate'), (dict(learning_rate=3.0), 'learning_rate'),
                                    (dict(learning_rate=np.nan), 'learning_rate'), (dict(max_depth=0), 'max_depth'), (dict(n_bins=0), 'n_bins'),
                                    (dict(min_size=0), 'min_size'), (dict(min_size=10**6), 'min_size'), (dict(seed=-1), 'seed'),
                                    (dict(n_levels=0), 'n_levels'), (dict(n_levels=2.5), 'n_levels'), (dict(min_size=2.5), 'min_size')])
def test_study_bad_inputs(kw, arg):
    err(multicalibration_study, **{'task': TINY, 'learning_rate': 0.3, **kw}, arg=arg)


def test_study_task_shape():
    no_test = Task('synthetic', label='y', classes=(0, 1), sensitive=TINY.sensitive, splits={'calib': TINY['calib']}, base_model=None,
                   base_split='', n_rows=300, dropped_rows=0)
    err(multicalibration_study, no_test, arg='task', case='study: no test split')
    from dataclasses import replace
    no_score = replace(TINY, splits={k: replace(s, score=None) for k, s in TINY.splits.items()})
    err(multicalibration_study, no_score, arg='task', case='study: no base scores')
    no_age = replace(TINY, splits={k: replace(s, A=s.A[['sex', 'race']]) for k, s in TINY.splits.items()})
    err(multicalibration_study, no_age, family='sex x race x age', arg='task', case='study: attribute missing')
    renamed = replace(TINY, splits={'calib': TINY['calib'], 'test': replace(TINY['test'], groups=TINY['test'].groups.rename(columns={'sex=F': 'SEX=F'}))})
    err(multicalibration_study, renamed, learning_rate=0.3, arg="task['test'].groups", case='study: test groups named unlike the calibration groups')
    ok(multicalibration_study, no_age, family='sex x race', learning_rate=0.3,
       check=lambda r: r.n_groups == 8 and list(r.test_groups.columns) == [c for c in TINY['test'].groups.columns if 'age_group' not in c],
       case="study: the task's groups of the family")
    ok(multicalibration_study, no_age, family='sex x race', learning_rate=0.3, min_size=20,
       check=lambda r: r.n_groups == r.test_groups.shape[1] == 8 and r.mc_error_ours == pytest.approx(_mce_brute(r.y_test, r.test_predictions['ERM depth 2'].to_numpy(), r.test_groups, 10)),
       case='study: two attributes on a small task')


def test_explorer_bad_task():
    err(mc_explorer, 'adult', arg='task')      # refused before a widget is built (test_multicalibration drives a real one)
    err(mc_explorer, TINY['test'], arg='task', case='mc_explorer: a split instead of the task')
