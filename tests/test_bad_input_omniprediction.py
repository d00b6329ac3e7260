"""Bad-input sweep of trustml_nb.omniprediction (issue 12): every public entry point with NaN and inf, empty input,
length mismatch, wrong dtypes, duplicate, missing and reordered columns, a single class, a single group, one-row
groups, out-of-range probabilities and settings, and unknown option strings. Each call ends in a clear trustml_nb error
naming the argument, or in a result checked against something exact."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb.omniprediction import (ABSTAIN, GroupConformal, Loss, OmniPredictor, adult_tests, bayes_action, calibration_violation,
                                       compare_omniprediction, coverage_explorer, coverage_report, expected_losses, explore_losses,
                                       group_ratio_sd, loss_grid, multiaccuracy_violations, omni_explorer, plot_omni_ratios,
                                       quantile_fit, realized_loss, selective_report, synthetic_groups, synthetic_selective,
                                       threshold_action, tune_selective)

M = 'omniprediction'
N = 80
rng = np.random.default_rng(0)
P0 = rng.uniform(0.05, 0.95, N)
Y = (rng.uniform(size=N) < P0).astype(int)
G = pd.DataFrame({'all': np.ones(N, bool), 'a': np.arange(N) < 30, 'b': np.arange(N) % 3 == 0})
T = pd.DataFrame({'one': np.ones(N), 'x': np.linspace(-1, 1, N)})
L = Loss(1, 2, 0.3)
FAST = dict(tolerance=0.02, max_rounds=5, max_steps=50)
OM = OmniPredictor(**FAST).fit(P0, Y, groups=G, tests=T)
P1 = OM.predict(P0, groups=G, tests=T)
GC = GroupConformal(alpha=0.2).fit(P0, Y, groups=G)
SETS = GC.predict(P0, groups=G)


def err(fn, *args, arg, **kw): return expect_error(fn, *args, arg=arg, module=M, **kw)
def ok(fn, *args, check, **kw): return expect_ok(fn, *args, check=check, module=M, **kw)
def fit(**kw): return lambda *a, **k: OmniPredictor(**{**FAST, **kw}).fit(*a, **k)
def conformal(**kw): return lambda *a, **k: GroupConformal(**kw).fit(*a, **k)
def same(a): return lambda b: np.array_equal(np.asarray(a), np.asarray(b))


# ---------------------------------------------------------------- issue 12 findings
def test_finding_5_reordered_test_columns_are_matched_by_name():
    ok(OM.predict, P0, groups=G, tests=T[['x', 'one']], check=same(P1), case='predict tests reordered')
    ok(OM.predict, P0, groups=G[['b', 'all', 'a']], tests=T, check=same(P1), case='predict groups reordered')
    err(OM.predict, P0, groups=G, tests=T.rename(columns={'x': 'y'}), arg='tests', case='predict tests renamed')
    err(OM.predict, P0, groups=G, tests=T[['one']], arg='tests', case='predict tests missing')
    err(OM.predict, P0, groups=G, tests=T.assign(z=0.0), arg='tests', case='predict tests extra')
    err(OM.predict, P0, groups=G, tests=T.to_numpy(), arg='tests', case='predict tests unnamed array')
    err(OM.predict, P0, groups=G.rename(columns={'a': 'A'}), tests=T, arg='groups', case='predict groups renamed')


def test_finding_duplicate_column_names():
    err(fit(), P0, Y, groups=G, tests=pd.concat([T, T[['x']]], axis=1), arg='tests', case='fit duplicate test names')
    err(fit(), P0, Y, groups=pd.concat([G, G[['a']]], axis=1), tests=T, arg='groups', case='fit duplicate group names')
    err(OM.predict, P0, groups=G, tests=pd.concat([T, T[['x']]], axis=1), arg='tests', case='predict duplicate test names')
    dup = pd.DataFrame(np.column_stack([SETS['has0'], SETS['has0'], SETS['has1']]), columns=['has0', 'has0', 'has1'])
    err(coverage_report, Y, dup, arg='y_pred', case='coverage_report duplicate has0')
    X = pd.DataFrame({'age': [30, 40], 'education_num': [9, 13], 'hours_per_week': [40, 50]})
    err(adult_tests, pd.concat([X, X[['age']]], axis=1), [0.2, 0.4], arg='X', case='adult_tests duplicate age')


# ---------------------------------------------------------------- losses and actions
@pytest.mark.parametrize('fp, fn, ab, arg', [(-1, 1, 0.1, 'fp'), (1, -2, 0.1, 'fn'), (1, 1, -0.5, 'abstain'), (0, 1, 0.1, 'fp'),
                                             (np.nan, 1, 0.1, 'fp'), (1, np.inf, 0.1, 'fn'), ('1', 1, 0.1, 'fp'), (True, 1, 0.1, 'fp'),
                                             (1, 1, None, 'abstain')])
def test_loss_costs(fp, fn, ab, arg):
    err(Loss, fp, fn, ab, arg=arg, case=f'Loss({fp!r}, {fn!r}, {ab!r})')


def test_actions():
    ok(Loss, 1, 1, 0, check=lambda l: l.interval == (0.0, 1.0), case='Loss abstain=0')
    for fn in (expected_losses, bayes_action):
        err(fn, with_nan(P0), L, arg='y_prob', case=f'{fn.__name__} NaN')
        err(fn, with_inf(P0), L, arg='y_prob', case=f'{fn.__name__} inf')
        err(fn, [], L, arg='y_prob', case=f'{fn.__name__} empty')
        err(fn, [0.2, 1.3], L, arg='y_prob', case=f'{fn.__name__} p > 1')
        err(fn, ['0.2', '0.3'], L, arg='y_prob', case=f'{fn.__name__} strings')
        err(fn, P0, (1, 2, 0.3), arg='loss', case=f'{fn.__name__} tuple loss')
    err(bayes_action, np.array([True, False]), L, arg='y_prob', case='bayes_action bool probabilities (masks, not scores: refused as everywhere)')
    ok(bayes_action, pd.Series([0.1, 0.5, 0.8]), L, check=same([0, ABSTAIN, 1]), case='bayes_action Series')
    err(bayes_action, pd.Series([0.1, 0.5], dtype='category'), L, arg='y_prob', case='bayes_action categorical')
    err(bayes_action, np.ones((3, 2)) / 2, L, arg='y_prob', case='bayes_action two columns')
    err(loss_grid, fn_costs=[-1, 1], arg='fn_costs', case='loss_grid negative fn')
    err(loss_grid, fn_costs=[0], arg='fn_costs', case='loss_grid zero fn')
    err(loss_grid, fn_costs=[], arg='fn_costs', case='loss_grid empty')
    err(loss_grid, fn_costs='12', arg='fn_costs', case='loss_grid string')
    err(loss_grid, abstain_fracs=[-0.1], arg='abstain_fracs', case='loss_grid negative abstain')
    err(loss_grid, abstain_fracs=[np.nan], arg='abstain_fracs', case='loss_grid NaN abstain')
    err(loss_grid, fn_costs=[1, True], arg='fn_costs', case='loss_grid boolean fn')
    err(loss_grid, fn_costs=[np.inf], arg='fn_costs', case='loss_grid infinite fn')
    err(loss_grid, abstain_fracs=[[0.1, 0.2]], arg='abstain_fracs', case='loss_grid nested abstain')
    ok(loss_grid, fn_costs=[2], abstain_fracs=[0, 0.5], check=lambda g: g == [Loss(1, 2, 0), Loss(1, 2, 0.5)], case='loss_grid small')


def test_realized_loss_and_selective_report():
    A = bayes_action(P0, L)
    err(realized_loss, Y[:-1], A, L, arg='y_pred', case='realized_loss length')
    err(realized_loss, Y, np.where(A == ABSTAIN, 0.5, A), L, arg='y_pred', case='realized_loss action 0.5')
    err(realized_loss, Y + 1, A, L, arg='y_true', case='realized_loss labels 1/2')
    err(realized_loss, Y.astype(str), A, L, arg='y_true', case='realized_loss string labels')
    err(realized_loss, Y, A, 'loss', arg='loss', case='realized_loss loss=str')
    err(selective_report, Y, A, L, G.iloc[:-1], arg='groups', case='selective_report groups length')
    err(selective_report, Y, A, L, G.assign(nobody=False), arg='groups', case='selective_report empty group')
    err(selective_report, Y, A, L, G.assign(a=np.where(G['a'], 1.0, np.nan)), arg='groups', case='selective_report NaN group')
    err(selective_report, [], [], L, arg='y_true', case='selective_report empty')
    one = G.assign(one=np.arange(N) == 7)
    ok(selective_report, Y, A, L, one, case='selective_report one-row group',
       check=lambda r: r.table.loc[3, 'n'] == 1 and r.table.loc[3, 'loss'] == realized_loss(Y[7:8], A[7:8], L)[0])
    sex = pd.Series(np.where(np.arange(N) < 30, 'F', 'M'), name='sex')
    ok(selective_report, Y, A, L, sex, case='selective_report label column',
       check=lambda r: list(r.table['group']) == ['sex=F', 'sex=M'] and r.table.loc[0, 'n'] == 30)
    y1 = np.zeros(N, int)
    ok(selective_report, y1, A, L, check=lambda r: r.selective_risk == np.mean(A[A != ABSTAIN] == 1), case='selective_report one class')


# ---------------------------------------------------------------- metrics
def test_metrics():
    err(multiaccuracy_violations, Y, P0[:-1], G, T, arg='y_prob', case='multiaccuracy length')
    err(multiaccuracy_violations, Y, with_nan(P0), G, T, arg='y_prob', case='multiaccuracy NaN')
    err(multiaccuracy_violations, Y, P0, G, T.assign(x=T['x'] * 2), arg='tests', case='multiaccuracy tests out of [-1, 1]')
    err(multiaccuracy_violations, Y, P0, G, T.assign(x=with_inf(T['x'])), arg='tests', case='multiaccuracy tests inf')
    err(multiaccuracy_violations, Y, P0, G, T.assign(x='a'), arg='tests', case='multiaccuracy tests strings')
    err(multiaccuracy_violations, Y, P0, G, T.iloc[:-1], arg='tests', case='multiaccuracy tests length')
    err(multiaccuracy_violations, Y, P0, G, T.iloc[:, :0], arg='tests', case='multiaccuracy no test columns')
    ok(multiaccuracy_violations, Y, P0, G, T.astype(bool), case='multiaccuracy bool tests',
       check=lambda V: np.allclose(V.to_numpy(), (G.to_numpy(float) * (Y - P0)[:, None]).T @ T.astype(bool).to_numpy(float) / N))
    ok(multiaccuracy_violations, Y, P0, check=lambda V: V.shape == (1, 1) and np.isclose(V.iloc[0, 0], np.mean(Y - P0)), case='multiaccuracy defaults')
    err(calibration_violation, Y, P0, n_bins=0, arg='n_bins', case='calibration_violation n_bins=0')
    err(calibration_violation, Y, P0, n_bins=2.5, arg='n_bins', case='calibration_violation n_bins=2.5')
    err(calibration_violation, Y, P0, n_bins=10**9, arg='n_bins', case='calibration_violation huge n_bins')
    ok(calibration_violation, Y, P0, n_bins=1, check=lambda v: np.isclose(v, abs(np.mean(Y - P0))), case='calibration_violation one bin')


# ---------------------------------------------------------------- OmniPredictor
@pytest.mark.parametrize('kw, arg', [(dict(tolerance=0), 'tolerance'), (dict(tolerance=-0.1), 'tolerance'), (dict(tolerance=1.5), 'tolerance'), (dict(eps=np.nan), 'eps'),
                                     (dict(tolerance='0.1'), 'tolerance'), (dict(n_bins=1), 'n_bins'), (dict(n_bins=2.5), 'n_bins'), (dict(n_bins=True), 'n_bins'),
                                     (dict(n_bins=10**9), 'n_bins'), (dict(n_bins=None, n_bins_candidates=()), 'n_bins_candidates'),
                                     (dict(n_bins=None, n_bins_candidates=(1, 10)), 'n_bins_candidates'),
                                     (dict(n_bins=None, n_bins_candidates=10), 'n_bins_candidates'),
                                     (dict(n_bins=None, n_bins_candidates='10'), 'n_bins_candidates'), (dict(n_bins=None, folds=1), 'folds'),
                                     (dict(n_bins=None, folds=2.0), 'folds'), (dict(n_bins=None, folds=N + 1), 'folds'),
                                     (dict(calibration='isotonic'), 'calibration'), (dict(max_rounds=0), 'max_rounds'),
                                     (dict(max_rounds=1.5), 'max_rounds'), (dict(max_steps=0), 'max_steps'), (dict(seed=-1), 'seed'),
                                     (dict(seed='0'), 'seed'), (dict(seed=1.5), 'seed'), (dict(show_progress='yes'), 'show_progress'),
                                     (dict(show_progress=1), 'show_progress'), (dict(n_bins=None, n_bins_candidates=(10, 2.5)), 'n_bins_candidates'),
                                     (dict(n_bins=None, n_bins_candidates=(10, True)), 'n_bins_candidates'),
                                     (dict(n_bins=None, n_bins_candidates=(10, 10**6)), 'n_bins_candidates')])
def test_omnipredictor_settings(kw, arg):
    err(fit(**kw), P0, Y, groups=G, tests=T, arg=arg, case=f'OmniPredictor({kw})'[:60])


def test_omnipredictor_data():
    err(fit(), with_nan(P0), Y, groups=G, tests=T, arg='X', case='fit X NaN')
    err(fit(), P0 + 0.5, Y, groups=G, tests=T, arg='X', case='fit X > 1')
    err(fit(), [], [], groups=None, arg='X', case='fit empty')
    err(fit(), P0, Y[:-1], groups=G, tests=T, arg='y', case='fit length mismatch')
    err(fit(), P0, np.where(Y == 1, 'yes', 'no'), groups=G, tests=T, arg='y', case='fit string labels')
    err(fit(), P0, pd.Series(Y).astype('category'), groups=G, tests=T, arg='y', case='fit categorical labels')
    err(fit(), np.column_stack([P0, P0]), Y, groups=G, tests=T, arg='X', case='fit X two columns')
    err(fit(), P0, Y, groups=G.assign(nobody=False), tests=T, arg='groups', case='fit empty group')
    err(fit(), P0, Y, groups=G.iloc[:-1], tests=T, arg='groups', case='fit groups length')
    err(fit(), P0, Y, groups='all', tests=T, arg='groups', case='fit groups=str')
    err(fit(), P0, Y, groups=G, tests=T.assign(x=with_nan(T['x'])), arg='tests', case='fit tests NaN')
    err(fit(), P0, Y, groups=G, tests=np.full((N, 1), 3.0), arg='tests', case='fit tests out of range')
    err(fit(), P0, Y, groups=G, tests=T.astype(object).assign(x='x'), arg='tests', case='fit tests object text')
    ok(fit(), P0[:, None], Y, groups=G, tests=T, check=lambda e: np.allclose(e.predict(P0, groups=G, tests=T), P1), case='fit X one column')
    ok(fit(), pd.DataFrame({'p': P0}), Y, groups=G, tests=T, check=lambda e: np.allclose(e.predict(P0, groups=G, tests=T), P1), case='fit X DataFrame')
    ok(fit(), P0, Y.astype(bool), groups=G, tests=T, check=lambda e: np.array_equal(e.predict(P0, groups=G, tests=T), P1), case='fit bool labels')
    # a single class: the residuals y - p are all -p, so the learner drives the probabilities of every group down
    ok(fit(tolerance=0.01, max_rounds=50, max_steps=2000), P0, np.zeros(N, int), groups=G, tests=T, case='fit single class',
       check=lambda e: e.report_.converged and abs(np.mean(e.predict(P0, groups=G, tests=T))) <= 0.01)
    # a single group and no test functions: the constant shift that makes the mean right
    ok(fit(tolerance=1e-3, max_rounds=50), P0, Y, case='fit single group, no tests',
       check=lambda e: e.groups_ == ['all'] and e.tests_ == ['one'] and abs(np.mean(Y - e.predict(P0))) <= 1e-3)
    one = G.assign(one=np.arange(N) == 5)
    ok(fit(), P0, Y, groups=one, tests=T, case='fit one-row group', check=lambda e: finite(e.predict(P0, groups=one, tests=T)))
    ok(fit(n_bins=None, n_bins_candidates=(2, 4), folds=2, show_progress=False), P0, Y, groups=G, tests=T, case='fit CV tiny',
       check=lambda e: e.n_bins_ in (2, 4) and list(e.report_.cv_table['n_bins']) == [2, 4] and finite(e.report_.cv_table))
    # groups as a 0/1 array: named g0, g1, g2 and matched by those names
    ok(fit(), P0, Y, groups=G.to_numpy(int), tests=T, case='fit groups 0/1 array',
       check=lambda e: e.groups_ == ['g0', 'g1', 'g2'] and np.array_equal(e.predict(P0, groups=G.to_numpy(int), tests=T), P1))


def test_omnipredictor_predict():
    from sklearn.exceptions import NotFittedError
    err(OmniPredictor().predict, P0, groups=G, tests=T, arg='fit', exc=NotFittedError, case='predict unfitted')
    err(OM.predict, with_inf(P0), groups=G, tests=T, arg='X', case='predict X inf')
    err(OM.predict, P0[:-1], groups=G, tests=T, arg='groups', case='predict groups length')
    err(OM.predict, P0, groups=G, tests=T.iloc[:-1], arg='tests', case='predict tests length')
    err(OM.predict, P0, groups=None, tests=T, arg='groups', case='predict groups missing')
    err(OM.predict, P0, groups=G, tests=None, arg='tests', case='predict tests missing')
    ok(OM.predict, P0[:1], groups=G[:1], tests=T[:1], check=same(P1[:1]), case='predict one row')
    ok(OM.predict, P0[40:], groups=G[40:], tests=T[40:], check=same(P1[40:]), case='predict rows with an empty group')


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(['all', 'a', 'b']), st.permutations(['one', 'x']))
def test_predict_any_column_order(gcols, tcols):
    ok(OM.predict, P0, groups=G[list(gcols)], tests=T[list(tcols)], check=same(P1), case='predict permuted columns')


# ---------------------------------------------------------------- competitors and comparison
def test_tuning_and_comparison():
    err(tune_selective, with_nan(P0), Y, L, arg='score', case='tune_selective NaN')
    err(tune_selective, P0, Y[:-1], L, arg='y', case='tune_selective length')
    err(tune_selective, P0, Y, 0.3, arg='loss', case='tune_selective loss=float')
    ok(tune_selective, np.linspace(-5, 5, N), Y, L, check=lambda t: t[0] <= t[1], case='tune_selective unbounded score')
    err(threshold_action, P0, 0.6, 0.4, arg='low', case='threshold_action low > high')
    err(threshold_action, P0, 'a', 0.4, arg='low', case='threshold_action low=str')
    err(threshold_action, P0, 0.2, np.nan, arg='high', case='threshold_action high NaN')
    ok(threshold_action, P0, -np.inf, np.inf, check=lambda a: (a == ABSTAIN).all(), case='threshold_action -inf, inf')
    kw = dict(score=P0, y_fit=Y, score_fit=P0)
    err(compare_omniprediction, Y, P1, G, **{**kw, 'score': P0[:-1]}, arg='score', case='compare score length')
    err(compare_omniprediction, Y, P1, G, **{**kw, 'score_fit': P0[:-1]}, arg='score_fit', case='compare score_fit length')
    err(compare_omniprediction, Y, P1, G, **{**kw, 'y_fit': Y + 2}, arg='y_fit', case='compare y_fit not 0/1')
    err(compare_omniprediction, Y, P1, G, **kw, losses=[], arg='losses', case='compare losses=[]')
    err(compare_omniprediction, Y, P1, G, **kw, losses=[L, (1, 1, 0)], arg='losses', case='compare losses tuple')
    err(compare_omniprediction, Y, P1, G, **kw, per_group_tuning=True, arg='groups_fit', case='compare per-group without groups_fit')
    err(compare_omniprediction, Y, P1, G, **kw, per_group_tuning='yes', arg='per_group_tuning', case='compare per_group_tuning=str')
    err(compare_omniprediction, Y, P1, G, **kw, per_group_tuning=1, arg='per_group_tuning', case='compare per_group_tuning=1')
    err(compare_omniprediction, Y, P1, G, **kw, groups_fit=G, arg='groups_fit', case='compare groups_fit without per_group_tuning')
    err(compare_omniprediction, Y, P1, G, **kw, groups_fit=G, per_group_tuning=False, arg='groups_fit', case='compare groups_fit, per_group_tuning=False')
    err(compare_omniprediction, Y, P1, G, **kw, groups_fit=G.drop(columns='a'), per_group_tuning=True, arg='groups_fit', case='compare groups_fit missing a')
    ref = compare_omniprediction(Y, P1, G, **kw, groups_fit=G, per_group_tuning=True)
    ok(compare_omniprediction, Y, P1, G, **kw, groups_fit=G[['b', 'a', 'all']], per_group_tuning=True, case='compare groups_fit reordered',
       check=lambda r: r.by_group.equals(ref.by_group))
    ok(compare_omniprediction, Y, P1, G, **kw, losses=L, case='compare one Loss', check=lambda r: r.n_losses == 1 and finite(r.by_group))
    # one class with a perfect competitor: ratios are 1 where both losses are zero, never NaN
    y0 = np.zeros(N, int)
    ok(compare_omniprediction, y0, np.zeros(N), G, score=P0, y_fit=y0, score_fit=P0, case='compare one class',
       check=lambda r: (r.by_group['ratio'] == 1).all() and r.ratio_global == 1)
    err(group_ratio_sd, Y, P1, G, **kw, n_boot=1, arg='n_boot', case='group_ratio_sd n_boot=1')
    err(group_ratio_sd, Y, P1, G, **kw, seed=-3, arg='seed', case='group_ratio_sd seed=-3')
    ok(group_ratio_sd, Y, P1, G, **kw, n_boot=20, case='group_ratio_sd small', check=lambda s: finite(s) and list(s.index) == list(G.columns))


# ---------------------------------------------------------------- GroupConformal and coverage
@pytest.mark.parametrize('kw, arg', [(dict(alpha=0), 'alpha'), (dict(alpha=1), 'alpha'), (dict(alpha=-0.1), 'alpha'), (dict(alpha=np.nan), 'alpha'),
                                     (dict(alpha='0.1'), 'alpha'), (dict(method='mondrian'), 'method'), (dict(method=None), 'method'),
                                     (dict(allow_empty='no'), 'allow_empty'), (dict(seed=-1), 'seed'), (dict(show_progress=2), 'show_progress'),
                                     (dict(allow_empty=1), 'allow_empty'), (dict(allow_empty=None), 'allow_empty'), (dict(show_progress=0), 'show_progress')])
def test_conformal_settings(kw, arg):
    err(conformal(**kw), P0, Y, groups=G, arg=arg, case=f'GroupConformal({kw})')


@settings(max_examples=10, deadline=None)
@given(st.one_of(st.floats(max_value=0), st.floats(min_value=1)))
def test_conformal_alpha_out_of_range(alpha):
    err(conformal(alpha=alpha), P0, Y, groups=G, arg='alpha', case='GroupConformal alpha out of (0, 1)')


def test_conformal_data():
    err(conformal(), with_nan(P0), Y, groups=G, arg='X', case='conformal X NaN')
    err(conformal(), P0, Y[:-1], groups=G, arg='y', case='conformal length')
    err(conformal(), P0, Y, groups=G.assign(nobody=False), arg='groups', case='conformal empty group')
    err(GC.predict, P0, groups=G.drop(columns='b'), arg='groups', case='conformal predict missing group')
    err(GC.predict, P0, groups=G.assign(all=False), arg='groups', case='conformal predict rows in no group')
    err(GC.predict, P0 * 2, groups=G, arg='X', case='conformal predict X > 1')
    ok(GC.predict, P0, groups=G[['b', 'a', 'all']], check=lambda s: s.equals(SETS), case='conformal predict reordered groups')
    err(GC.predict, np.c_[1 - P0, P0], groups=G, arg='X', case='conformal predict X two columns')
    # a fitted group that holds no test row is allowed: each row's threshold is the max over the groups it is in
    qg = dict(zip(GC.groups_, GC.group_quantiles_))
    ok(GC.predict, P0, groups=G.assign(a=False), case='conformal predict empty test group',
       check=lambda s: np.array_equal(s['q'], np.where(G['b'], max(qg['all'], qg['b']), qg['all'])))
    # a single class: in every group the in-sample coverage of label 1 is within (number of groups) / n_g of 1 - alpha
    # (the quantile regression's optimality conditions; 'max' and 'conditional' are more conservative)
    for method in ('max', 'qr', 'conditional'):
        ok(lambda: GroupConformal(method=method).fit(P0, np.ones(N, int), groups=G).predict(P0, groups=G), case=f'conformal {method} one class',
           check=lambda s: all(s['has1'][G[c]].mean() >= 0.9 - 3 / G[c].sum() for c in G))
    # one-row and single groups: too few rows for a finite threshold, so those rows always get {0, 1} with 'max'
    one = G.assign(one=np.arange(N) == 3)
    ok(lambda: GroupConformal().fit(P0, Y, groups=one).predict(P0, groups=one), case='conformal one-row group',
       check=lambda s: s.loc[3, 'action'] == ABSTAIN)
    ok(lambda: GroupConformal().fit(P0, Y).predict(P0), case='conformal single group', check=lambda s: (s['has0'] | s['has1']).mean() > 0.5)


def test_coverage_report():
    err(coverage_report, Y, SETS.drop(columns='has1'), G, arg='y_pred', case='coverage missing has1')
    err(coverage_report, Y, SETS.assign(has0=0.5), G, arg='y_pred', case='coverage has0=0.5')
    err(coverage_report, Y, SETS.iloc[:-1], G, arg='y_pred', case='coverage length')
    err(coverage_report, Y, np.ones((N, 3), bool), G, arg='y_pred', case='coverage 3 columns')
    err(coverage_report, Y, SETS, G, alpha=1.2, arg='alpha', case='coverage alpha=1.2')
    err(coverage_report, Y, SETS, G, alpha='0.1', arg='alpha', case='coverage alpha text')
    err(coverage_report, Y, SETS, G.assign(nobody=False), arg='groups', case='coverage empty group')
    ok(coverage_report, Y, SETS, G[['b', 'a', 'all']], case='coverage reordered groups',
       check=lambda r: list(r.table['group']) == ['b', 'a', 'all'] and r.coverage == np.mean(np.where(Y == 1, SETS['has1'], SETS['has0'])))


# ---------------------------------------------------------------- helpers, plots and explorers
def test_helpers():
    err(synthetic_selective, 5, arg='n_rows', case='synthetic_selective n_rows=5')
    err(synthetic_selective, 100.5, arg='n_rows', case='synthetic_selective n_rows=100.5')
    err(synthetic_selective, 100, seed=-1, arg='seed', case='synthetic_selective seed=-1')
    err(synthetic_groups, pd.DataFrame({'x': [1]}), arg='df', case='synthetic_groups missing columns')
    err(synthetic_groups, pd.DataFrame({'female': [0.5], 'young': [1]}), arg="df['female']", case='synthetic_groups not boolean')
    err(quantile_fit, np.ones((5, 1)), with_nan(np.ones(5)), 0.5, arg='s', case='quantile_fit NaN')
    err(quantile_fit, np.ones((5, 1)), np.ones(4), 0.5, arg='s', case='quantile_fit length')
    err(quantile_fit, np.ones(5), np.ones(5), 0.5, arg='features', case='quantile_fit 1-D features')
    for tau in (0.0, 1.0): err(quantile_fit, np.ones((5, 1)), np.arange(5.0), tau, arg='quantile', case=f'quantile_fit quantile={tau}')
    ok(quantile_fit, np.ones((5, 1)), np.arange(5.0), 0.5, check=lambda th: np.isclose(th[0], 2.0), case='quantile_fit median')
    X = pd.DataFrame({'age': [30, 40], 'education_num': [9, 13], 'hours_per_week': [40, 50]})
    err(adult_tests, X.drop(columns='age'), [0.2, 0.4], arg='X', case='adult_tests missing age')
    err(adult_tests, X, [0.2], arg='score', case='adult_tests length')
    err(adult_tests, X, [0.2, 1.4], arg='score', case='adult_tests score > 1')
    err(adult_tests, X.assign(age=['30', '40']), [0.2, 0.4], arg='X', case='adult_tests text age')
    ok(adult_tests, X, [0.2, 0.4], check=lambda t: np.allclose(t['age'], [-1 / 3, 0]) and np.allclose(t['score'], [-0.6, -0.2]), case='adult_tests values')
    err(plot_omni_ratios, np.ones((3, 1)), arg='by_group', case='plot_omni_ratios array')
    err(plot_omni_ratios, pd.DataFrame({'r': [1.0]}), arg='by_group', case='plot_omni_ratios missing ratio')


def test_explorers():
    err(explore_losses, Y, P1, G, fp=-1, arg='fp', case='explore_losses fp=-1')
    err(explore_losses, Y, P1, G, abstain=np.nan, arg='abstain', case='explore_losses abstain NaN')
    ok(lambda: explore_losses(Y, P1, G, fn=3), case='explore_losses fn=3',
       check=lambda out: out[0].abstain_rate == np.mean(bayes_action(P1, Loss(1, 3, 0.3)) == ABSTAIN))
    err(omni_explorer, Y, P1[:-1], G, arg='y_prob', case='omni_explorer length')
    err(omni_explorer, Y, P1, G.assign(nobody=False), arg='groups', case='omni_explorer empty group')
    err(coverage_explorer, Y, P0, G, Y, P0, G.drop(columns='a'), arg='groups_test', case='coverage_explorer missing group')
    err(coverage_explorer, Y, P0 * 3, G, Y, P0, G, arg='p_cal', case='coverage_explorer p_cal > 1')
    err(coverage_explorer, Y, P0, G, Y[:-1], P0, G, arg='y_test', case='coverage_explorer length')
    ok(coverage_explorer, Y, P0, G, Y, P0, G[['b', 'all', 'a']], case='coverage_explorer reordered groups',
       check=lambda ex: ex.error is None and ex.report.coverage == coverage_report(Y, GroupConformal(alpha=0.1).fit(P0, Y, groups=G).predict(P0, groups=G)).coverage)
