"""Bad-input sweep of trustml_nb.fedfact and trustml_nb.fedfact_flower (issue 12): every public entry point with NaN and
inf, empty input, wrong lengths and dtypes (strings, object, bool, categorical), duplicate column names, one-row and
single groups, a single class, out-of-range budgets, rounds, steps, learning rates and seeds, and unknown option strings.
Each call ends in a clear trustml_nb error naming the argument, or in a result checked against something exact.
Tiny data and one-round fits keep the whole sweep to a few seconds."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb.core import NumericalWarning, quiet
from trustml_nb.fedfact import (FedAvg, FedFactIn, FedFactPost, FedReport, FedRunner, InProcessRunner, adult_fed_data, calibrate, confusion_matrices,
                                cost_matrix, direct_disparities, dirichlet_partition, disparities, dp_noise_floor, dual_scale,
                                encode_fl, explore_fedfact, fairlearn_baseline, fairness_matrices, fit_calibration, fl_counts,
                                hedge_update, heterogeneous_partition, make_fed_data, make_model, get_weights, metrics_from_counts,
                                plot_client_gaps, positivity_shift, prediction_counts, project_l1_ball, rprop_step,
                                run_inprocess, set_weights, smooth_max, synthetic_conflict, tradeoff_curve)

M = 'fedfact'
def err(fn, *a, arg, **k): return expect_error(fn, *a, arg=arg, module=M, **k)
def ok(fn, *a, check, **k): return expect_ok(fn, *a, check=check, module=M, **k)

FD = synthetic_conflict(n=300, sizes=(0.6, 0.4), group_share=(0.6, 0.4), bias=(1.0, -1.0), seed=0)
FD3 = synthetic_conflict(n=600, n_classes=3, sizes=(0.6, 0.4), group_share=(0.6, 0.4), bias=(1.0, -1.0), seed=0)
Q = dict(show_progress=False)
AVG = dict(n_rounds=1, local_steps=1, **Q)
Y, A, K = np.array([0, 1, 1, 0, 1, 0, 0, 1]), np.array([0, 0, 1, 1, 0, 1, 0, 1]), np.array([0, 0, 0, 0, 1, 1, 1, 1])
CNT = fl_counts(Y, A, K)                            # (2 clients, 2 groups, 2 classes)
P_AK = CNT.sum(2) / CNT.sum()
DG = fairness_matrices(CNT, 'dp', 'global')


@pytest.fixture(scope='module')
def fitted():
    with quiet(NumericalWarning):                   # one round cannot meet the budgets; that is reported, not swept here
        avg = FedAvg(**AVG).fit(FD)
        return dict(avg=avg, post=FedFactPost(n_rounds=1, local_steps=1, base_model=avg, **Q).fit(FD),
                    inn=FedFactIn(n_rounds=1, local_steps=1, base_model=avg, **Q).fit(FD))


# ---- encodings, counts and the fairness matrices -----------------------------------------------------------------

@pytest.mark.parametrize('args,arg', [
    ((with_nan(Y), A, K), 'y contains'), ((Y, with_inf(A), K), 'a contains'), (([], [], []), 'y must have at least 1'),
    ((Y, A[:-1], K), 'a has 7'), ((Y.astype(str), A, K), 'y must be numeric'), ((Y, A + 0.5, K), 'a must hold integer codes'),
    ((np.ones(8), A, K), 'y has only one class'), ((Y, np.zeros(8), K), 'a has only one group'),
    ((pd.Series(pd.Categorical(Y)), A, K), 'y must be numeric'), ((Y, A, K - 1), 'k must hold integer codes >= 0'),
    ((Y, np.array([0, 0, 0, 0, 0, 1, 0, 1]), K), 'client 0 has no rows of group 1')])
def test_encode_fl(args, arg):
    err(encode_fl, *args, arg=arg)


def test_encode_fl_declared_sizes_and_bools():
    err(encode_fl, Y, A, K, n_classes=0, arg='n_classes')
    err(encode_fl, Y, A, K, n_groups=1.5, arg='n_groups')
    ok(fl_counts, Y.astype(bool), A, K, check=lambda c: c.shape == (2, 2, 2) and c.sum() == 8 and np.array_equal(c, CNT))
    ok(fl_counts, Y, A, K, n_classes=3, check=lambda c: c.shape == (2, 2, 3) and c[..., 2].sum() == 0)


@pytest.mark.parametrize('counts,kw,arg', [
    (CNT, dict(notion='parity'), 'notion'), (CNT, dict(level='both'), 'level'), (-CNT, {}, 'counts must hold counts >= 0'),
    (with_nan(CNT), {}, 'counts contains'), (CNT.sum(0), {}, 'counts must have 3'), (np.r_[CNT, np.zeros((1, 2, 2))], {}, 'client(s) [2] have no rows'),
    (CNT[:, :1], {}, 'counts has 1 group'), (CNT[:, :, :1], {}, 'counts has 1 class'), ([[['a']]], {}, 'counts must be numeric')])
def test_fairness_matrices(counts, kw, arg):
    err(fairness_matrices, counts, **kw, arg=arg)


def test_fairness_matrices_one_row_cells_are_exact():
    "Every (client, group) cell holds one row: D still reproduces the directly computed rates."
    y, a, k, p = np.array([0, 1, 1, 0]), np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]), np.array([1, 1, 0, 1])
    D = fairness_matrices(fl_counts(y, a, k), 'dp', 'local')
    ok(disparities, D, confusion_matrices(y, p, a, k, (2, 2, 2)), 'local',
       check=lambda d: np.allclose(d, direct_disparities(y, p, a, k, (2, 2, 2), 'dp', 'local')))


@pytest.mark.parametrize('args,arg', [
    ((Y, Y, A, K, (2, 2)), 'shape'), ((Y, Y, A + 2, K, (2, 2, 2)), 'a must hold codes 0..1'),
    ((Y, np.full((8, 2), 0.7), A, K, (2, 2, 2)), 'y_pred'), ((Y, Y[:-1], A, K, (2, 2, 2)), 'y_pred has 7'),
    ((Y, Y, A, K, (2, 2, 2.5)), 'shape[2]'), ((Y * 0.5, Y, A, K, (2, 2, 2)), 'y_true must hold integer codes')])
def test_confusion_matrices(args, arg):
    err(confusion_matrices, *args, arg=arg)


def test_disparities_and_direct():
    C = confusion_matrices(Y, Y, A, K, (2, 2, 2))
    err(disparities, DG, C[:1], arg='C must have shape')
    err(disparities, DG, C, level='pooled', arg='level')
    err(direct_disparities, np.zeros(8, int) + (A == 1) * (K == 1), Y, A, K, (2, 2, 2), 'eop', 'local', arg='has no rows')
    err(direct_disparities, Y, Y, A, K, (2, 2, 2), 'dpp', arg='notion')
    # client 1's groups each hold one label only: its overall y=0 cell has rows, its (a=1, y=0) cell has none, and the error names it
    err(direct_disparities, np.array([0, 1, 0, 1, 0, 1, 0, 1]), Y, A, K, (2, 2, 2), 'eop', 'local', arg='the cell (k=1, a=1, y=0) has no rows')
    ok(direct_disparities, Y, Y, A, K, (2, 2, 2), check=lambda d: np.allclose(d, disparities(DG, C)))


@pytest.mark.parametrize('args,kw,arg', [
    ((P_AK * 0,), dict(Dg=DG, lam=np.zeros((2, 4))), 'p_ak'), ((P_AK,), dict(Dg=DG, lam=np.zeros((2, 3))), 'lam must have shape'),
    ((P_AK,), dict(Dg=DG), 'lam'), ((P_AK,), dict(Dg=DG, lam=np.zeros((2, 4)), mu_sign=0.5), 'mu_sign'),
    ((P_AK,), dict(Dg=DG, lam=with_nan(np.zeros((2, 4)))), 'lam contains'), ((P_AK,), {}, 'Dg or Dl'),
    ((P_AK,), dict(Dg=DG[0], lam=np.zeros((2, 4))), 'Dg must have 5 dimension'), ((P_AK,), dict(Dg=DG[:, :1], lam=np.zeros((2, 4))), 'Dg must have shape'),
    ((P_AK,), dict(Dl=DG[0], mu=np.zeros((2, 2, 4))), 'Dl must have 5 dimension')])
def test_cost_matrix(args, kw, arg):
    err(cost_matrix, *args, **kw, arg=arg)


def test_shift_projection_scale_smoothing():
    M = cost_matrix(P_AK, DG, np.full((2, 4), 0.1))
    err(positivity_shift, M, per='cell', arg='per'); err(positivity_shift, M, eps=-1, arg='eps')
    err(project_l1_ball, [1.0, 2.0], 0, arg='radius'); err(project_l1_ball, with_nan([1.0, 2.0]), arg='v contains')
    err(dual_scale, DG, P_AK, 'pooled', arg='level'); err(dual_scale, DG, P_AK * 0, arg='p_ak')
    err(smooth_max, np.zeros((3, 2)), 0.0, arg='beta'); err(smooth_max, np.zeros(3), arg='z must have 2')
    err(rprop_step, np.zeros(2), np.ones(2), np.ones(2), np.ones(2), np.ones(2), dec=1.5, arg='dec')
    err(rprop_step, np.zeros(2), np.ones(3), np.ones(2), np.ones(2), np.ones(2), arg='grad must have shape')
    err(hedge_update, 0.0, 0.1, 0.2, arg='w must be'); err(hedge_update, 1.5, 0.1, 0.2, arg='w must be')
    err(hedge_update, 0.5, 0.1, 0.2, eta_w=np.nan, arg='eta_w')
    ok(positivity_shift, M, per='row', check=lambda S: S.min() >= 1e-4 - 1e-12 and np.allclose(S - M, (S - M)[..., :1], rtol=0, atol=1e-12)
       and np.allclose((S - M)[..., 0], np.maximum(0.0, 1e-4 - M.min(axis=3)), rtol=0, atol=1e-12))   # one constant per row, the smallest that works


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=8), radius=st.floats(0.01, 100))
def test_projection_is_feasible_and_idempotent(v, radius):
    ok(project_l1_ball, v, radius, check=lambda x: x.min() >= 0 and x.sum() <= radius * (1 + 1e-9) + 1e-9
       and np.allclose(project_l1_ball(x, radius), x, atol=1e-9))


# ---- partitions and federations ------------------------------------------------------------------------------------

A100 = np.repeat([0, 1], 50)

@pytest.mark.parametrize('args,kw,arg', [
    ((np.r_[np.zeros(50), np.full(50, 0.7)],), {}, 'fractional'), ((A100,), dict(alpha=0), 'alpha'), ((A100,), dict(alpha=np.nan), 'alpha'),
    ((A100,), dict(n_clients=0), 'n_clients'), ((A100,), dict(scheme='dir2'), 'scheme'), ((np.zeros(100),), {}, 'a must contain at least 2 groups'),
    ((A100,), dict(min_size=-1), 'min_size'), ((np.r_[A100[:-1].astype(object), None],), {}, 'a contains'),
    ((A100,), dict(max_tries=0), 'max_tries'), ((A100,), dict(seed=-1), 'seed'), (('ab',), {}, 'a must be array-like')])
def test_dirichlet_partition(args, kw, arg):
    err(dirichlet_partition, *args, **kw, arg=arg)


def test_dirichlet_partition_labels_and_categoricals():
    want = dirichlet_partition(A100, 2, 1.0, min_size=5, seed=1)
    ok(dirichlet_partition, np.where(A100 == 1, 'm', 'f'), 2, 1.0, min_size=5, seed=1, check=lambda k: np.array_equal(k, want))
    ok(dirichlet_partition, pd.Series(pd.Categorical(np.where(A100 == 1, 'm', 'f'))), 2, 1.0, min_size=5, seed=1,
       check=lambda k: np.array_equal(k, want))


def test_heterogeneous_partition():
    y = np.tile([0, 1], 50)
    err(heterogeneous_partition, A100, y + 1, arg='y must contain only 0 and 1')
    err(heterogeneous_partition, np.r_[A100[:-1], 2], y, arg='a must be binary (exactly 2 groups)')
    err(heterogeneous_partition, np.r_[np.zeros(50), np.full(50, 0.7)], y, arg='a must hold group labels or integer codes, got fractional')
    err(heterogeneous_partition, A100, y, low=0.0, arg='low'); err(heterogeneous_partition, A100, y, low=0.5, high=0.3, arg='high')
    err(heterogeneous_partition, A100, y[:-1], arg='y has 99'); err(heterogeneous_partition, A100, y, n_clients=0, arg='n_clients')
    ok(heterogeneous_partition, A100.astype(bool), y, 3, check=lambda k: len(k) == 100 and set(k) <= {0, 1, 2})
    want = heterogeneous_partition(A100, y, 3, seed=1)      # labels (as dirichlet_partition takes them) split exactly like their codes
    ok(heterogeneous_partition, np.where(A100 == 1, 'm', 'f'), y, 3, seed=1, check=lambda k: np.array_equal(k, want))
    ok(heterogeneous_partition, pd.Series(pd.Categorical(np.where(A100 == 1, 'm', 'f'))), y, 3, seed=1, check=lambda k: np.array_equal(k, want))
    ok(heterogeneous_partition, A100 + 1, y, 3, seed=1, check=lambda k: np.array_equal(k, want))


X8 = np.arange(16.0).reshape(8, 2)

@pytest.mark.parametrize('args,kw,arg', [
    ((with_nan(X8), Y, A, K, X8, Y, A, K), {}, 'X contains'), ((X8, Y, A, K, X8[:, :1], Y, A, K), {}, 'X_test must have shape'),
    ((X8, Y, A, K, X8, Y, A, K), dict(group_names=['f']), 'group_names must have 2'), ((X8, Y.astype(str), A, K, X8, Y, A, K), {}, 'y must be numeric'),
    ((pd.DataFrame(X8, columns=['v', 'v']), Y, A, K, X8, Y, A, K), {}, 'X has duplicate column'),
    ((X8, Y, A, K, X8, Y + 1, A, K), {}, 'test y has code 2'), ((X8[:7], Y, A, K, X8, Y, A, K), {}, 'X has 7'),
    ((X8, Y, A, K, X8, Y, A, K), dict(class_names='ab'), 'class_names must be a list')])
def test_make_fed_data(args, kw, arg):
    err(make_fed_data, *args, **kw, arg=arg)


def test_synthetic_and_client():
    err(synthetic_conflict, n=5, arg='n must'); err(synthetic_conflict, group_share=(1.0, 0.3, 0.5), arg='group_share')
    err(synthetic_conflict, sizes=(0.5, 0.5), arg='group_share has 3'); err(synthetic_conflict, test_size=1.0, arg='test_size')
    err(FD.client, 5, arg='c must'); err(FD.client, 0, 'val', arg='split')
    ok(FD.client, 1, 'test', check=lambda d: len(d['y']) == int((FD.k_test == 1).sum()) and set(d) == {'X', 'y', 'a'})


# ---- the estimators ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('kw,arg', [
    (dict(lr=0.0), 'lr'), (dict(lr=np.nan), 'lr'), (dict(lr=-1e-3), 'lr'), (dict(batch_size=0), 'batch_size'), (dict(n_rounds=0), 'n_rounds'),
    (dict(n_rounds=1.5), 'n_rounds'), (dict(local_steps=0), 'local_steps'), (dict(seed=-1), 'seed'), (dict(runner='flower'), 'runner'),
    (dict(notion='parity'), 'notion'), (dict(hidden=-1), 'hidden'), (dict(weight_decay=-1.0), 'weight_decay'),
    (dict(show_progress='yes'), 'show_progress'), (dict(lr=1e300, local_steps=2), 'diverged')])
def test_fedavg_fit(kw, arg):
    err(FedAvg(**{**AVG, **kw}).fit, FD, arg=arg)


def test_fedavg_old_init_seed():
    "The old keyword init_seed (now seed) is still checked, under its own name, after a FutureWarning naming seed."
    with pytest.warns(FutureWarning, match='use seed=0.5'): err(FedAvg(**AVG, init_seed=0.5).fit, FD, arg='init_seed')


@pytest.mark.parametrize('make,kw,arg', [
    (FedAvg, dict(show_progress=1), 'show_progress must be True or False or None'), (FedAvg, dict(show_progress=0), 'show_progress'),
    (FedFactPost, dict(show_progress=1), 'show_progress'), (FedFactIn, dict(show_progress=0), 'show_progress'),
    (FedFactPost, dict(average=1), 'average must be True or False'), (FedFactPost, dict(average=0), 'average'),
    (FedFactPost, dict(calibrate=0), 'calibrate must be True or False'), (FedFactPost, dict(calibrate=1.0), 'calibrate')])
def test_flags_are_true_or_false(make, kw, arg):
    "1 and 0 are not True and False (check_option accepted them, since 1 == True)."
    err(make(**({**AVG, **kw} if make is FedAvg else {**Q, **kw})).fit, FD, arg=arg, exc=TypeError)
    err(run_inprocess, [], [], show_progress=1, arg='show_progress', exc=TypeError)


def test_fedavg_fit_and_predict(fitted):
    err(FedAvg(**AVG).fit, {'X': X8}, arg='fd must be a FedData')
    avg = fitted['avg']
    err(avg.predict, FD.X_test[:, :2], arg='X must have shape'); err(avg.predict, with_nan(FD.X_test), arg='X contains')
    err(FedAvg().predict, FD.X_test, arg='not fitted', exc=NotFittedError)
    ok(avg.predict_proba, FD.X_test[:1], check=lambda P: P.shape == (1, 2) and np.allclose(P.sum(1), 1))
    ok(avg.predict, pd.DataFrame(FD.X_test), check=lambda p: np.array_equal(p, avg.predict(FD.X_test)))


@pytest.mark.parametrize('kw,arg', [
    (dict(global_budget=-1.0), 'global_budget'), (dict(global_budget=np.nan), 'global_budget'), (dict(local_budget=np.inf), 'local_budget'), (dict(local_budget='0.01'), 'local_budget'), (dict(beta=0.0), 'beta'),
    (dict(polish_window='wide'), 'polish_window'), (dict(base_model='fedavg'), 'base_model'), (dict(tol=-1.0), 'tol'), (dict(average='yes'), 'average'),
    (dict(n_rounds=0), 'n_rounds'), (dict(calibrate=None), 'calibrate'), (dict(max_step=0.0), 'max_step'), (dict(jitter=-1.0), 'jitter'),
    (dict(base_model=FedAvg(lr=0.0)), 'base_model: lr'), (dict(base_model=FedAvg(seed=-2)), 'base_model: seed'), (dict(bound=0.0), 'bound')])
def test_fedfactpost_fit(kw, arg):
    err(FedFactPost(**{**Q, **kw}).fit, FD, arg=arg)


def test_base_model_from_another_federation(fitted):
    fd5 = make_fed_data(np.c_[FD.X, FD.X[:, :1]], FD.y, FD.a, FD.k, np.c_[FD.X_test, FD.X_test[:, :1]], FD.y_test, FD.a_test, FD.k_test)
    err(FedFactPost(base_model=fitted['avg'], **Q).fit, fd5, arg='base_model was fitted on 4 features')
    err(FedFactIn(base_model=fitted['avg'], **Q).fit, FD3, arg='base_model was fitted on 4 features and 2 classes')


class _OtherRunner(FedRunner):
    "A runner of another kind (never run: the mismatch is refused first)."
    label = 'other'


def test_unfitted_base_model_runner():
    "An unfitted base_model is trained with the estimator's runner: a runner of another kind on it is refused, not ignored."
    for est in (FedFactPost, FedFactIn):
        err(est(base_model=FedAvg(runner=_OtherRunner()), **Q).fit, FD, arg='base_model.runner is _OtherRunner()')
        err(est(base_model=FedAvg(runner=_OtherRunner()), runner=InProcessRunner(), **Q).fit, FD, arg='this estimator\'s runner')
    with quiet(NumericalWarning):   # the same kind of runner is fine
        ok(FedFactPost(n_rounds=1, local_steps=1, base_model=FedAvg(runner=InProcessRunner(), **AVG), **Q).fit, FD,
           check=lambda e: e.report_.runner == 'in-process' and e.base_model_.report_.runner == 'in-process')


def test_fedfactpost_predict(fitted):
    est, X, a, k = fitted['post'], FD.X_test, FD.a_test, FD.k_test
    want = est.predict(X, sensitive=a, clients=k)
    err(est.predict, X, clients=k, arg='sensitive is required'); err(est.predict, X, sensitive=a, arg='clients is required')
    err(est.predict, X, sensitive=a, clients=k + 1, arg='clients must hold codes'); err(est.predict, X, sensitive=a, clients=k + 0.5, arg='clients must hold integer')
    err(est.predict, X[:2], sensitive=['0', 'x'], clients=[0, 1], arg='sensitive has group'); err(est.predict, X, sensitive=a[:-1], clients=k, arg='sensitive has')
    err(est.predict, X, sensitive=with_nan(a), clients=k, arg='sensitive contains')
    err(FedFactPost().predict, X, arg='not fitted', exc=NotFittedError)
    ok(est.predict, X, sensitive=np.array(FD.group_names)[a], clients=k, check=lambda p: np.array_equal(p, want))
    ok(est.predict, X, sensitive=pd.Series(pd.Categorical(np.array(FD.group_names)[a])), clients=k, check=lambda p: np.array_equal(p, want))
    ok(est.predict, X[:1], sensitive=a[:1], clients=k[:1], check=lambda p: p.tolist() == want[:1].tolist())   # one row
    ok(est.predict, X, sensitive=a.astype(bool), clients=k.astype(float), check=lambda p: np.array_equal(p, want))


@pytest.mark.parametrize('kw,arg', [
    (dict(lr=0.0), 'lr'), (dict(lr=np.nan), 'lr'), (dict(n_history=0), 'n_history'), (dict(dual_audit='avg'), 'dual_audit'), (dict(eta_w=0.0), 'eta_w'),
    (dict(kappa_eps=0.0), 'kappa_eps'), (dict(batch_size=0), 'batch_size'), (dict(mixture='lp2'), 'mixture'), (dict(seed=2**40), 'seed'),
    (dict(notion=None), 'notion'),
    (dict(dual_audit='mixture', n_history=1), 'needs n_history > 1')])
def test_fedfactin_fit(kw, arg):
    err(FedFactIn(**{**Q, **kw}).fit, FD, arg=arg)


def test_fedfactin_predict_and_reports(fitted):
    est = fitted['inn']
    err(est.predict, FD.X_test, arg='clients is required'); err(est.predict, FD.X_test, clients=np.full(len(FD.X_test), 2), arg='clients must hold codes')
    ok(est.predict, FD.X_test, clients=FD.k_test, check=lambda p: np.array_equal(
        prediction_counts(FD.y_test, p, FD.a_test, FD.k_test, FD.shape), est.report_.test_counts))
    for e in fitted.values():
        ok(lambda: e.report_, check=lambda r: isinstance(r, FedReport) and finite(r.to_frame()) and r.n_test == len(FD.y_test))


# ---- metrics, noise floor, calibration ------------------------------------------------------------------------------

C4 = prediction_counts(Y, Y, A, K, (2, 2, 2))

def test_metrics_and_counts():
    err(metrics_from_counts, with_nan(C4), arg='counts contains'); err(metrics_from_counts, C4, 'parity', arg='notion')
    err(metrics_from_counts, C4[..., :1], arg='counts must have shape (N, G, m, m)'); err(metrics_from_counts, C4[0], arg='counts must have 4')
    err(prediction_counts, Y, Y + 1, A, K, (2, 2, 2), arg='y_pred must hold codes')
    # an (a, y) cell without rows: its rate is undefined, left out and counted, never NaN
    c = C4.copy(); c[0, 0, 1] = 0
    ok(metrics_from_counts, c, 'eop', check=lambda mt: mt['undefined_rates'] >= 1 and finite([v for v in mt.values() if np.ndim(v) == 0]))


def test_noise_floor_and_calibration():
    err(dp_noise_floor, C4, n_sim=0, arg='n_sim'); err(dp_noise_floor, C4, budget=-0.1, arg='budget')
    err(dp_noise_floor, C4, form='both', arg='form')
    err(dp_noise_floor, C4 * 0.3, arg='counts must hold row counts'); err(dp_noise_floor, C4, fit_counts=C4[:1], arg='fit_counts')
    rng = np.random.default_rng(0); lg = rng.normal(size=(50, 2)); yy = rng.integers(0, 2, 50)
    err(fit_calibration, lg, yy + 1, arg='y must hold codes'); err(fit_calibration, lg[:, 0], yy, arg='logits must have 2')
    err(fit_calibration, lg, yy, l2=-1.0, arg='l2'); err(calibrate, lg, np.ones(3), arg='theta must have 2')
    ok(calibrate, lg, fit_calibration(lg, yy), check=lambda p: np.allclose(p.sum(1), 1) and finite(p))


def test_models_and_runner():
    err(make_model, 3, 2, hidden=-1, arg='hidden'); err(make_model, 3, 1, arg='n_classes')
    err(set_weights, make_model(3, 2), {'w.weight': np.zeros((2, 2)), 'w.bias': np.zeros(2)}, arg='weights do not fit')
    err(run_inprocess, [], [], seed=[1, 2], arg='seed must be an int or one int per protocol')
    err(run_inprocess, [], [], show_progress='no', arg='show_progress')
    m = make_model(3, 2, seed=1)
    ok(set_weights, make_model(3, 2), get_weights(m), check=lambda m2: all(np.array_equal(v, get_weights(m)[k]) for k, v in get_weights(m2).items()))


# ---- Adult, baselines, curves, widgets -----------------------------------------------------------------------------

@pytest.mark.parametrize('kw,arg', [
    (dict(partition='iid'), 'partition'), (dict(n_clients=0), 'n_clients'), (dict(alpha=0.0), 'alpha'), (dict(test_size=1.0), 'test_size'),
    (dict(sensitive=('sex', 'race')), 'sensitive'), (dict(partition='heterogeneous', sensitive='race'), 'partition'),
    (dict(label='wage'), 'label'), (dict(max_rows=5), 'max_rows'), (dict(seed=-1), 'seed'), (dict(sensitive='gender'), 'sensitive'),
    (dict(scheme='fl-bench'), 'scheme'), (dict(partition='heterogeneous', alpha=1.0), 'alpha=1.0'),
    (dict(partition='heterogeneous', min_size=5), 'min_size=5'), (dict(partition='heterogeneous', scheme='logofair'), "scheme='logofair'")])
def test_adult_fed_data(kw, arg):
    err(adult_fed_data, **kw, arg=arg)                # all refused before the data are loaded


def test_baseline_curve_widgets(fitted):
    pytest.importorskip('fairlearn')
    err(fairlearn_baseline, FD, FedAvg(), arg='not fitted', exc=NotFittedError); err(fairlearn_baseline, FD, 'fedavg', arg='base_model')
    err(fairlearn_baseline, FD, fitted['avg'], constraints='parity', arg='constraints')
    for c in ('true_positive_rate_parity', 'false_positive_rate_parity', 'true_negative_rate_parity', 'false_negative_rate_parity'):
        err(fairlearn_baseline, FD, fitted['avg'], constraints=c, arg=f"constraints={c!r}")
    ok(fairlearn_baseline, FD, fitted['avg'], constraints='equalized_odds', check=lambda r: r.notion == 'eo' and 'equalized_odds' in r.method)
    err(fairlearn_baseline, FD3, fitted['avg'], arg='fd must have binary labels')
    ok(fairlearn_baseline, FD, fitted['post'], check=lambda r: isinstance(r, FedReport) and 0 <= r.accuracy <= 1 and r.n_clients == 2)
    err(tradeoff_curve, FD, fitted['avg'], variants=('pooled',), arg='variants'); err(tradeoff_curve, FD, fitted['avg'], budgets=(-0.1,), arg='budgets')
    err(tradeoff_curve, FD, fitted['avg'], budgets=with_nan([0.1]), arg='budgets'); err(tradeoff_curve, FD, fitted['avg'], budgets=(), arg='budgets')
    err(tradeoff_curve, FD, fitted['avg'], budgets='0.1', arg='budgets'); err(tradeoff_curve, FD, fitted['avg'], budgets=[[0.1]], arg='budgets')
    err(tradeoff_curve, FD, fitted['avg'], estimator=FedAvg(), arg='estimator')
    err(explore_fedfact, notion='parity', arg='notion'); err(explore_fedfact, global_budget=-1.0, arg='global_budget')
    err(plot_client_gaps, {}, arg='results'); err(plot_client_gaps, {'a': 1}, arg="results['a']")
    err(plot_client_gaps, {'post': fitted['post']}, column='gap', arg='column')


def test_flower_runner_settings():
    pytest.importorskip('flwr')
    from trustml_nb.fedfact_flower import FlowerRunner, run_flower
    err(FedAvg(**AVG, runner=FlowerRunner(num_cpus=0)).fit, FD, arg='num_cpus')       # refused before Ray starts
    err(FedAvg(**AVG, runner=FlowerRunner(total_cpus=0)).fit, FD, arg='total_cpus')
    err(FedAvg(**AVG, runner=FlowerRunner(verbose='loud')).fit, FD, arg='verbose')
    err(FedAvg(**AVG, runner=FlowerRunner(verbose=0)).fit, FD, arg='verbose must be True or False', exc=TypeError)   # refused before Ray starts
    err(run_flower, [], [], arg='clients must be a non-empty list')
    err(FedAvg(**AVG, runner=FlowerRunner(start_attempts=0)).fit, FD, arg='start_attempts')   # issue 33: refused before Ray starts
    err(FedAvg(**AVG, runner=FlowerRunner(fallback='threads')).fit, FD, arg='fallback')


def test_records_bad_input():
    "issue 33: to_record / from_record name their argument instead of an AttributeError, and refuse keys that would not come back."
    pytest.importorskip('flwr')
    from trustml_nb.fedfact_flower import from_record, to_record
    err(to_record, [1, 2], arg='d must be a dict', exc=TypeError)
    err(to_record, {'a/b': 1.0}, arg="'a/b'")
    err(to_record, {'x': ['a', 'b']}, arg="d['x']", exc=TypeError)
    err(from_record, [1, 2], arg='rec must be', exc=TypeError)


# ---- the exact oracle, known scores, the final LP round, the Deployment Engine (issue 14) ------------------------------
from trustml_nb.core import PrefitClassifier
from trustml_nb.fedfact import expected_fairness, fair_optimum, known_eta_federation

ETA = np.array([.2, .7, .9, .4, .6, .3, .8, .1]); EA, EK = A, K


@pytest.mark.parametrize('args,kw,arg', [
    ((with_nan(ETA), EA, EK), {}, 'eta contains'), ((ETA + 1, EA, EK), {}, 'eta'), (([], [], []), {}, 'eta must have at least 1'),
    ((ETA, EA[:-1], EK), {}, 'a has 7'), ((ETA.astype(str), EA, EK), {}, 'eta must be numeric'), ((ETA, EA + 0.5, EK), {}, 'a must hold integer codes'),
    ((ETA, np.zeros(8), EK), {}, 'a has only one group'), ((ETA, EA, EK), dict(global_budget=-0.1), 'global_budget'), ((ETA, EA, EK), dict(local_budget=np.nan), 'local_budget'),
    ((ETA, EA, EK), dict(notion='dpp'), 'notion'), ((ETA, EA, EK), dict(weights=-np.ones(8)), 'weights'),
    ((ETA, EA, EK), dict(weights=np.ones(3)), 'weights has 3'), ((np.c_[ETA, ETA], EA, EK), {}, 'eta')])
def test_fair_optimum_bad(args, kw, arg):
    err(fair_optimum, *args, arg=arg, **kw)


def test_fair_optimum_ok():
    ok(fair_optimum, ETA, EA, EK, global_budget=0.0, check=lambda r: r.global_gap < 1e-8 and np.allclose(r.decision.sum(1), 1))
    ok(fair_optimum, np.c_[1 - ETA, ETA], EA.astype(bool), EK, local_budget=0.05, notion='eo', check=lambda r: r.worst_local_gap <= 0.05 + 1e-7)
    ok(fair_optimum, ETA, EA, EK, check=lambda r: np.array_equal(r.decision.argmax(1), (ETA > 0.5).astype(int)))


def test_expected_fairness_bad():
    err(expected_fairness, ETA, with_nan(ETA), EA, EK, arg='decision contains')
    err(expected_fairness, ETA, ETA[:-1], EA, EK, arg='decision must have shape')
    err(expected_fairness, ETA, np.c_[ETA, ETA], EA, EK, arg='decision')
    err(expected_fairness, ETA, ETA, EA, EK, notion='x', arg='notion')
    ok(expected_fairness, ETA, (ETA > .5).astype(float), EA, EK, check=lambda d: abs(d['accuracy'] - np.mean(np.maximum(ETA, 1 - ETA))) < 1e-12)


@pytest.mark.parametrize('kw,arg', [(dict(n_clients=0), 'n_clients'), (dict(tie_share=1.5), 'tie_share'), (dict(cell_size=(50, 10)), 'cell_size'),
                                    (dict(cell_size=(1, 10)), 'cell_size[0]'), (dict(seed=-1), 'seed')])
def test_known_eta_federation_bad(kw, arg):
    err(known_eta_federation, arg=arg, **kw)


def test_known_scores_and_final_round_settings():
    fd, eta = known_eta_federation(n_clients=2, cell_size=(20, 40), seed=0)
    for kw, arg in [(dict(polish_window=-0.1), 'polish_window'), (dict(polish_window=2.0), 'polish_window'), (dict(polish_points=2), 'polish_points'),
                    (dict(polish_points=10.5), 'polish_points')]:
        err(FedFactPost(n_rounds=1, local_steps=1, calibrate=False, base_model=PrefitClassifier().fit(), **Q, **kw).fit, fd, arg=arg)
    err(FedFactPost(n_rounds=1, base_model=PrefitClassifier(), **Q).fit, fd, arg='must be fitted')                  # unfitted scorer
    err(FedFactPost(n_rounds=1, base_model=PrefitClassifier(classes=(0, 1, 2)).fit(), **Q).fit, fd, arg='classes')
    err(FedFactPost(n_rounds=1, base_model=PrefitClassifier(proba_fn=lambda X: np.c_[X, X]).fit(), **Q).fit, fd, arg='proba_fn(X)')
    err(FedFactIn(n_rounds=1, base_model=PrefitClassifier().fit(), **Q).fit, fd, arg='base_model')                   # In trains: it needs FedAvg
    err(FedFactIn(n_rounds=1, mixture='best', **Q).fit, fd, arg='mixture')
    with quiet(NumericalWarning):
        ok(FedFactPost(n_rounds=2, local_steps=2, polish_window=0.0, calibrate=False, base_model=PrefitClassifier().fit(), **Q).fit, fd,
           check=lambda e: 'mix' not in e.payload_ and np.isin(e.decision_distribution(fd.X, fd.a, fd.k), (0.0, 1.0)).all())


def test_decision_distribution_bad(fitted):
    post, inn = fitted['post'], fitted['inn']
    err(post.decision_distribution, FD.X_test, sensitive=None, clients=FD.k_test, arg='sensitive is required')
    err(post.decision_distribution, FD.X_test[:, :2], sensitive=FD.a_test, clients=FD.k_test, arg='X')
    err(inn.decision_distribution, FD.X_test, clients=None, arg='clients is required')
    with pytest.raises(NotFittedError): FedFactPost().decision_distribution(FD.X_test, sensitive=FD.a_test, clients=FD.k_test)
    ok(inn.decision_distribution, FD.X_test, clients=FD.k_test, check=lambda P: np.allclose(P.sum(1), 1) and P.shape == (len(FD.X_test), 2))


def test_deployment_runner_bad():
    pytest.importorskip('flwr')
    from trustml_nb.fedfact_flower import DeploymentRunner, run_deployment
    from trustml_nb.fedfact import client_data
    err(FedAvg(n_rounds=1, runner=DeploymentRunner(timeout=0), **Q).fit, FD, arg='timeout')
    err(FedAvg(n_rounds=1, runner=DeploymentRunner(verbose='yes'), **Q).fit, FD, arg='verbose')
    err(run_deployment, [], [], arg='clients must be a non-empty list')
    err(run_deployment, [], client_data(FD), arg='shape')
