"""Tests for trustml_nb.multicalibration.

Metrics against brute-force loops, intersecting groups against direct masks, then the method on synthetic data with
known probabilities (noise floor, depth 1 vs 2, loss saturation), the MCBoost-style baseline, Adult targets, the
explorer, and bad inputs.
"""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from trustml_nb.multicalibration import (adult_mc_data, check_groups, fit_multicalibration, intersecting_groups,
                                         make_mc_synthetic, mc_error, mc_explorer, mc_table, mcboost,
                                         multicalibration_study, reliability_table, saturation_check, smooth_ece,
                                         weighted_smooth_ece)


def _mse(y, p): return float(np.mean((y - p) ** 2))


def _mce_brute(y, p, G, n_bins):
    n, worst = len(y), 0.0
    for j in range(G.shape[1]):
        tot = 0.0
        for v in range(n_bins):
            lo, hi = v / n_bins, (v + 1) / n_bins
            inb = (p >= lo) & ((p < hi) if v < n_bins - 1 else (p <= hi))
            cell = (G[:, j] == 1) & inb
            if cell.sum() == 0: continue
            pg = (G[:, j] == 1).mean(); pv = cell.sum() / (G[:, j] == 1).sum()
            tot += pg * pv * abs(np.mean(y[cell] - p[cell]))    # the formula as written in the paper
        worst = max(worst, tot)
    return worst


@pytest.fixture(scope='module')
def synth():
    return make_mc_synthetic(20000, seed=2), make_mc_synthetic(20000, seed=3)


@pytest.fixture(scope='module')
def fitted(synth):
    tr, _ = synth
    return fit_multicalibration(tr['y'], tr['p0'], tr['groups'])


# ---------------------------------------------------------------- metrics and groups
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 200), n_groups=st.integers(1, 4), n_bins=st.integers(1, 12))
def test_mc_error_matches_brute_force(seed, n, n_groups, n_bins):
    rng = np.random.default_rng(seed)
    p = rng.random(n); p[:2] = [0.0, 1.0]
    y = rng.integers(0, 2, n)
    G = (rng.random((n, n_groups)) < 0.6).astype(int); G[0] = 1
    assert mc_error(y, p, G, n_bins) == pytest.approx(_mce_brute(y, p, G, n_bins), abs=1e-12)


def test_mc_table_in_group_error_is_the_groups_ece():
    rng = np.random.default_rng(0); p = rng.random(500); y = rng.integers(0, 2, 500)
    t = mc_table(y, p, np.ones((500, 1)), n_bins=5)
    assert t['ece_in_group'][0] == pytest.approx(t['weighted'][0])   # one group holding everyone: P(g) = 1


def test_intersecting_groups_match_direct_masks():
    rng = np.random.default_rng(1)
    A = pd.DataFrame({'s': rng.choice(['F', 'M'], 300), 'r': rng.choice(['x', 'y', 'z'], 300), 'a': rng.choice(['0', '1'], 300)})
    G = intersecting_groups(A)
    assert G.shape[1] == (2 + 3 + 2) + (6 + 4 + 6) + 12
    m = (A.s == 'F') & (A.r == 'z') & (A.a == '1')
    assert (G['s=F & r=z & a=1'].to_numpy() == m.to_numpy()).all()
    assert (G['r=y'].to_numpy() == (A.r == 'y').to_numpy()).all()
    small = intersecting_groups(A, min_size=40)
    assert (small.sum(axis=0) >= 40).all() and set(small.columns) <= set(G.columns)
    assert intersecting_groups(A, max_order=1).shape[1] == 7


def test_smooth_ece_known_values():
    rng = np.random.default_rng(0); p = rng.uniform(0.2, 0.8, 20000); y = rng.binomial(1, p)
    assert smooth_ece(y, p) < 0.02
    assert smooth_ece(y, np.clip(p - 0.1, 0, 1)) == pytest.approx(0.1, abs=0.02)
    G = np.ones((len(y), 1))
    assert weighted_smooth_ece(y, p, G) == pytest.approx(smooth_ece(y, p))


# ---------------------------------------------------------------- the method on data with known truth
def test_mc_error_falls_to_the_noise_floor(synth, fitted):
    tr, te = synth
    f = fitted.predict(te['p0'], te['groups'])
    floor = mc_error(te['y'], te['p_true'], te['groups'])
    base = mc_error(te['y'], te['p0'], te['groups'])
    ours = mc_error(te['y'], f, te['groups'])
    assert base > 8 * floor                       # the base model is clearly miscalibrated
    assert ours < 1.6 * floor + 0.003             # ours sits at the noise floor of the truth
    assert np.abs(f - te['p_true']).mean() < 0.02  # and close to the true probabilities themselves
    assert _mse(te['y'], f) < _mse(te['y'], te['p_true']) + 0.001


def test_depth_one_cannot_fix_group_by_level_set_error_depth_two_can(synth, fitted):
    tr, te = synth
    # only the group x level-set error: no intersection offset
    tr1, te1 = make_mc_synthetic(20000, gamma=0.0, seed=5), make_mc_synthetic(20000, gamma=0.0, seed=6)
    errs = {}
    for depth in (1, 2):
        m = fit_multicalibration(tr1['y'], tr1['p0'], tr1['groups'], max_depth=depth)
        errs[depth] = np.abs(m.predict(te1['p0'], te1['groups']) - te1['p_true']).mean()
    print(errs)
    assert errs[2] < 0.025 and errs[1] > 0.05 and errs[1] > 3 * errs[2]   # depth 1 is stuck near delta/2 = 0.075 off the truth


def test_loss_saturation_after_fit_and_not_before(synth, fitted):
    tr, _ = synth
    sat = saturation_check(fitted, tr['y'], tr['p0'], tr['groups'])
    assert 0 <= sat['relative_drop'] < 5e-3
    one_step = fit_multicalibration(tr['y'], tr['p0'], tr['groups'], learning_rates=(0.01,), max_rounds=1)
    assert saturation_check(one_step, tr['y'], tr['p0'], tr['groups'], max_rounds=5000)['relative_drop'] > 0.02


def test_no_discretisation_and_range(synth, fitted):
    _, te = synth
    f = fitted.predict(te['p0'], te['groups'])
    assert 0 <= f.min() and f.max() <= 1
    assert len(np.unique(f)) > 1000               # continuous output, not a grid


def test_same_seed_same_model(synth):
    tr, te = synth
    a = fit_multicalibration(tr['y'][:4000], tr['p0'][:4000], tr['groups'][:4000], learning_rates=(0.3,), seed=3)
    b = fit_multicalibration(tr['y'][:4000], tr['p0'][:4000], tr['groups'][:4000], learning_rates=(0.3,), seed=3)
    assert np.array_equal(a.predict(te['p0'], te['groups']), b.predict(te['p0'], te['groups']))


def test_mcboost_baseline_is_discretised_and_reduces_error(synth, fitted):
    tr, te = synth
    mb = mcboost(tr['y'], tr['p0'], tr['groups'], n_levels=10)
    f_mb = mb.predict(te['p0'], te['groups'])
    assert len(np.unique(f_mb)) <= 10
    assert mc_error(te['y'], f_mb, te['groups']) < 0.5 * mc_error(te['y'], te['p0'], te['groups'])
    assert _mse(te['y'], fitted.predict(te['p0'], te['groups'])) <= _mse(te['y'], f_mb)


def test_reliability_table_counts(synth):
    _, te = synth
    t = reliability_table(te['y'], {'base': te['p0']}, te['groups'][['a=1', 'a=0']], n_bins=5)
    assert t.groupby('group')['count'].sum().sum() == len(te['y'])


# ---------------------------------------------------------------- Adult targets and the widget
@pytest.fixture(scope='module')
def adult():
    return adult_mc_data(seed=0)


def test_adult_targets(adult):
    res = multicalibration_study(adult)
    t = res.table.set_index('model')
    assert t.loc['base', 'mc_error'] >= 5 * t.loc['ERM depth 2', 'mc_error']
    assert t.loc['ERM depth 2', 'mse'] <= t.loc['MCBoost-style', 'mse']
    assert res['saturation_relative_drop'] < 5e-3


def test_explorer_controls():
    ex = mc_explorer(adult_mc_data(seed=1, max_rows=6000))
    assert ex.error is None and 'learning rate 0.1' in ex.result[1]
    assert list(ex.controls)[0] == 'learning_rate'
    ex.controls['learning_rate'].value = 1.0; ex.controls['family'].value = 'sex'; ex.on_run()
    assert ex.error is None and 'learning rate 1, depth 2, sex' in ex.result[1]


# ---------------------------------------------------------------- bad inputs
def test_bad_inputs():
    y = np.array([0, 1, 1, 0]); p = np.array([0.1, 0.6, 0.8, 0.3]); G = np.array([[1, 0], [1, 1], [0, 1], [1, 0]])
    with pytest.raises(ValueError, match='0/1 group indicators'):
        fit_multicalibration(y, p, np.array([[1, 0], [2, 1], [0, 1], [1, 0]]))
    with pytest.raises(ValueError, match=r'p0 must be scores in \[0, 1\]'):
        fit_multicalibration(y, p + 0.5, G)
    with pytest.raises(ValueError, match="needs at least one member; empty: \\['g1'\\]"):
        fit_multicalibration(y, p, np.array([[1, 0], [1, 0], [0, 0], [1, 0]]))
    with pytest.raises(ValueError, match='same number of rows'):
        fit_multicalibration(y[:3], p, G)
    with pytest.raises(ValueError, match='one row per prediction'):
        mc_error(y, p, G[:3])
    with pytest.raises(ValueError, match='only 0 and 1'):
        mc_error(np.array([0, 1, 2, 0]), p, G)
    with pytest.raises(ValueError, match='empty'):
        check_groups(pd.DataFrame({'women': [0, 0], 'men': [1, 1]}))
    with pytest.raises(ValueError, match='max_depth'):
        fit_multicalibration(y, p, G, max_depth=0)
    with pytest.raises(ValueError, match='family must be one of'):
        multicalibration_study({'calib': None, 'test': None}, family='race')


def test_predict_checks_columns(fitted, synth):
    _, te = synth
    with pytest.raises(ValueError, match='columns used in the fit'):
        fitted.predict(te['p0'], te['groups'].iloc[:, :3])
