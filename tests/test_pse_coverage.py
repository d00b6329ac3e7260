"""Issue 13: parallel and repeated cross-fitting, whole-fold nested regressions, the GLM g-formula plug-in route and the
nonlinear designs, each checked against something exact it did not produce (a direct fit, OLS closed forms, the exact
nuisances of the simulator, a sequential run)."""
import os

import joblib
import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from trustml_nb.pse import (GLMClassifier, GLMRegressor, PathSpecificEffects, _combine_repeats, crossfit_gmf, gmf_estimate,
                            make_learners)
from trustml_nb.pse_simulator import NONLINEAR_DESIGNS, WORLDS, nonlinear_nuisances, population_truth, sim_nonlinear
from trustml_nb.core import derived_rng

SIM = sim_nonlinear(1_500, 'binary', seed=3)
R = SIM.roles
ROLES = dict(exposure=R['x'], covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='y')


def _table(**kw):
    return PathSpecificEffects(**ROLES, warn=False, **kw).fit(SIM.data).report_.table


# ---------------------------------------------------------------- exact nuisances of the nonlinear designs

@pytest.mark.parametrize('design', list(NONLINEAR_DESIGNS))
def test_exact_nuisances_give_unbiased_dr(design):
    "With the designs' exact nuisances the DR estimate of every functional lands within 3.5 SE of the population truth."
    s = sim_nonlinear(8_000, design, seed=11)
    props, mus = nonlinear_nuisances(s.data, design)
    truth = population_truth('nonlinear', n=1_000_000, design=design)['y']
    x, y = s.data.x.to_numpy(), s.data.y.to_numpy()
    for name, a in WORLDS.items():
        est = gmf_estimate(x, y, [np.clip(p, 0.01, 0.99) for p in props], mus[a], a)
        assert abs(est.estimate - truth[name]) < 3.5 * est.se, (design, name, est.estimate, truth[name], est.se)
        gap = s.counterfactuals['y'][name].to_numpy() - mus[a][:, 0]               # quadrature vs the shared-noise worlds
        assert abs(gap.mean()) < 4 * gap.std() / np.sqrt(len(gap))


def test_exact_nuisances_break_when_wrong():
    "The quadrature is what makes them exact: a wrong design's nuisances miss the truth by many SE."
    s = sim_nonlinear(8_000, 'interact', seed=11)
    props, mus = nonlinear_nuisances(s.data, 'threshold')
    truth = population_truth('nonlinear', n=1_000_000, design='interact')['y']
    x, y = s.data.x.to_numpy(), s.data.y.to_numpy()
    a = WORLDS['psi(0,0,1)']
    plug = mus[a][:, 0].mean()
    assert abs(plug - truth['psi(0,0,1)']) > 0.1


# ---------------------------------------------------------------- parallel cross-fitting

def test_same_numbers_for_any_n_jobs():
    "A fixed seed gives identical tables with 1 worker, 2 loky processes and 2 threads (via joblib.parallel_config)."
    one = _table(n_jobs=1)
    assert_frame_equal(one, _table(n_jobs=2), check_exact=True)
    with joblib.parallel_config(backend='threading', n_jobs=2):
        assert_frame_equal(one, _table(), check_exact=True)      # n_jobs=None defers to parallel_config


@pytest.mark.xdist_group('ray')
def test_ray_backend_same_numbers():
    "joblib.parallel_config(backend='ray') spreads the fits over a Ray cluster (here a local one) without changing a number."
    for k, v in {'RAY_USAGE_STATS_ENABLED': '0', 'RAY_DEDUP_LOGS': '0', 'RAY_raylet_start_wait_time_s': '180'}.items():
        os.environ.setdefault(k, v)                              # quiet, offline, and patient on a loaded machine
    ray = pytest.importorskip('ray')
    from ray.util.joblib import register_ray
    one = _table(n_jobs=1, estimators=('DR',), star=False)
    register_ray()
    try: ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception:                                            # Ray waits 30 s for its raylet: on a loaded machine, try once more
        ray.shutdown(); ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with joblib.parallel_config(backend='ray', n_jobs=2):
            assert_frame_equal(one, _table(estimators=('DR',), star=False), check_exact=True)
    finally:
        ray.shutdown()


# ---------------------------------------------------------------- whole-fold nested regressions and repeats

def test_nested_fold_fits_whole_training_fold():
    "With nested='fold' the outcome and pseudo-outcome regressions of psi(1,0,1) are fitted on all training rows of their arm."
    d = SIM.data
    x, y = d.x.to_numpy(), d.y.to_numpy()
    Z, W, V = d[['z1', 'z2']].to_numpy(), d[['w1', 'w2']].to_numpy(), d[['v']].to_numpy()
    cf = crossfit_gmf(x, y, [Z, W, V], [(1, 0, 1)], learners='glm', n_folds=3, seed=5, nested='fold')
    te = cf.folds == 0; tr = ~te
    H2, H1 = np.column_stack([Z, W, V]), np.column_stack([Z, W])
    m3 = GLMClassifier().fit(H2[tr & (x == 1)], y[tr & (x == 1)])
    m2 = GLMRegressor().fit(H1[tr & (x == 0)], m3.predict_proba(H2[tr & (x == 0)])[:, 1])
    p01 = lambda m, H: np.clip(m.predict(H), 0, 1)               # a binary outcome's nested regressions are probabilities
    m1 = GLMRegressor().fit(Z[tr & (x == 1)], p01(m2, H1[tr & (x == 1)]))
    M = cf.regressions[(1, 0, 1)]
    np.testing.assert_allclose(M[te, 2], m3.predict_proba(H2[te])[:, 1], atol=1e-10)
    np.testing.assert_allclose(M[te, 1], p01(m2, H1[te]), atol=1e-10)
    np.testing.assert_allclose(M[te, 0], p01(m1, Z[te]), atol=1e-10)
    split = crossfit_gmf(x, y, [Z, W, V], [(1, 0, 1)], learners='glm', n_folds=3, seed=5, nested='split')
    assert np.abs(split.regressions[(1, 0, 1)][te, 2] - M[te, 2]).max() > 1e-6    # the authors' parts use fewer rows


def test_repeats_median_and_between_split_variance():
    "n_repeats=3: the first repeat is the single-split fit; the table is the median with DoubleML's variance rule."
    rep = PathSpecificEffects(**ROLES, learners='glm', n_repeats=3, warn=False, seed=4).fit(SIM.data).report_
    single = PathSpecificEffects(**ROLES, learners='glm', warn=False, seed=4).fit(SIM.data).report_
    r = rep.repeat_tables
    assert_frame_equal(r[r.repeat == 0].drop(columns='repeat').reset_index(drop=True), single.table)
    est = np.column_stack([r[r.repeat == k].estimate.to_numpy() for k in range(3)])
    se = np.column_stack([r[r.repeat == k].se.to_numpy() for k in range(3)])
    med = np.median(est, axis=1)
    np.testing.assert_allclose(rep.table.estimate, med)
    np.testing.assert_allclose(rep.table.se, np.sqrt(np.median(se ** 2 + (est - med[:, None]) ** 2, axis=1)))
    assert (rep.table.se >= np.median(se, axis=1) - 1e-12).all()
    assert np.ptp(est[rep.table.effect.to_numpy() == 'NDE']) > 0                    # the repeats do use different folds
    np.testing.assert_allclose(rep.table.ci_high - rep.table.ci_low, 2 * 1.959963984540054 * rep.table.se)


def test_subsample_refits_are_the_estimator_on_half_samples():
    "variance='subsample': each half-sample table is a plain fit on those rows; the SE is sqrt(m / (n - m)) times their SD."
    data = SIM.data.iloc[:1_201]                                 # odd n: m = 600 of 1,201, so the factor is not 1
    kw = dict(**ROLES, learners='glm', warn=False, seed=7, star=False)
    rep = PathSpecificEffects(**kw, variance='subsample', n_subsamples=4).fit(data).report_
    single = PathSpecificEffects(**kw).fit(data).report_
    np.testing.assert_allclose(rep.table.estimate, single.table.estimate, rtol=0, atol=1e-12)
    n, m, rng = len(data), len(data) // 2, derived_rng(7, 3)
    sub = rep.subsample_tables
    for b in range(2):
        rows = np.sort(rng.choice(n, m, replace=False))
        alone = PathSpecificEffects(**kw).fit(data.iloc[rows]).report_.table
        np.testing.assert_allclose(sub[sub.subsample == b].estimate, alone.estimate, rtol=0, atol=1e-12)
    for eff in ('TE', 'NDE', 'NIE', 'VDE'):
        draws = sub[(sub.effect == eff) & (sub.estimator == 'DR')].estimate.to_numpy()
        se = np.sqrt(m / (n - m) * np.sum((draws - draws.mean()) ** 2) / (len(draws) - 1))
        row = rep.table[(rep.table.effect == eff) & (rep.table.estimator == 'DR')].iloc[0]
        assert np.isclose(row.se, se, rtol=1e-12) and np.isclose(row.ci_high - row.estimate, 1.959963984540054 * se)
    tv = lambda r: r.table[r.table.effect == 'TV'].se.to_numpy()
    np.testing.assert_array_equal(tv(rep), tv(single))


def test_subsample_variance_same_for_any_n_jobs():
    kw = dict(**ROLES, learners='glm', warn=False, seed=2, star=False, variance='subsample', n_subsamples=3)
    a = PathSpecificEffects(**kw, n_jobs=1).fit(SIM.data).report_
    b = PathSpecificEffects(**kw, n_jobs=2).fit(SIM.data).report_
    assert_frame_equal(a.table, b.table)
    assert_frame_equal(a.subsample_tables, b.subsample_tables)


def test_combine_repeats_by_hand():
    t = pd.DataFrame(dict(effect=['TE'], estimator=['DR'], estimate=[1.0], se=[0.1], ci_low=[0.0], ci_high=[0.0], truth=[np.nan]))
    out = _combine_repeats([t.assign(estimate=v, se=s) for v, s in ((1.0, 0.1), (2.0, 0.2), (4.0, 0.1))], 0.95)
    assert out.estimate[0] == 2.0
    assert np.isclose(out.se[0], np.sqrt(np.median([0.01 + 1.0, 0.04, 0.01 + 4.0])))


# ---------------------------------------------------------------- the parametric g-formula plug-in

def _linear(n, seed):
    rng = np.random.default_rng(seed)
    z1, z2, um, uy = rng.standard_normal((4, n))
    x = (0.6 * z1 - 0.3 + rng.logistic(size=n) > 0).astype(int)
    m = 0.8 * x + 0.5 * z1 + um
    return pd.DataFrame(dict(z1=z1, z2=z2, x=x, m=m, y=0.5 * x + m + 0.3 * z1 + 0.2 * z2 + uy))


def test_plugin_is_the_product_of_coefficients():
    "One mediator, main-effects OLS: the g-formula NDE is the X coefficient of Y ~ X + M + Z, the NIE the product of coefficients."
    df = _linear(3_000, 0)
    rep = PathSpecificEffects(exposure='x', covariates=['z1', 'z2'], mediators_second=['m'], outcome='y', learners='glm', estimators=('plugin',), n_boot=200, seed=1).fit(df).report_
    A = np.column_stack([np.ones(len(df)), df.x, df.m, df.z1, df.z2])
    b, *_ = np.linalg.lstsq(A, df.y, rcond=None)
    g, *_ = np.linalg.lstsq(A[:, [0, 1, 3, 4]], df.m, rcond=None)
    np.testing.assert_allclose(rep.effect('NDE').estimate, b[1], atol=1e-8)
    np.testing.assert_allclose(rep.effect('NIE').estimate, b[2] * g[1], atol=1e-8)
    resid = df.y - A @ b                                # HC0 sandwich SE of the X coefficient: the bootstrap should be close
    bread = np.linalg.inv(A.T @ A)
    hc0 = np.sqrt((bread @ (A.T * resid.to_numpy() ** 2) @ A @ bread)[1, 1])
    assert 0.8 < rep.effect('NDE').se / hc0 < 1.25, (rep.effect('NDE').se, hc0)


def test_plugin_bootstrap_is_seeded_and_two_blocks_run():
    a = _table(learners='glm', estimators=('DR', 'plugin'), n_boot=20, seed=2)
    b = _table(learners='glm', estimators=('DR', 'plugin'), n_boot=20, seed=2)
    assert_frame_equal(a, b)
    p = a[a.estimator == 'plugin'].set_index('effect')
    assert p.se.notna().all() and (p.se > 0).all()
    assert set(p.index) == {'TE', 'NDE', 'NIE', 'VDE', 'NIE*', 'TV'}


# ---------------------------------------------------------------- the stacked learner preset

def test_simplex_weights_match_brute_force_and_stack_passes_check_estimator():
    "The stack's weights are the exact least-squares point of the simplex (a fine grid finds nothing better), and the stacked learners pass scikit-learn's check_estimator."
    from sklearn.utils.estimator_checks import check_estimator
    from trustml_nb.pse import StackClassifier, StackRegressor, _simplex_lstsq
    rng = np.random.default_rng(0)
    for trial in range(3):
        P = rng.normal(size=(300, 3)) + rng.normal(size=(300, 1)); t = P @ rng.dirichlet([1, 1, 1]) + rng.normal(0, 1, 300) + trial * 0.3
        w = _simplex_lstsq(P, t)
        grid = [np.array([a, b, 1 - a - b]) for a in np.linspace(0, 1, 101) for b in np.linspace(0, 1, 101) if a + b <= 1 + 1e-12]
        assert np.sum((P @ w - t) ** 2) <= min(np.sum((P @ g - t) ** 2) for g in grid) + 1e-9
        assert w.min() >= 0 and abs(w.sum() - 1) < 1e-12
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    for est in (StackClassifier(estimators=[('glm', GLMClassifier()), ('logit', LogisticRegression())]),   # light libraries: the checks fit hundreds of times
                StackRegressor(estimators=[('glm', GLMRegressor()), ('ols', LinearRegression()), ('ridge', Ridge())])):
        check_estimator(est)


def test_stack_preset_extrapolates_a_trend_boosting_cannot():
    "On a linear trend the stack puts its weight on the GLM/splines and predicts beyond the data; the boosting preset alone stays flat."
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, (2_000, 2)); yv = 1.5 * X[:, 0] - X[:, 1] + rng.normal(0, 0.3, 2_000)
    L = make_learners('stack', binary_y=False, seed=0)
    st, hgb = L['pseudo'].fit(X, yv), make_learners('hgb', binary_y=False)['pseudo'].fit(X, yv)
    far = np.array([[2.5, 0.0]])
    assert abs(st.predict(far)[0] - 3.75) < 0.15 and abs(hgb.predict(far)[0] - 3.75) > 0.4
    assert st.weights_['hgb'] < 0.5
