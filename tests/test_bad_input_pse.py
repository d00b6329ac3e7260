"""Bad-input sweep of trustml_nb.pse and trustml_nb.pse_simulator: every public entry point, every call ending in a clear
trustml_nb error that names the argument, or in a correct result (checked against a reference fit or a closed form)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.linear_model import LinearRegression, LogisticRegression

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb.pse import (EffectsReport, GLMClassifier, GLMRegressor, PathSpecificEffects, StackClassifier, StackRegressor, crossfit_gmf, explore_effects,
                            gmf_estimate, gmf_weights, make_learners, plot_effects, pse_effects, pse_explorer)
from trustml_nb.pse_simulator import (WORLDS, binary_sfm_nuisances, effects_from_worlds, nonlinear_nuisances, population_truth,
                                      sim_binary_sfm, sim_continuous_sfm, sim_nonlinear, sim_oximetry)

M = 'pse'
SIM = sim_oximetry(400, seed=0)
D, R = SIM.data, SIM.roles
ROLES = dict(exposure='race', covariates=R['z'], mediators_first=R['w'], mediators_second=R['v'], outcome='vented')
FAST = dict(learners='glm', n_folds=2, star=False, warn=False)      # tiny, quick fits for the correct-result checks


def fit(data=D, truth=None, **kw):
    "Fit the estimator on `data` with the sweep's roles and fast settings (overridden by kw); return the report."
    return PathSpecificEffects(**{**ROLES, **FAST, **kw}).fit(data, truth).report_


BASE = fit()


def same_table(rep) -> bool:
    return isinstance(rep, EffectsReport) and np.allclose(rep.table.estimate, BASE.table.estimate, rtol=0, atol=1e-12) \
        and np.allclose(rep.table.se, BASE.table.se, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- PathSpecificEffects.fit / pse_effects: the data

DATA_ERRORS = [
    ('data None', dict(data=None), 'data'),
    ('data ndarray', dict(data=D.to_numpy()), 'data'),
    ('data list of dicts', dict(data=D.to_dict('records')), 'data'),
    ('data empty', dict(data=D.iloc[:0]), 'data'),
    ('missing column', dict(data=D.drop(columns='spo2')), 'spo2'),
    ('duplicate role column', dict(data=pd.concat([D, D[['age']]], axis=1)), 'age'),
    ('NaN in z', dict(data=D.assign(age=with_nan(D.age, 3))), 'age'),
    ('inf in w', dict(data=D.assign(hemoglobin=with_inf(D.hemoglobin, 4))), 'hemoglobin'),
    ('-inf in v', dict(data=D.assign(spo2=-with_inf(D.spo2, 5))), 'spo2'),
    ('NaN in x', dict(data=D.assign(race=with_nan(D.race, 0))), 'race'),
    ('NaN in y', dict(data=D.assign(vented=with_nan(D.vented, 1))), 'vented'),
    ('text column', dict(data=D.assign(sex=np.where(D.sex == 1, 'F', 'M'))), 'sex'),
    ('object numbers', dict(data=D.assign(cci=D.cci.astype(object))), 'cci'),
    ('categorical column', dict(data=D.assign(cci=D.cci.astype('category'))), 'cci'),
    ('datetime column', dict(data=D.assign(age=pd.to_datetime(D.age.round(), unit='D'))), 'age'),
    ('complex column', dict(data=D.assign(age=D.age + 1j)), 'age'),
    ('text exposure', dict(data=D.assign(race=np.where(D.race == 1, 'Black', 'White'))), 'race'),
    ('exposure 0/2', dict(data=D.assign(race=D.race * 2)), 'race'),
    ('exposure constant', dict(data=D.assign(race=1)), 'race'),
    ('one exposed row', dict(data=D.assign(race=(np.arange(len(D)) == 0).astype(int))), 'race'),
    ('constant outcome', dict(data=D.assign(vented=0)), 'vented'),
    ('constant covariate', dict(data=D.assign(sex=1)), 'sex'),
    ('overflowing covariate', dict(data=D.assign(cci=D.cci * 1e200)), 'cci'),
    ('overflowing outcome', dict(data=D.assign(vented=D.vented * 1e40)), 'vented'),
    ('too few rows', dict(data=D.iloc[:30], n_folds=2), 'n_folds'),
    ('fold too small', dict(data=D.iloc[:120], n_folds=5, min_group_rows=5, nested='split'), 'min_group_rows'),
    ('fold too small, whole folds', dict(data=D.iloc[:120], n_folds=5, min_group_rows=9), 'min_group_rows'),
    ('half-samples too small', dict(data=D.iloc[:60], n_folds=2, variance='subsample'), 'variance'),
]


@pytest.mark.parametrize('label,kw,arg', DATA_ERRORS, ids=[c[0] for c in DATA_ERRORS])
def test_fit_data_errors(label, kw, arg):
    kw = dict(kw); data = kw.pop('data')
    expect_error(fit, data, arg=arg, module=M, case=f'fit: {label}', **kw)


def test_pse_effects_data_errors():
    expect_error(pse_effects, D.drop(columns='age'), 'race', R['z'], R['w'], R['v'], 'vented', arg='age', module=M, case='pse_effects: missing column')
    expect_error(pse_effects, pd.concat([D, D[['spo2']]], axis=1), 'race', R['z'], R['w'], R['v'], 'vented', arg='spo2', module=M,
                 case='pse_effects: duplicate column')
    expect_error(pse_effects, D, 'race', R['z'], R['w'], R['v'], 'vented', arg='foo', module=M, case='pse_effects: unknown setting', foo=1)


# ---------------------------------------------------------------- correct results on unusual but valid data

def test_fit_valid_variants_give_the_reference_result():
    perm = np.random.default_rng(1).permutation(len(D))
    cases = [
        ('columns reordered', dict(data=D[D.columns[::-1]])),
        ('shuffled index labels', dict(data=D.set_axis(perm))),
        ('boolean exposure', dict(data=D.assign(race=D.race.astype(bool)))),
        ('boolean outcome', dict(data=D.assign(vented=D.vented.astype(bool)))),
        ('float32 columns', dict(data=D.astype({'age': 'float64'}).assign(sex=D.sex.astype('float32')))),
        ('unrelated duplicate columns', dict(data=pd.concat([D, D[['duration', 'duration']].set_axis(['note', 'note'], axis=1)], axis=1))),
        ('extra unused text column', dict(data=D.assign(ward=np.where(D.sex == 1, 'A', 'B')))),
        ('roles as tuples', dict(covariates=tuple(R['z']), mediators_second=tuple(R['v']))),
    ]
    for label, kw in cases:
        kw = dict(kw); data = kw.pop('data', D)
        expect_ok(fit, data, check=same_table, module=M, case=f'fit: {label}', **kw)
    # truth as a pandas Series lands in the truth column; one estimator by name
    expect_ok(fit, D, SIM.truth['vented'], check=lambda r: r.effect('VDE').truth == SIM.truth_for('vented')['VDE'],
              module=M, case='fit: truth as Series')
    expect_ok(fit, D, check=lambda r: list(r.table.estimator.unique()) == ['SN'] and finite(r.table[['estimate', 'se']]),
              module=M, case='fit: estimators as one name', estimators='SN')
    expect_ok(fit, D, check=lambda r: np.allclose(r.table.estimate, BASE.table.estimate, rtol=0, atol=1e-12) and finite(r.table[['se']])
              and r.variance == 'subsample' and r.subsample_tables.subsample.nunique() == 3,
              module=M, case='fit: variance subsample', variance='subsample', n_subsamples=3)
    # w = () : v is the only mediator; NDE + NIE = TE exactly, no VDE
    expect_ok(fit, D, check=lambda r: set(r.table.effect) == {'TE', 'NDE', 'NIE', 'TV'} and r.v_specific_effect is None
              and abs(r.effect('NDE').estimate + r.effect('NIE').estimate - r.effect('TE').estimate) < 1e-12,
              module=M, case='fit: no w block', mediators_first=())


# ---------------------------------------------------------------- roles, settings, truth

SETTING_ERRORS = [
    ('exposure None', dict(exposure=None), 'exposure'), ('exposure list', dict(exposure=['race']), 'exposure'), ('exposure int', dict(exposure=1), 'exposure'),
    ('outcome None', dict(outcome=None), 'outcome'), ('covariates string', dict(covariates='age'), 'covariates'), ('covariates empty', dict(covariates=[]), 'covariates'),
    ('covariates non-string names', dict(covariates=[0, 1]), 'covariates'), ('mediators_second empty', dict(mediators_second=[]), 'mediators_second'),
    ('mediators_first None', dict(mediators_first=None), 'mediators_first'), ('mediators_first set', dict(mediators_first={'hemoglobin'}), 'mediators_first'),
    ('role twice', dict(mediators_first=['age']), 'age'), ('exposure is outcome', dict(outcome='race'), 'race'),
    ('n_folds 1', dict(n_folds=1), 'n_folds'), ('n_folds 51', dict(n_folds=51), 'n_folds'), ('n_folds float', dict(n_folds=2.5), 'n_folds'),
    ('n_folds bool', dict(n_folds=True), 'n_folds'), ('clip negative', dict(clip=-0.1), 'clip'), ('clip 0.5', dict(clip=0.5), 'clip'),
    ('clip NaN', dict(clip=float('nan')), 'clip'), ('clip text', dict(clip='0.1'), 'clip'), ('level 0', dict(level=0), 'level'),
    ('level 1', dict(level=1.0), 'level'), ('level 95', dict(level=95), 'level'), ('min_group_rows 0', dict(min_group_rows=0), 'min_group_rows'),
    ('n_jobs 0', dict(n_jobs=0), 'n_jobs'), ('n_jobs -2', dict(n_jobs=-2), 'n_jobs'), ('n_jobs float', dict(n_jobs=1.5), 'n_jobs'),
    ('n_repeats 0', dict(n_repeats=0), 'n_repeats'), ('n_repeats float', dict(n_repeats=2.0), 'n_repeats'), ('nested unknown', dict(nested='parts'), 'nested'),
    ('nested None', dict(nested=None), 'nested'), ('n_boot 1', dict(n_boot=1, estimators=('DR', 'plugin')), 'n_boot'),
    ('n_boot text', dict(n_boot='200'), 'n_boot'), ('variance unknown', dict(variance='bootstrap'), 'variance'),
    ('variance None', dict(variance=None), 'variance'), ('n_subsamples 1', dict(variance='subsample', n_subsamples=1), 'n_subsamples'),
    ('n_subsamples float', dict(n_subsamples=2.5), 'n_subsamples'), ('subsample with repeats', dict(variance='subsample', n_repeats=2), 'n_repeats'), ('seed -1', dict(seed=-1), 'seed'),
    ('seed 2**40', dict(seed=2 ** 40), 'seed'), ('seed float', dict(seed=1.5), 'seed'), ('seed None', dict(seed=None), 'seed'),
    ('star text', dict(star='yes'), 'star'), ('warn int', dict(warn=1), 'warn'), ('estimators empty', dict(estimators=()), 'estimators'),
    ('estimators unknown', dict(estimators=('TMLE',)), 'estimators'), ('estimators twice', dict(estimators=('DR', 'DR')), 'estimators'),
    ('estimators int', dict(estimators=5), 'estimators'), ('learners unknown', dict(learners='xgboost'), 'learners'),
    ('learners int', dict(learners=42), 'learners'), ('learners role unknown', dict(learners={'treatment': 'glm'}), 'learners'),
    ('learners preset unknown', dict(learners={'outcome': 'xgb'}), "learners['outcome']"),
    ('propensity regressor', dict(learners={'propensity': LinearRegression()}), "learners['propensity']"),
    ('pseudo classifier', dict(learners={'pseudo': LogisticRegression()}), "learners['pseudo']"),
    ('learner class not instance', dict(learners={'propensity': LogisticRegression}), "learners['propensity']"),
    ('learner not an estimator', dict(learners={'outcome': 'glm', 'pseudo': 3}), "learners['pseudo']"),
    ('outcome classifier, continuous y', dict(outcome='duration', learners={'outcome': LogisticRegression()}), "learners['outcome']"),
]


@pytest.mark.parametrize('label,kw,arg', SETTING_ERRORS, ids=[c[0] for c in SETTING_ERRORS])
def test_fit_setting_errors(label, kw, arg):
    expect_error(fit, D, arg=arg, module=M, case=f'fit: {label}', **kw)


@pytest.mark.parametrize('truth,arg', [([0.1], 'truth'), ({'vde': 0.1}, 'vde'), ({'VDE': float('nan')}, 'VDE'),
                                       ({'VDE': 'a'}, 'VDE'), ({'TE': float('inf')}, 'TE')])
def test_fit_truth_errors(truth, arg):
    expect_error(fit, D, truth, arg=arg, module=M, case=f'fit: truth {truth!r}')


@settings(max_examples=25, deadline=None)
@given(n_folds=st.one_of(st.integers(min_value=-2 ** 62, max_value=1), st.integers(min_value=51, max_value=2 ** 62)), clip=st.one_of(st.floats(max_value=-1e-9), st.floats(min_value=0.5)))
def test_fit_out_of_range_settings_hypothesis(n_folds, clip):
    expect_error(fit, D, arg='n_folds', module=M, case='fit: n_folds (hypothesis)', n_folds=n_folds)
    expect_error(fit, D, arg='clip', module=M, case='fit: clip (hypothesis)', clip=clip)


# ---------------------------------------------------------------- the report, the plot, the studies, the widget

def test_report_plot_studies_widget_errors():
    est = PathSpecificEffects(**ROLES, **FAST)
    expect_error(BASE.effect, 'ABC', arg='name', module=M, case='EffectsReport.effect: unknown effect')
    expect_error(BASE.effect, 'VDE', 'weighting', arg='estimator', module=M, case='EffectsReport.effect: estimator not fitted')
    expect_error(plot_effects, BASE.table, arg='report', module=M, case='plot_effects: a DataFrame')
    expect_error(plot_effects, BASE, effects=('XYZ',), arg='effects', module=M, case='plot_effects: unknown effect')
    expect_error(plot_effects, BASE, estimators=('weighting',), arg='estimators', module=M, case='plot_effects: estimator not in report')
    expect_error(est.coverage_study, n_reps=0, arg='n_reps', module=M, case='coverage_study: n_reps 0')
    expect_error(est.coverage_study, n_reps=2, outcome='died', arg='outcome', module=M, case='coverage_study: outcome')
    expect_error(est.coverage_study, n_reps=2, truth_n=1, arg='truth_n', module=M, case='coverage_study: truth_n')
    expect_error(est.coverage_study, n_reps=2, devicebias=1.0, arg='devicebias', module=M, case='coverage_study: unknown sim setting')
    expect_error(est.coverage_study, n_reps=2, overlap=0.0, arg='overlap', module=M, case='coverage_study: overlap 0')
    expect_error(est.set_params(seed=-3).coverage_study, n_reps=2, arg='seed', module=M, case='coverage_study: seed -3')
    est.set_params(seed=0)
    expect_error(est.misspecification_study, D, effects=('ABC',), arg='effects', module=M, case='misspecification_study: effects')
    expect_error(est.misspecification_study, D.drop(columns='age'), arg='age', module=M, case='misspecification_study: missing column')
    expect_error(est.split_rerun_interval, D, n_reruns=1, arg='n_reruns', module=M, case='split_rerun_interval: n_reruns 1')
    expect_error(est.split_rerun_interval, D, estimator='weighting', arg='estimator', module=M, case='split_rerun_interval: estimator')
    expect_error(explore_effects, learner='xgb', arg='learner', module=M, case='explore_effects: learner')
    expect_error(explore_effects, outcome='died', arg='outcome', module=M, case='explore_effects: outcome')
    expect_error(explore_effects, overlap=0.0, arg='overlap', module=M, case='explore_effects: overlap 0')
    expect_error(explore_effects, n=1, arg='n', module=M, case='explore_effects: n 1')
    expect_error(pse_explorer, n=3_000, arg='n', module=M, case='pse_explorer: n not on the slider')
    expect_error(pse_explorer, learner='lasso', arg='learner', module=M, case='pse_explorer: learner')


# ---------------------------------------------------------------- the building blocks

X3 = np.array([0, 1, 1, 0, 1, 0])
E3 = [np.full(6, 0.5)] * 3
MU3 = np.zeros((6, 3))


def test_gmf_weights_and_estimate_errors():
    cases = [
        (gmf_weights, (X3 + 1, E3, (1, 0, 1)), {}, 'x'), (gmf_weights, (with_nan(X3), E3, (1, 0, 1)), {}, 'x'),
        (gmf_weights, (X3, E3[:2], (1, 0, 1)), {}, 'props'), (gmf_weights, (X3, [np.full(6, 1.2)] * 3, (1, 0, 1)), {}, 'props[0]'),
        (gmf_weights, (X3, [with_nan(np.full(6, 0.5))] * 3, (1, 0, 1)), {}, 'props[0]'),
        (gmf_weights, (X3, [np.full(5, 0.5)] * 3, (1, 0, 1)), {}, 'props[0]'),
        (gmf_weights, (X3, [np.zeros(6)] * 3, (1, 0, 1)), {}, 'clip'), (gmf_weights, (X3, E3, '101'), {}, 'a'),
        (gmf_weights, (X3, E3, (1, 2, 1)), {}, 'a'), (gmf_weights, (X3, E3, (1,)), {}, 'a'),
        (gmf_weights, (X3, E3, (1, 0, 1)), dict(clip=0.6), 'clip'), (gmf_weights, (X3, 'props', (1, 0, 1)), {}, 'props'),
        (gmf_estimate, (X3, with_nan(np.ones(6)), E3, MU3, (1, 0, 1)), {}, 'y'), (gmf_estimate, (X3, with_inf(np.ones(6)), E3, MU3, (1, 0, 1)), {}, 'y'),
        (gmf_estimate, (X3, np.ones(5), E3, MU3, (1, 0, 1)), {}, 'y'), (gmf_estimate, (X3, np.ones(6), E3, MU3[:, :2], (1, 0, 1)), {}, 'mus'),
        (gmf_estimate, (X3, np.ones(6), E3, with_nan(MU3), (1, 0, 1)), {}, 'mus'),
        (gmf_estimate, (X3, np.ones(6), E3, [np.zeros(6), np.zeros(5), np.zeros(6)], (1, 0, 1)), {}, 'mus[1]'),
        (gmf_estimate, (X3, np.array(list('abcdef')), E3, MU3, (1, 0, 1)), {}, 'y'),
        (gmf_estimate, (X3, np.ones(6), E3, MU3, (1, 0, 1)), dict(normalize='yes'), 'normalize'),
    ]
    for fn, args, kw, arg in cases:
        expect_error(fn, *args, arg=arg, module=M, case=f'{fn.__name__}: {arg}', **kw)
    # a correct result: with x = a_k everywhere stage weights are 1/e and the DR estimate of constant regressions is exact
    expect_ok(gmf_weights, np.ones(6, int), [np.full(6, 0.25)] * 3, (1, 1, 1), check=lambda W: np.allclose(W, 4.0), module=M,
              case='gmf_weights: closed form')
    expect_ok(gmf_estimate, X3, np.full(6, 2.0), E3, np.full((6, 3), 2.0), (1, 0, 1),
              check=lambda r: r.estimate == 2.0 and r.se == 0.0, module=M, case='gmf_estimate: exact regressions')


@settings(max_examples=20, deadline=None)
@given(bad=st.one_of(st.floats(min_value=1.0 + 1e-3, max_value=1e6), st.floats(max_value=-1e-3, min_value=-1e6)), i=st.integers(0, 5))
def test_gmf_weights_out_of_range_propensities_hypothesis(bad, i):
    e = np.full(6, 0.5); e[i] = bad
    expect_error(gmf_weights, X3, [e, E3[1], E3[2]], (1, 0, 1), arg='props[0]', module=M, case='gmf_weights: propensity outside [0, 1] (hypothesis)')


def test_crossfit_and_learners_errors():
    x, y = D.race.to_numpy(), D.vented.to_numpy()
    Z, W, V = (D[c].to_numpy() for c in (R['z'], R['w'], R['v']))
    cases = [
        ((x, y, Z, [(1, 0, 1)]), {}, 'blocks'), ((x, y, [Z], [(1, 0, 1)]), {}, 'blocks'), ((x, y[:-1], [Z, W, V], [(1, 0, 1)]), {}, 'y'),
        ((x, y, [Z, W[:-1], V], [(1, 0, 1)]), {}, 'blocks[1]'), ((x, y, [Z, with_nan(W), V], [(1, 0, 1)]), {}, 'blocks[1]'),
        ((x, y, [Z, W, V], [(1, 0)]), {}, 'targets[0]'), ((x, y, [Z, W, V], [(1, 0, 2)]), {}, 'targets[0]'), ((x, y, [Z, W, V], []), {}, 'targets'),
        ((x, D.duration.to_numpy(), [Z, W, V], [(1, 0, 1)]), dict(binary_y=True), 'binary_y'),
        ((x, y, [Z, W, V], [(1, 0, 1)]), dict(n_folds=1), 'n_folds'), ((x, y, [Z, W, V], [(1, 0, 1)]), dict(seed=-1), 'seed'),
        ((np.zeros(len(x), int), y, [Z, W, V], [(1, 0, 1)]), {}, 'x'), ((x, y, [Z, W, V], [(1, 0, 1)]), dict(learners='boost'), 'learners'),
    ]
    for args, kw, arg in cases:
        expect_error(crossfit_gmf, *args, arg=arg, module=M, case=f'crossfit_gmf: {arg}', **kw)
    for args, arg in [(('xgboost',), 'learners'), (({'treatment': 'glm'},), 'learners'), ((5,), 'learners'), (('glm', 'yes'), 'binary_y'),
                      (('hgb', True, -1), 'seed')]:
        expect_error(make_learners, *args, arg=arg, module=M, case=f'make_learners: {arg}')
    # a correct result: the cross-fitted GLM propensities of one stage equal a by-hand fit on the other fold
    cf = expect_ok(crossfit_gmf, x, y, [Z, W, V], [(1, 1, 1)], learners='glm', n_folds=2, check=lambda c: len(c.propensities) == 3,
                   module=M, case='crossfit_gmf: matches a by-hand fit')
    tr, te = cf.folds == 1, cf.folds == 0
    assert np.allclose(cf.raw_propensities[0][te], GLMClassifier().fit(Z[tr], x[tr]).predict_proba(Z[te])[:, 1], atol=1e-12)


def test_glm_wrapper_errors():
    X = D[R['z']].to_numpy()
    clf = GLMClassifier().fit(X, D.race)
    cases = [
        (GLMClassifier().fit, (with_nan(X), D.race), 'X'), (GLMClassifier().fit, (X, D.cci), 'y'),
        (GLMClassifier().fit, (X, np.zeros(len(X))), 'y'), (GLMClassifier().fit, (X, None), 'y'),
        (GLMClassifier().fit, (X[:, 0], D.race), 'X'), (GLMClassifier().fit, (X, D.race[:-1]), 'samples'),
        (GLMClassifier(max_iter=0).fit, (X, D.race), 'max_iter'), (GLMClassifier(tol=-1.0).fit, (X, D.race), 'tol'),
        (clf.predict_proba, (X[:, :2],), 'features'), (clf.predict, (with_inf(X),), 'X'),
        (GLMRegressor().fit, (with_inf(X), D.duration), 'X'), (GLMRegressor().fit, (X, with_nan(D.duration)), 'y'),
        (GLMRegressor(max_iter=0).fit, (X, D.duration), 'max_iter'), (GLMRegressor().fit, (X[:1], D.duration[:1]), 'sample'),
    ]
    for fn, args, arg in cases:
        expect_error(fn, *args, arg=arg, module=M, case=f'{type(fn.__self__).__name__}.{fn.__name__}: {arg}')
    expect_ok(GLMClassifier().fit(X, D.race == 1).predict, X, check=lambda p: p.dtype == bool and set(p) <= {False, True}, module=M,
              case='GLMClassifier: boolean labels')


def test_stack_learner_errors():
    "The stacked learners: bad settings, data and library entries name the argument; a one-learner library is that learner."
    X = D[R['z']].to_numpy()
    lib = [('glm', GLMClassifier()), ('logit', LogisticRegression())]
    clf = StackClassifier(estimators=lib).fit(X, D.race)
    cases = [
        (StackClassifier(holdout=0.0).fit, (X, D.race), 'holdout'), (StackClassifier(holdout=0.9).fit, (X, D.race), 'holdout'),
        (StackClassifier(holdout='a').fit, (X, D.race), 'holdout'), (StackClassifier(seed=-1).fit, (X, D.race), 'seed'),
        (StackClassifier(estimators='glm').fit, (X, D.race), 'estimators'), (StackClassifier(estimators=[]).fit, (X, D.race), 'estimators'),
        (StackClassifier(estimators=[GLMClassifier()]).fit, (X, D.race), 'estimators'),
        (StackClassifier().fit, (with_nan(X), D.race), 'X'), (StackClassifier().fit, (X, D.cci), 'y'),
        (StackClassifier().fit, (X, np.zeros(len(X))), 'y'), (StackClassifier().fit, (X[:3], D.race[:3]), 'sample'),
        (clf.predict_proba, (X[:, :2],), 'features'), (clf.predict, (with_inf(X),), 'X'),
        (StackRegressor().fit, (with_inf(X), D.duration), 'X'), (StackRegressor().fit, (X, with_nan(D.duration)), 'y'),
        (StackRegressor(estimators=[('a', LinearRegression())] * 9).fit, (X, D.duration), 'estimators'),
    ]
    for fn, args, arg in cases:
        expect_error(fn, *args, arg=arg, module=M, case=f'{type(fn.__self__).__name__}.{fn.__name__}: {arg}')
    one = StackRegressor(estimators=[('ols', LinearRegression())]).fit(X, D.duration)
    expect_ok(one.predict, X, check=lambda p: np.allclose(p, LinearRegression().fit(X, D.duration).predict(X), atol=1e-9), module=M,
              case='StackRegressor: one learner is that learner refitted on all rows')


# ---------------------------------------------------------------- the simulators

def test_simulator_errors_and_results():
    cases = [
        (sim_oximetry, dict(n=1), 'n'), (sim_oximetry, dict(n=2.5), 'n'), (sim_oximetry, dict(n=10 ** 9), 'n'), (sim_oximetry, dict(seed=-1), 'seed'),
        (sim_oximetry, dict(device_bias=-1), 'device_bias'), (sim_oximetry, dict(overlap=0), 'overlap'), (sim_oximetry, dict(n_noise_w=-1), 'n_noise_w'),
        (sim_oximetry, dict(reliance=float('nan')), 'reliance'), (sim_oximetry, dict(nonlinear='high'), 'nonlinear'),
        (sim_binary_sfm, dict(n=True), 'n'), (sim_binary_sfm, dict(seed='a'), 'seed'), (sim_continuous_sfm, dict(n=0), 'n'),
        (population_truth, dict(generator='x'), 'generator'), (population_truth, dict(generator='binary', device_bias=1), 'device_bias'),
        (population_truth, dict(n=0), 'n'), (population_truth, dict(n=1000, foo=1), 'foo'),
        (population_truth, dict(generator='continuous', n=1000, device_bias=1), 'device_bias'), (population_truth, dict(n=1000, seed=-1), 'seed'),
    ]
    for fn, kw, arg in cases:
        expect_error(fn, arg=arg, module=M, case=f'{fn.__name__}: {arg}', **kw)
    sb = sim_binary_sfm(50, seed=0)
    for args, kw, arg in [((sb.data[['z', 'w']],), {}, 'v'), ((sb.data.assign(w=sb.data.w * 3),), {}, 'w'), ((sb.data,), dict(a=(1, 0)), 'a'),
                          ((sb.data,), dict(a='101'), 'a'), ((sb.data.to_numpy(),), {}, 'df')]:
        expect_error(binary_sfm_nuisances, *args, arg=arg, module=M, case=f'binary_sfm_nuisances: {arg}', **kw)
    means = {k: 0.5 for k in WORLDS}
    expect_error(effects_from_worlds, {k: 0.5 for k in list(WORLDS)[:3]}, arg='psi(1,0,1)', module=M, case='effects_from_worlds: missing world')
    expect_error(effects_from_worlds, {**means, 'E[Y_x1]': float('nan')}, arg='E[Y_x1]', module=M, case='effects_from_worlds: NaN mean')
    expect_error(effects_from_worlds, [0.5] * 4, arg='means', module=M, case='effects_from_worlds: list')
    expect_error(SIM.truth_for, 'died', arg='outcome', module=M, case='SimData.truth_for: unknown outcome')
    expect_error(sim_oximetry, 2, seed=3, arg='n', module=M, case='sim_oximetry: n = 2 drew one group only (TV undefined)')
    expect_ok(sim_oximetry, 2, seed=4, check=lambda s: len(s.data) == 2 and s.data.race.tolist() == [0, 1] and finite(s.truth),
              module=M, case='sim_oximetry: n = 2, both groups')
    expect_ok(effects_from_worlds, {**means, 'E[Y_x1]': 0.7}, check=lambda e: e['TE'] == e['NIE'] == e['VDE'] == 0.7 - 0.5 and np.isnan(e['TV']),
              module=M, case='effects_from_worlds: closed form')


# ---------------------------------------------------------------- sim_nonlinear / nonlinear_nuisances (issue 13)

NL = sim_nonlinear(200, 'binary', seed=0)


@pytest.mark.parametrize('label,fn,kw,arg', [
    ('n 1', sim_nonlinear, dict(n=1), 'n'), ('n float', sim_nonlinear, dict(n=2.5), 'n'), ('n text', sim_nonlinear, dict(n='100'), 'n'),
    ('design unknown', sim_nonlinear, dict(n=100, design='linear'), 'design'), ('design None', sim_nonlinear, dict(n=100, design=None), 'design'),
    ('nuisances data missing v', nonlinear_nuisances, dict(data=NL.data.drop(columns='v'), design='binary'), 'v'),
    ('nuisances data ndarray', nonlinear_nuisances, dict(data=NL.data.to_numpy(), design='binary'), 'data'),
    ('nuisances design unknown', nonlinear_nuisances, dict(data=NL.data, design='logit'), 'design'),
    ('nuisances target too short', nonlinear_nuisances, dict(data=NL.data, design='binary', targets=[(1, 0)]), 'targets[0]'),
    ('nuisances target not 0/1', nonlinear_nuisances, dict(data=NL.data, design='binary', targets=[(1, 0, 2)]), 'targets[0]'),
    ('nuisances n_nodes 1', nonlinear_nuisances, dict(data=NL.data, design='binary', n_nodes=1), 'n_nodes'),
    ('population_truth unknown setting', population_truth, dict(generator='nonlinear', n=1000, overlap=0.5), 'overlap'),
])
def test_nonlinear_simulator_errors(label, fn, kw, arg):
    expect_error(fn, arg=arg, module=M, case=label, **kw)


def test_nonlinear_simulator_ok():
    expect_ok(nonlinear_nuisances, NL.data, 'binary', targets=[(1, 0, 1)], module=M, case='nuisances: one target',
              check=lambda out: len(out[0]) == 3 and set(out[1]) == {(1, 0, 1)} and out[1][(1, 0, 1)].shape == (200, 3))
    expect_ok(sim_nonlinear, 300, 'threshold', seed=1, module=M, case='sim_nonlinear: same seed, same table',
              check=lambda s: s.data.equals(sim_nonlinear(300, 'threshold', seed=1).data) and set(s.data.z2) == {0.0, 1.0})


@pytest.mark.parametrize('label,fn,kw,arg', [
    ('results file unknown', 'pse_benchmark_results', dict(file='results.csv'), 'file'),
    ('coverage table not a frame', 'plot_coverage', dict(table=[1, 2]), 'table'),
    ('coverage table missing column', 'plot_coverage', dict(table=pd.DataFrame(dict(design=['a'], n=[1], effect=['TE'], coverage=[0.9]))), 'coverage_se'),
    ('coverage level 1', 'plot_coverage', dict(table=pd.DataFrame(dict(design=['a'], n=[1], effect=['TE'], coverage=[0.9], coverage_se=[0.01])), level=1.0), 'level'),
    ('coverage effect unknown', 'plot_coverage', dict(table=pd.DataFrame(dict(design=['a'], n=[1], effect=['TE'], coverage=[0.9], coverage_se=[0.01])), effects=('ATE',)), 'effects'),
])
def test_coverage_plot_errors(label, fn, kw, arg):
    import trustml_nb.pse as pse
    expect_error(getattr(pse, fn), arg=arg, module=M, case=label, **kw)
