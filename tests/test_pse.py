"""Path-specific effects (trustml_nb.pse, trustml_nb.pse_simulator): exact truths, oracle nuisances, double robustness,
algebraic reductions, self-normalisation, the estimator contract, the statsmodels GLM route, coverage (slow) and input errors."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression

from contract import check_estimator_contract, check_report
from trustml_nb.core import NumericalWarning
from trustml_nb.pse import (CoverageReport, CrossFitNuisances, EffectsReport, FunctionalEstimate, GLMClassifier, GLMRegressor,
                            PathSpecificEffects, crossfit_gmf, gmf_estimate, gmf_weights, make_learners, plot_effects,
                            pse_effects, pse_explorer, _segments)
from trustml_nb.pse_simulator import (WORLDS, binary_sfm_nuisances, binary_sfm_propensity_z, binary_sfm_truth,
                                      continuous_sfm_coefficients, population_truth, sim_binary_sfm, sim_continuous_sfm,
                                      sim_oximetry)

TRUTH_B = binary_sfm_truth()
A_VDE, A_NE = (1, 0, 1), (0, 0, 1)


def _oracle(sim, a=A_VDE):
    nu = binary_sfm_nuisances(sim.data, a)
    return [nu['e1'], nu['e2'], nu['e3']], [nu['mu1'], nu['mu2'], nu['mu3']]


def _fit(sim, y='vented', **kw):
    R = sim.roles
    kw.setdefault('learners', 'glm')
    return pse_effects(sim.data, R['x'], R['z'], R['w'], R['v'], y, **kw)


# ---------------------------------------------------------------- generators and ground truth

def test_binary_generator_exact_truth_and_overlap():
    ez = binary_sfm_propensity_z()
    assert abs(ez[0] - 0.2329) < 2e-4 and abs(ez[1] - 0.9377) < 2e-4
    for k, want in {'psi(1,0,1)': 0.5809, 'VDE': -0.1249, 'TE': 0.2398, 'NDE': 0.2725, 'NIE': -0.0326, 'TV': 0.0757}.items():
        assert abs(TRUTH_B[k] - want) < 1e-3, k
    assert abs(TRUTH_B['psi(1,0,1)'] - 0.58106) < 1e-4


def test_binary_generator_sample_truth_matches_closed_form_and_gformula():
    s = sim_binary_sfm(400_000, seed=3)
    t = s.truth_for()
    for k in WORLDS: assert abs(t[k] - TRUTH_B[k]) < 3e-3, k
    # identification: the g-formula (3) with empirical frequencies equals the counterfactual truth
    d = s.data
    pz = d.z.value_counts(normalize=True)
    pw = d[d.x == 1].groupby('z').w.mean()                                   # P(W=1 | x1, z)
    pv = d[d.x == 0].groupby(['w', 'z']).v.mean()                            # P(V=1 | x0, w, z)
    my = d[d.x == 1].groupby(['w', 'v', 'z']).y.mean()                       # E[Y | x1, w, v, z]
    g = sum(pz[z] * sum((pw[z] if w else 1 - pw[z]) * sum((pv[(w, z)] if v else 1 - pv[(w, z)]) * my[(w, v, z)]
                                                          for v in (0, 1)) for w in (0, 1)) for z in (0, 1))
    assert abs(g - TRUTH_B['psi(1,0,1)']) < 0.004


def test_continuous_generator_coefficients_and_truth():
    assert abs(continuous_sfm_coefficients()['y'][0, 0] - (-2.649)) < 5e-4
    t = sim_continuous_sfm(300_000, seed=5).truth_for()
    for k, want in {'E[Y_x0]': 0.6377, 'E[Y_x1]': 0.1730, 'psi(1,0,1)': 0.3356, 'VDE': -0.1626, 'NDE': -0.1565}.items():
        assert abs(t[k] - want) < 0.004, k


def test_oximetry_calibration():
    s = sim_oximetry(300_000, seed=9)
    t, d = s.truth_for('vented'), s.data
    assert abs(d.race.mean() - 0.169) < 0.004 and abs(d.vented.mean() - 0.378) < 0.004
    assert abs(t['VDE'] + 0.039) < 0.004 and abs(t['psi(1,0,1)'] - 0.461) < 0.004
    assert abs(d.discrepancy[d.race == 1].mean() - 1.69) < 0.05 and abs(d.discrepancy[d.race == 0].mean() - 0.31) < 0.05


@pytest.mark.parametrize('kw', [dict(device_bias=0.0), dict(reliance=0.0), dict(device_bias=0.0, nonlinear=1.0, n_noise_w=3)])
def test_oximetry_exact_nulls(kw):
    s = sim_oximetry(3_000, seed=1, **kw)
    assert (s.truth.loc['VDE'] == 0).all()
    cf = s.counterfactuals['vented']
    np.testing.assert_array_equal(cf['E[Y_x1]'], cf['psi(1,0,1)'])        # unit by unit, not just on average


def test_simulators_reproducible_and_validate():
    a, b = sim_oximetry(500, seed=4), sim_oximetry(500, seed=4)
    pd.testing.assert_frame_equal(a.data, b.data)
    with pytest.raises(ValueError, match=r'overlap must be in \(0, 1\]'): sim_oximetry(100, overlap=0)
    with pytest.raises(TypeError, match='n must be an integer'): sim_oximetry(100.5)
    with pytest.raises(ValueError, match='binary generator takes no settings'): population_truth('binary', device_bias=1)


# ---------------------------------------------------------------- oracle nuisances on the binary generator

def test_oracle_point_estimate_and_weight_means():
    s = sim_binary_sfm(20_000, seed=0)
    props, mus = _oracle(s)
    r = gmf_estimate(s.data.x, s.data.y, props, mus, A_VDE)
    assert isinstance(r, FunctionalEstimate) and r.estimator == 'DR' and r.target == A_VDE
    assert abs(r.estimate - TRUTH_B['psi(1,0,1)']) <= 3 * r.se
    assert 0.0065 < r.se < 0.0095                                        # brief: ~0.008
    W = r.weights
    assert np.all(np.abs(W.mean(0) - 1) <= 3 * W.std(0) / np.sqrt(len(W)))
    # the VDE from oracle nuisances: psi_x1 (AIPW) minus psi(1,0,1)
    p1, m1 = _oracle(s, (1, 1, 1))
    e1 = gmf_estimate(s.data.x, s.data.y, p1, m1, (1, 1, 1))
    vde, se = e1.estimate - r.estimate, (e1.influence - r.influence).std() / np.sqrt(len(W))
    assert abs(vde - TRUTH_B['VDE']) <= 3 * se


def _replicates(n, reps, seed, fn):
    rng = np.random.default_rng(seed)
    return np.array([fn(sim_binary_sfm(n, seed=rng)) for _ in range(reps)])


def test_oracle_se_matches_replicate_sd_and_coverage():
    def one(s):
        props, mus = _oracle(s)
        r = gmf_estimate(s.data.x, s.data.y, props, mus, A_VDE)
        return r.estimate, r.se
    out = _replicates(5_000, 150, 1, one)
    sd, se = out[:, 0].std(ddof=1), out[:, 1].mean()
    assert abs(se / sd - 1) < 0.2
    cover = np.mean(np.abs(out[:, 0] - TRUTH_B['psi(1,0,1)']) <= 1.96 * out[:, 1])
    assert 0.88 <= cover <= 1.0


def test_double_robustness_with_oracle_nuisances():
    truth = TRUTH_B['psi(1,0,1)']
    def one(s):
        props, mus = _oracle(s)
        x, y = s.data.x.to_numpy(), s.data.y.to_numpy()
        ce, cm = [np.full(len(x), x.mean())] * 3, [np.full(len(x), y.mean())] * 3
        return [gmf_estimate(x, y, p, m, A_VDE).estimate - truth for p, m in ((ce, mus), (props, cm), (ce, cm))]
    err = _replicates(20_000, 200, 2, one)
    mean, mcse = err.mean(0), err.std(0, ddof=1) / np.sqrt(len(err))
    assert abs(mean[0]) < 3 * mcse[0], 'wrong propensities, exact regressions: must be unbiased'
    assert abs(mean[1]) < 3 * mcse[1], 'exact propensities, wrong regressions: must be unbiased'
    assert abs(mean[2]) > 10 * mcse[2] and abs(mean[2]) > 0.1, 'both wrong: must be biased'


def test_sn_close_to_dr_and_difference_shrinks():
    def diff(s):
        props, mus = _oracle(s)
        x, y = s.data.x, s.data.y
        return abs(gmf_estimate(x, y, props, mus, A_VDE, normalize=True).estimate - gmf_estimate(x, y, props, mus, A_VDE).estimate)
    small, large = np.median(_replicates(1_000, 60, 3, diff)), np.median(_replicates(32_000, 20, 4, diff))
    assert large < small
    assert np.mean(_replicates(20_000, 20, 5, diff)) < 1e-3


def test_sn_is_more_stable_than_dr_with_noisy_weights():
    "Noisy, heavy-tailed propensities (an over-fitted model): the SN replicate variance is no larger than DR's."
    def one(s):
        props, mus = _oracle(s)
        rng = np.random.default_rng(len(s.data) + int(s.data.y.sum()))
        noisy = [np.clip(p * np.exp(rng.normal(0, 0.6, len(p))), 1e-3, 1 - 1e-3) for p in props]
        x, y = s.data.x, s.data.y
        return [gmf_estimate(x, y, noisy, mus, A_VDE, normalize=nm).estimate for nm in (False, True)]
    est = _replicates(2_000, 80, 6, one)
    assert est[:, 1].var() <= est[:, 0].var()


# ---------------------------------------------------------------- algebraic reductions

def test_general_weights_equal_propensity_forms():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 500); e1, e2, e3 = rng.uniform(0.05, 0.95, (3, 500))
    W = gmf_weights(x, [e1, e2, e3], A_VDE)
    np.testing.assert_allclose(W[:, 1], (x == 0) * e2 / ((1 - e2) * e1), rtol=1e-12)
    np.testing.assert_allclose(W[:, 2], (x == 1) * (1 - e3) * e2 / (e3 * (1 - e2) * e1), rtol=1e-12)
    Wn = gmf_weights(x, [e1, e2, e3], A_NE)
    np.testing.assert_allclose(Wn[:, 2], (x == 1) * (1 - e3) / (e3 * (1 - e1)), rtol=1e-12)
    np.testing.assert_allclose(Wn[:, 0], (x == 0) / (1 - e1), rtol=1e-12)
    np.testing.assert_allclose(Wn[:, 1], Wn[:, 0], rtol=1e-12)


@pytest.mark.parametrize('xval', [0, 1])
def test_gmf_xxx_is_aipw(xval):
    rng = np.random.default_rng(xval)
    n = 2_000
    x, y = rng.integers(0, 2, n), rng.normal(size=n)
    props = list(rng.uniform(0.1, 0.9, (3, n)))
    m, j2, j3 = rng.normal(size=(3, n))
    g = gmf_estimate(x, y, props, [m, j2, j3], (xval,) * 3)
    w = (x == xval) / (props[0] if xval else 1 - props[0])
    assert abs(g.estimate - np.mean(w * (y - m) + m)) < 1e-10
    for nm in (False, True):  # SN equals the Hajek-normalised AIPW
        gs = gmf_estimate(x, y, props, [m, j2, j3], (xval,) * 3, normalize=nm).estimate
        want = np.mean(w * (y - m)) / (w.mean() if nm else 1) + m.mean()
        assert abs(gs - want) < 1e-10


def test_gmf_001_is_tchetgen_shpitser():
    rng = np.random.default_rng(7)
    n = 2_000
    x, y = rng.integers(0, 2, n), rng.normal(size=n)
    e1, e2, e3 = rng.uniform(0.1, 0.9, (3, n))
    m1, m2, m3 = rng.normal(size=(3, n))
    g = gmf_estimate(x, y, [e1, e2, e3], [m1, m2, m3], A_NE).estimate
    ts = np.mean(x * (1 - e3) / (e3 * (1 - e1)) * (y - m3) + (1 - x) / (1 - e1) * (m3 - m1) + m1)
    assert abs(g - ts) < 1e-10


def test_segments_collapse_equal_stages():
    assert _segments((1, 0, 1)) == [(1, 0, 1), (0, 1, 2), (1, 2, 3)]
    assert _segments((0, 0, 1)) == [(0, 0, 2), (1, 2, 3)]
    assert _segments((1, 1, 1)) == [(1, 0, 3)]


def test_effect_identities_exact_and_deterministic():
    s = sim_oximetry(3_000, seed=8)
    r1, r2 = _fit(s, estimators=('DR', 'SN', 'weighting', 'regression')), _fit(s, estimators=('DR', 'SN', 'weighting', 'regression'))
    pd.testing.assert_frame_equal(r1.to_frame(), r2.to_frame())             # same seed, same result
    t = r1.to_frame()
    for est in ('DR', 'SN', 'weighting', 'regression'):
        e = t[t.estimator == est].set_index('effect').estimate
        assert abs(e['NDE'] + e['NIE'] - e['TE']) < 1e-12
        f = r1.functionals[r1.functionals.estimator == est].set_index('functional').estimate
        assert abs((e['NIE'] - e['VDE']) - (f['psi(1,0,1)'] - f['psi(0,0,1)'])) < 1e-12
    dr = t[t.estimator == 'DR'].set_index('effect')
    np.testing.assert_allclose(dr.ci_high - dr.ci_low, 2 * 1.959963984540054 * dr.se, rtol=1e-12)


# ---------------------------------------------------------------- cross-fitted estimator

def test_crossfit_binary_generator_recovers_truth():
    s = sim_binary_sfm(20_000, seed=10)
    d = s.data
    cf = crossfit_gmf(d.x, d.y, [d[['z']].to_numpy(), d[['w']].to_numpy(), d[['v']].to_numpy()], [A_VDE, (1, 1, 1)],
                      learners='hgb', seed=1)
    nu = binary_sfm_nuisances(d)
    assert isinstance(cf, CrossFitNuisances) and cf.folds.max() == 4
    assert np.abs(cf.propensities[2] - nu['e3']).mean() < 0.02
    r = gmf_estimate(d.x, d.y, cf.propensities, cf.regressions[A_VDE], A_VDE)
    assert abs(r.estimate - TRUTH_B['psi(1,0,1)']) < 3.5 * r.se


def test_pse_effects_binary_generator_against_exact_truth():
    s = sim_binary_sfm(10_000, seed=11)
    with pytest.warns(NumericalWarning, match='positivity is weak'):       # e(w, v, z) > 0.99 in some cells: true
        r = pse_effects(s.data, 'x', ['z'], ['w'], ['v'], 'y', learners='hgb', truth=TRUTH_B)
    t = r.to_frame()
    for _, row in t[t.effect.isin(['TE', 'NDE', 'NIE', 'VDE'])].iterrows():
        assert abs(row.estimate - row.truth) < 3.5 * row.se, row.to_dict()


def test_double_robustness_through_the_estimator():
    "Learned propensities + constant regressions (or the reverse) stay near the truth; constant both is biased."
    s = sim_oximetry(20_000, seed=13)
    truth = population_truth('oximetry', n=500_000, seed=1)['vented'].to_dict()
    const = {'propensity': DummyClassifier(strategy='prior')}
    from sklearn.dummy import DummyRegressor
    cases = {'wrong_p': {**const, 'outcome': 'glm', 'pseudo': 'glm'},
             'wrong_mu': {'propensity': 'glm', 'outcome': DummyClassifier(strategy='prior'), 'pseudo': DummyRegressor()},
             'both': {**const, 'outcome': DummyClassifier(strategy='prior'), 'pseudo': DummyRegressor()}}
    out = {k: _fit(s, learners=L, truth=truth, star=False, warn=False).to_frame().query("estimator == 'DR'").set_index('effect')
           for k, L in cases.items()}
    for k in ('wrong_p', 'wrong_mu'):
        for eff in ('TE', 'VDE'):
            assert abs(out[k].estimate[eff] - truth[eff]) < 3.5 * out[k].se[eff], (k, eff)
    assert abs(out['both'].estimate['VDE'] - truth['VDE']) > 0.02       # the naive contrast of constants: VDE = 0


def test_continuous_outcome_and_single_mediator_block():
    s = sim_oximetry(8_000, seed=14)
    truth = s.truth_for('duration')
    r = _fit(s, 'duration', truth=truth)
    assert r.outcome_kind == 'continuous'
    vde = r.to_frame().query("estimator == 'DR' and effect == 'VDE'").iloc[0]
    assert vde.ci_low - vde.se < truth['VDE'] < vde.ci_high + vde.se
    R = s.roles
    one = pse_effects(s.data, R['x'], R['z'], [], R['v'], 'vented', learners='glm').to_frame()
    assert set(one.effect) == {'TE', 'NDE', 'NIE', 'TV'}
    e = one[one.estimator == 'DR'].set_index('effect').estimate
    assert abs(e['NDE'] + e['NIE'] - e['TE']) < 1e-12


def test_continuous_generator_estimates_and_flags_its_poor_overlap():
    "The paper's continuous SCM: race is nearly determined by W, so most propensities are clipped; the warning says so."
    s = sim_continuous_sfm(10_000, seed=3)
    R = s.roles
    truth = {'TE': -0.4647, 'VDE': -0.1626}
    with pytest.warns(NumericalWarning, match=r'of the propensities P\(X=1 \| Z, W\) fell outside'):
        r = pse_effects(s.data, R['x'], R['z'], R['w'], R['v'], 'y', learners='glm', truth=truth)
    t = r.to_frame().query("estimator == 'DR'").set_index('effect')
    for eff in ('TE', 'VDE'): assert abs(t.estimate[eff] - truth[eff]) < 3.5 * t.se[eff], eff


def test_null_device_vde_interval_covers_zero():
    s = sim_oximetry(10_000, seed=15, device_bias=0.0)
    t = _fit(s, truth=s.truth_for('vented')).to_frame().query("estimator == 'DR'").set_index('effect')
    assert t.truth['VDE'] == 0 and t.ci_low['VDE'] < 0 < t.ci_high['VDE']
    assert t.ci_low['NIE*'] > 0                                              # NIE* is not the V-effect


def test_diagnostics_and_positivity_warning():
    s = sim_oximetry(5_000, seed=16)
    r = _fit(s)
    assert {'functional', 'stage', 'weight_mean', 'weight_max', 'ess', 'eligible'} <= set(r.weight_diagnostics.columns)
    assert np.all(np.abs(r.weight_diagnostics.weight_mean - 1) < 0.1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always', NumericalWarning)
        r_lo = _fit(sim_oximetry(4_000, seed=2, overlap=0.05))
    msg = [str(x.message) for x in w if x.category is NumericalWarning]
    assert msg and 'positivity is weak' in msg[0] and 'P(X=1 | Z)' in msg[0]
    assert any('positivity' in n for n in r_lo.notes)


# ---------------------------------------------------------------- bad inputs

@pytest.fixture(scope='module')
def oxi():
    return sim_oximetry(2_000, seed=0)


def test_bad_inputs(oxi):
    d, R = oxi.data, oxi.roles
    args = lambda **kw: {**dict(data=d, x='race', z=R['z'], w=R['w'], v=R['v'], y='vented', learners='glm'), **kw}
    cases = [
        (ValueError, "x column 'cci' must contain only 0 and 1", args(x='cci', z=['age', 'sex'])),
        (ValueError, r"data is missing column\(s\) \['lactate'\]", args(w=['lactate'])),
        (ValueError, "column 'spo2' contains 1 missing value", args(data=d.assign(spo2=d.spo2.where(d.index != 5)))),
        (ValueError, "column 'sex' is constant", args(data=d.assign(sex=0))),
        (ValueError, "x column 'race' is constant", args(data=d.assign(race=1))),
        (ValueError, r"column\(s\) \['age'\] appear in more than one role", args(w=['age'])),
        (TypeError, 'z must be a list of column names', args(z='age')),
        (TypeError, 'data must be a pandas DataFrame', args(data=d.to_numpy())),
        (TypeError, "column 'race' must be numeric", args(data=d.assign(race=np.where(d.race == 1, 'Black', 'White')))),
        (ValueError, 'has only .* row', args(data=d.iloc[:400], min_group_rows=30, nested='split')),
        (ValueError, 'too few for n_folds', args(data=d.iloc[:90])),
        (ValueError, "estimators must be one of", args(estimators=('TMLE',))),
        (ValueError, r'clip must be in \[0, 0.5\)', args(clip=0.5)),
        (ValueError, 'learners must be one of', args(learners='xgboost')),
        (TypeError, "learners\\['outcome'\\] is a classifier but the outcome is continuous", args(y='duration', learners={'outcome': LogisticRegression()})),
        (TypeError, "learners\\['propensity'\\] must be a classifier", args(learners={'propensity': LinearRegression()})),
    ]
    for exc, msg, kw in cases:
        with pytest.raises(exc, match=msg): pse_effects(**kw)


def test_low_level_errors():
    with pytest.raises(ValueError, match='props must hold 3 propensities'): gmf_weights([0, 1], [[0.5, 0.5]], (1, 0, 1))
    with pytest.raises(ValueError, match=r'mus must have shape \(2, 3\)'): gmf_estimate([0, 1], [0, 1], [[.5, .5]] * 3, np.zeros((2, 2)), (1, 0, 1))
    with pytest.raises(ValueError, match='unknown role'): make_learners({'treatment': 'glm'})


# ---------------------------------------------------------------- widget

def test_explorer_renders_and_responds():
    ex = pse_explorer(n=2_000)
    assert ex.error is None and isinstance(ex.report, EffectsReport) and ex.report.n_rows == 2_000
    first = list(ex.controls)[0]
    assert first == 'device_bias' and type(ex.controls[first]).__name__ == 'FloatSlider'
    before = ex.report
    ex.controls['device_bias'].value = 2.0
    assert ex.report is before and ex.n_renders == 1                        # stale until Run
    ex.on_run()
    assert ex.report is not before and ex.n_renders == 2
    assert ex.report.effect('VDE').truth < -0.04 < before.effect('VDE').truth


# ---------------------------------------------------------------- slow studies

@pytest.mark.slow
def test_coverage_oximetry_glm():
    res = PathSpecificEffects(learners='glm', seed=2026).coverage_study(n_reps=200, n=5_000)
    assert isinstance(res, CoverageReport) and res.vde_coverage_dr == res.table.query("effect == 'VDE' and estimator == 'DR'").coverage.iloc[0]
    t = res.to_frame().set_index(['effect', 'estimator'])
    assert 0.92 <= t.coverage[('VDE', 'DR')] <= 0.98
    assert 0.90 <= t.coverage[('VDE', 'SN')] <= 0.98


@pytest.mark.slow
def test_null_vde_coverage():
    res = PathSpecificEffects(learners='glm', seed=7).coverage_study(n_reps=100, n=4_000, device_bias=0.0)
    t = res.to_frame().set_index(['effect', 'estimator'])
    assert t.truth[('VDE', 'DR')] == 0 and 0.88 <= t.coverage[('VDE', 'DR')] <= 1.0


# ---------------------------------------------------------------- properties (hypothesis)

from hypothesis import given, settings, strategies as st


@settings(max_examples=40, deadline=None)
@given(a=st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 1)), seed=st.integers(0, 10_000))
def test_weights_positive_only_on_their_group_and_sn_identity(a, seed):
    rng = np.random.default_rng(seed)
    n = 300
    x, y = rng.integers(0, 2, n), rng.normal(size=n)
    props = list(rng.uniform(0.05, 0.95, (3, n)))
    mus = rng.normal(size=(n, 3))
    W = gmf_weights(x, props, a)
    for k in range(3):
        assert np.all(W[x != a[k], k] == 0) and np.all(W[x == a[k], k] > 0)
    dr = gmf_estimate(x, y, props, mus, a)
    sn = gmf_estimate(x, y, props, mus, a, normalize=True)
    # SN - DR = sum_k (1/S_k - 1) P_n[pi_k r_k]  (brief, section 5.2), exactly
    R = np.column_stack([mus[:, 1:], y]) - mus
    S = W.mean(0)
    assert abs((sn.estimate - dr.estimate) - np.sum((1 / S - 1) * (W * R).mean(0))) < 1e-9
    assert abs(dr.influence.mean()) < 1e-12 and abs(sn.influence.mean()) < 1e-9


def test_split_rerun_interval_is_a_labelled_artefact_narrower_than_the_ci():
    s = sim_oximetry(3_000, seed=17)
    R = s.roles
    est = PathSpecificEffects(x=R['x'], z=R['z'], w=R['w'], v=R['v'], y='vented', learners='glm')
    sr = est.split_rerun_interval(s.data, n_reruns=5, effects=('VDE',))
    row = sr.iloc[0]
    assert row.split_rerun_low <= row['mean'] <= row.split_rerun_high
    assert row.width_ratio_split_over_eif < 0.5
    with pytest.raises(ValueError, match='n_reruns must be in'): est.split_rerun_interval(s.data, n_reruns=1)


# ---------------------------------------------------------------- the one API (issue 12): estimator, reports, GLM route

def test_estimator_contract_and_typed_report():
    s = sim_oximetry(1_500, seed=20)
    R = s.roles
    est = PathSpecificEffects(x=R['x'], z=R['z'], w=R['w'], v=R['v'], y='vented', learners='glm', warn=False)
    check_estimator_contract(est, fit=lambda e: e.fit(s.data, s.truth_for('vented')), output=lambda e: e.report_.table)
    rep = est.report_
    assert isinstance(rep, EffectsReport) and (rep.exposure, rep.outcome, rep.n_rows, rep.outcome_kind) == ('race', 'vented', 1_500, 'binary')
    assert rep.n_exposed == int(s.data.race.sum()) and rep.estimators == ('DR', 'SN') and rep.learners == 'glm'
    assert rep.v_specific_effect == rep.effect('VDE').estimate and rep.total_effect == rep.effect('TE').estimate
    assert rep.effect('VDE', 'SN').estimator == 'SN' and rep.effect('VDE').truth == s.truth_for('vented')['VDE']
    assert set(rep.estimates) == {'E[Y_x1]', 'E[Y_x0]', 'psi(0,0,1)', 'psi(1,0,1)', 'psi*(0,1)'}
    f = rep.estimates['psi(1,0,1)']['DR']
    assert isinstance(f, FunctionalEstimate) and f.target == (1, 0, 1) and f.weights.shape == (1_500, 3)
    assert rep.functionals.set_index(['functional', 'estimator']).estimate[('psi(1,0,1)', 'DR')] == f.estimate
    assert isinstance(rep.nuisances, CrossFitNuisances) and set(rep.nuisances.regressions) == {(1, 1, 1), (0, 0, 0), (0, 0, 1), (1, 0, 1)}
    assert len(rep.star_nuisances.propensities) == 2 and any('NIE*' in n for n in rep.notes)
    assert est.roles_['z'] == R['z'] and type(est.learners_['propensity']).__name__ == 'GLMClassifier'
    for sub in (rep.nuisances, f): check_report(sub)                        # the nested reports are typed and documented too
    # the function form is a thin wrapper: the same table
    pd.testing.assert_frame_equal(pse_effects(s.data, R['x'], R['z'], R['w'], R['v'], 'vented', truth=s.truth_for('vented'),
                                              learners='glm', warn=False).table, rep.table)
    # settings are validated in fit, so set_params cannot slip a bad value past the constructor
    with pytest.raises(ValueError, match=r'n_folds must be in \[2, 50\], got 1'): est.set_params(n_folds=1).fit(s.data)


def test_glm_wrappers_pass_sklearn_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator
    for est in (GLMClassifier(), GLMRegressor()):
        check_estimator(est)


def test_glm_classifier_is_unpenalised_logistic_regression_and_ignores_collinear_columns():
    from statsmodels.tools.sm_exceptions import SingularMatrixWarning
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3_000, 4)) * [1, 10, 1e6, 1e-3]                   # wildly different scales
    y = (X @ [1, 0.1, 1e-6, 300] + rng.logistic(size=3_000) > 0).astype(int)
    p = GLMClassifier().fit(X, y).predict_proba(X)[:, 1]
    Xs = (X - X.mean(0)) / X.std(0)                                         # unpenalised: predictions do not depend on the scale
    q = LogisticRegression(C=np.inf, solver='newton-cholesky', tol=1e-10).fit(Xs, y).predict_proba(Xs)[:, 1]
    assert np.abs(p - q).max() < 1e-8
    Xc = np.column_stack([X, X[:, 0] - 2 * X[:, 3]])                         # like SpO2, SaO2 and their difference
    with warnings.catch_warnings():
        warnings.simplefilter('error', SingularMatrixWarning)
        pc = GLMClassifier().fit(Xc, y).predict_proba(Xc)[:, 1]
        r = GLMRegressor().fit(Xc, X[:, 0] + rng.normal(size=3_000))
    assert np.abs(pc - p).max() < 1e-8 and np.isfinite(r.coef_).all()
    np.testing.assert_allclose(GLMRegressor().fit(X, X @ [1, 2, 3e-6, 4] + 5).predict(X), X @ [1, 2, 3e-6, 4] + 5, rtol=1e-9)


def test_glm_route_matches_the_old_sklearn_route_within_noise():
    "The old 'glm' preset (L2-penalised LogisticRegression on standardised inputs, LinearRegression) vs statsmodels GLMs."
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    s = sim_oximetry(4_000, seed=30)
    old = {'propensity': make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
           'outcome': make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
           'pseudo': make_pipeline(StandardScaler(), LinearRegression())}
    a = _fit(s, star=False, warn=False).table
    b = _fit(s, learners=old, star=False, warn=False).table
    assert ((a.estimate - b.estimate).abs() < 0.1 * a.se).all()            # measured: at most 0.04 SE


def test_issue12_findings_now_clear_errors(oxi):
    d, R = oxi.data, oxi.roles
    kw = dict(x='race', z=R['z'], w=R['w'], v=R['v'], y='vented', learners='glm')
    with pytest.raises(ValueError, match=r"data has duplicate column name\(s\) \['age'\]"):   # was a pandas error deep inside
        pse_effects(pd.concat([d, d[['age']]], axis=1), **kw)
    with pytest.raises(ValueError, match="column 'cci' has values as large as"):              # was sklearn's "contains NaN"
        pse_effects(d.assign(cci=d.cci * 1e200), **kw)
    with pytest.raises(ValueError, match=r"seed must be in \[0, 4294967294\], got -1"):       # was sklearn's KFold error
        pse_effects(d, **kw, seed=-1)
    with pytest.raises(ValueError, match=r"learners\['outcome'\] must be one of 'hgb', 'glm'"):
        pse_effects(d, **{**kw, 'learners': {'outcome': 'xgboost'}})
    with pytest.raises(ValueError, match=r"estimators lists \['DR'\] more than once"):        # was a table with duplicate rows
        pse_effects(d, **kw, estimators=('DR', 'DR'))
    with pytest.raises(ValueError, match=r"truth has unknown key\(s\) \['vde'\]"):             # was silently no truth
        pse_effects(d, **kw, truth={'vde': -0.04})
    # boosting on outcomes near 1e50 went wrong silently (float32 gradients): the outcome's scale is now checked
    with pytest.raises(ValueError, match="column 'duration' has values as large as"):
        pse_effects(d.assign(duration=d.duration * 1e50), **{**kw, 'y': 'duration', 'learners': 'hgb'})
    # propensities of exactly 0 gave infinite weights and a NaN estimate
    with pytest.raises(ValueError, match=r'props\[0\] contains propensities of exactly 0 or 1'):
        gmf_weights([0, 1, 1], [[0.0, 0.5, 0.5], [0.5] * 3, [0.5] * 3], (1, 0, 1))


def test_plot_effects_takes_the_report():
    s = sim_oximetry(1_000, seed=21)
    rep = _fit(s, 'duration', star=False, warn=False)
    ax = plot_effects(rep, estimators=('DR',), title='t')
    assert ax.get_xlabel() == 'effect on duration' and [t.get_text() for t in ax.get_yticklabels()] == ['TE', 'NDE', 'NIE', 'VDE', 'TV']
    with pytest.raises(TypeError, match='report must be an EffectsReport'): plot_effects(rep.table)


def test_coverage_study_returns_a_typed_report():
    cov = PathSpecificEffects(learners='glm', n_folds=2, seed=3).coverage_study(n_reps=2, n=800, truth_n=20_000, device_bias=0.0)
    check_report(cov)
    assert isinstance(cov, CoverageReport) and (cov.n_reps, cov.n_rows, cov.outcome, cov.learners) == (2, 800, 'vented', 'glm')
    assert cov.truth['VDE'] == 0.0 and set(cov.draws.rep) == {0, 1} and (cov.table.n_reps == 2).all()
    assert cov.vde_coverage_dr == cov.table.set_index(['effect', 'estimator']).coverage[('VDE', 'DR')]


def test_coverage_is_nan_for_estimators_without_an_interval():
    cov = PathSpecificEffects(learners='glm', n_folds=2, seed=3, estimators=('DR', 'weighting')).coverage_study(
        n_reps=2, n=800, truth_n=20_000, device_bias=0.0)
    by = cov.table.set_index(['effect', 'estimator']).coverage
    # no standard error, so no interval: NaN, not 'never covers' (TV, a plain difference in means, has one for every estimator)
    assert by.xs('weighting', level='estimator').drop('TV').isna().all()
    assert by.xs('DR', level='estimator').between(0, 1).all()


def test_weight_diagnostics_name_the_group_each_stage_weights_without_w():
    sim = sim_oximetry(3_000, seed=4); R = sim.roles
    rep = PathSpecificEffects(x=R['x'], z=R['z'], w=[], v=R['v'], y='vented', learners='glm', warn=False).fit(sim.data).report_
    d = rep.weight_diagnostics.set_index(['functional', 'stage'])
    # psi(0,1) with one mediator block: stage 1 weights X=0 units (a_V = 0), stage 2 X=1 units (a_Y = 1)
    x = sim.data[R['x']].to_numpy()
    assert d.loc[('psi(0,0,1)', 1), 'a_k'] == 0 and d.loc[('psi(0,0,1)', 2), 'a_k'] == 1
    assert d.loc[('psi(0,0,1)', 2), 'eligible'] == int((x == 1).sum())


def test_glm_that_stops_before_converging_warns():
    X = np.random.default_rng(0).normal(size=(200, 3)); y = (X[:, 0] + np.random.default_rng(1).normal(size=200) > 0).astype(int)
    with pytest.warns(NumericalWarning, match='did not converge'): m = GLMClassifier(max_iter=1).fit(X, y)
    assert not m.converged_
    with warnings.catch_warnings():
        warnings.simplefilter('error', NumericalWarning)
        assert GLMClassifier().fit(X, y).converged_


def test_boolean_propensities_are_refused():
    x = np.array([0, 1, 0, 1])
    with pytest.raises(TypeError, match=r'props\[0\].*booleans'): gmf_weights(x, [x.astype(bool)] * 3, (1, 0, 1), clip=0.01)
