"""Tests for trustml_nb.multicalibration.

Metrics against brute-force loops, then the method on synthetic data with known probabilities (noise floor, depth 1 vs 2,
loss saturation, group columns matched by name), the MCBoost-style baseline, the estimator contract, Adult targets and
the explorer. The bad-input sweep is in test_bad_input_multicalibration.py.

scikit-learn's `check_estimator` does not apply to `Multicalibrator` or `MCBoost`: both are post-processors whose `X`
is one probability per row and whose `fit` needs the keyword `groups` (check_estimator fits on arbitrary real matrices
without groups). `tests/contract.py::check_estimator_contract` checks the rules that do apply.
"""
import inspect
import sys
import warnings
from dataclasses import asdict, replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone

import trustml_nb.groups
import trustml_nb.multicalibration as mcmod
from contract import check_estimator_contract, check_report
from trustml_nb.core import DroppedRowsWarning, NumericalWarning, SmallGroupWarning, quiet
from trustml_nb.groups import intersect
from trustml_nb.multicalibration import (MCBoost, Multicalibrator, MulticalibrationStudy, adult_mc_task, make_mc_synthetic,
                                         mc_error, mc_explorer, mc_table, multicalibration_study, reliability_table,
                                         smooth_ece, weighted_smooth_ece)


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
    return Multicalibrator().fit(tr['p0'], tr['y'], groups=tr['groups'])


# ---------------------------------------------------------------- metrics
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 200), n_groups=st.integers(1, 4), n_bins=st.integers(1, 12))
def test_mc_error_matches_brute_force(seed, n, n_groups, n_bins):
    rng = np.random.default_rng(seed)
    p = rng.random(n); p[:2] = [0.0, 1.0]
    y = rng.integers(0, 2, n)
    G = (rng.random((n, n_groups)) < 0.6).astype(int); G[0] = 1
    assert mc_error(y, p, G, n_bins) == pytest.approx(_mce_brute(y, p, G, n_bins), abs=1e-12)


def _ece_brute(y, p, n_bins):
    "Binned expected calibration error of one set of rows: sum over bins of (share of rows) x |mean(y - p)|."
    edges = np.linspace(0, 1, n_bins + 1); tot = 0.0
    for v in range(n_bins):
        inb = (p >= edges[v]) & ((p < edges[v + 1]) if v < n_bins - 1 else (p <= 1))
        if inb.any(): tot += inb.mean() * abs(np.mean(y[inb] - p[inb]))
    return tot


def test_mc_table_in_group_error_is_the_groups_ece():
    "Every group's row: its size, share, the ECE of its own rows alone (brute force) and P(g) x that ECE."
    rng = np.random.default_rng(0); n = 600
    p = rng.random(n); y = (rng.random(n) < p ** 1.5).astype(int)
    G = pd.DataFrame({'all': np.ones(n, bool), 'a': rng.random(n) < 0.3, 'b': rng.random(n) < 0.7, 'c': p > 0.8})
    t = mc_table(y, p, G, n_bins=5).set_index('group')
    for c in G.columns:
        m = G[c].to_numpy(); ece = _ece_brute(y[m], p[m], 5)
        assert t.loc[c, 'size'] == m.sum() and t.loc[c, 'share'] == pytest.approx(m.mean(), abs=1e-15)
        assert t.loc[c, 'ece_in_group'] == pytest.approx(ece, abs=1e-12) and t.loc[c, 'weighted'] == pytest.approx(m.mean() * ece, abs=1e-12)


def test_metrics_take_y_true_y_prob_groups():
    for fn in (mc_error, mc_table, weighted_smooth_ece, reliability_table):
        assert list(inspect.signature(fn).parameters)[:3] == ['y_true', 'y_prob', 'groups'], fn.__name__
    assert list(inspect.signature(smooth_ece).parameters)[:2] == ['y_true', 'y_prob']


def test_intersections_of_the_synthetic_groups_match_direct_masks():
    rng = np.random.default_rng(1)
    A = pd.DataFrame({'s': rng.choice(['F', 'M'], 300), 'r': rng.choice(['x', 'y', 'z'], 300), 'a': rng.choice(['0', '1'], 300)})
    G = intersect(A)   # the module's groups come from trustml_nb.groups
    assert G.shape[1] == (2 + 3 + 2) + (6 + 4 + 6) + 12
    m = (A.s == 'F') & (A.r == 'z') & (A.a == '1')
    assert (G['s=F & r=z & a=1'].to_numpy() == m.to_numpy()).all()
    d = make_mc_synthetic(500, seed=0)
    assert (d['groups']['a=1 & c=0'].to_numpy() == ((d['groups']['a=1']) & (d['groups']['c=0'])).to_numpy()).all()
    assert not hasattr(mcmod, 'intersecting_groups') and mcmod.check_groups is trustml_nb.groups.check_groups  # one home for groups


def test_smooth_ece_known_values():
    rng = np.random.default_rng(0); p = rng.uniform(0.2, 0.8, 20000); y = rng.binomial(1, p)
    assert smooth_ece(y, p) < 0.02
    assert smooth_ece(y, np.clip(p - 0.1, 0, 1)) == pytest.approx(0.1, abs=0.02)
    G = np.ones((len(y), 1))
    assert weighted_smooth_ece(y, p, G) == pytest.approx(smooth_ece(y, p))


def _smece_reference(y, p, n_grid=1001):
    "Blasiok-Nakkiran smooth ECE from its definition: exact predictions (no pooling), reflected Gaussian kernel, trapezoid integral, brentq."
    from scipy.optimize import brentq
    t = np.linspace(0, 1, n_grid)[:, None]; r = (y - p)[None, :]
    def excess(s):
        k = sum(np.exp(-0.5 * ((t - q) / s) ** 2) for q in (p[None, :], -p[None, :], 2 - p[None, :])) / (s * np.sqrt(2 * np.pi))
        return np.trapezoid(np.abs((k * r).mean(1)), t[:, 0]) - s
    return brentq(excess, 1e-4, 1.0, xtol=1e-10)


@pytest.mark.parametrize('seed', [0, 1])
def test_smooth_ece_matches_its_definition(seed):
    "Miscalibration near both ends of [0, 1], where the kernel's reflections matter; measured agreement 0.2% (pooling, grid)."
    rng = np.random.default_rng(seed); n = 800
    p = rng.uniform(0, 1, n); y = rng.binomial(1, np.clip(p + 0.15 * np.sin(6 * p) + (0.1 if seed else -0.05), 0, 1))
    assert smooth_ece(y, p) == pytest.approx(_smece_reference(y, p), rel=5e-3)
    G = pd.DataFrame({'all': np.ones(n, bool), 'low': p < 0.3})
    want = np.average([_smece_reference(y[G[c]], p[G[c]]) for c in G.columns], weights=G.sum().to_numpy())
    assert weighted_smooth_ece(y, p, G) == pytest.approx(want, rel=5e-3)


def test_smooth_ece_with_its_mass_next_to_zero():
    "Predictions piled up next to 0, where the kernel's reflection at 0 carries much of the mass (fine grid: measured 0.6% off the definition)."
    rng = np.random.default_rng(0); n = 800
    p = rng.beta(0.6, 12, n); y = rng.binomial(1, np.clip(p + 0.04, 0, 1))
    assert smooth_ece(y, p, n_grid=1001) == pytest.approx(_smece_reference(y, p), rel=1.5e-2)


# ---------------------------------------------------------------- the method on data with known truth
def test_mc_error_falls_to_the_noise_floor(synth, fitted):
    tr, te = synth
    f = fitted.predict(te['p0'], groups=te['groups'])
    floor = mc_error(te['y'], te['p_true'], te['groups'])
    base = mc_error(te['y'], te['p0'], te['groups'])
    ours = mc_error(te['y'], f, te['groups'])
    assert base > 8 * floor                       # the base model is clearly miscalibrated
    assert ours < 1.6 * floor + 0.003             # ours sits at the noise floor of the truth
    assert np.abs(f - te['p_true']).mean() < 0.02  # and close to the true probabilities themselves
    assert _mse(te['y'], f) < _mse(te['y'], te['p_true']) + 0.001


def test_group_columns_are_matched_by_name(synth, fitted):
    "Issue 12, silent wrong result 1: reordered group columns were fed to the trees by position (off by up to 0.5)."
    _, te = synth
    G = te['groups']
    f = fitted.predict(te['p0'], groups=G)
    rng = np.random.default_rng(0)
    for _ in range(3):
        shuffled = G[list(rng.permutation(G.columns))]
        assert np.array_equal(fitted.predict(te['p0'], groups=shuffled), f)
    # the reordered table still gives a score closer to the truth than the base score (the old code made it worse)
    reordered = fitted.predict(te['p0'], groups=G[G.columns[::-1]])
    assert np.abs(reordered - te['p_true']).mean() < 0.5 * np.abs(te['p0'] - te['p_true']).mean()
    with pytest.raises(ValueError, match=r"missing \['a=1'\], unexpected \['A=1'\]"):
        fitted.predict(te['p0'], groups=G.rename(columns={'a=1': 'A=1'}))
    with pytest.raises(ValueError, match=r"missing \['b=0'\]"):
        fitted.predict(te['p0'], groups=G.drop(columns='b=0'))
    assert fitted.groups_ == list(G.columns)


def test_depth_one_cannot_fix_group_by_level_set_error_depth_two_can():
    # only the group x level-set error: no intersection offset
    tr1, te1 = make_mc_synthetic(20000, intersection_shift=0.0, seed=5), make_mc_synthetic(20000, intersection_shift=0.0, seed=6)
    errs = {}
    for depth in (1, 2):
        m = Multicalibrator(max_depth=depth).fit(tr1['p0'], tr1['y'], groups=tr1['groups'])
        errs[depth] = np.abs(m.predict(te1['p0'], groups=te1['groups']) - te1['p_true']).mean()
    print(errs)
    assert errs[2] < 0.025 and errs[1] > 0.05 and errs[1] > 3 * errs[2]   # depth 1 is stuck near group_shift/2 = 0.075 off the truth


def test_loss_saturation_after_fit_and_not_before(synth, fitted):
    tr, te = synth
    sat = fitted.saturation_check(tr['p0'], tr['y'], groups=tr['groups'])
    check_report(sat)
    assert -5e-3 < sat.relative_drop < 5e-3 and sat.saturated and sat.loss == 'log'
    with pytest.warns(NumericalWarning, match='used all max_rounds=1 rounds'):
        one_step = Multicalibrator(learning_rates=(0.01,), max_rounds=1).fit(tr['p0'], tr['y'], groups=tr['groups'])
    assert one_step.report_.notes and 'max_rounds' in one_step.report_.notes[0]
    unsat = one_step.saturation_check(tr['p0'], tr['y'], groups=tr['groups'], max_rounds=5000)
    assert unsat.relative_drop > 0.02 and not unsat.saturated
    # the check reuses the fit's split: other data (even of the same length) are refused
    with pytest.raises(ValueError, match='must be the data this Multicalibrator was fitted on'):
        fitted.saturation_check(te['p0'], te['y'], groups=te['groups'])


def test_report_fields(synth, fitted):
    tr, _ = synth
    r = fitted.report_
    check_report(r)
    assert (r.loss, r.max_depth, r.n_groups, r.n_folds, r.min_leaf_rows) == ('log', 2, 26, 5, 100)   # 0.5% of 20,000 rows
    assert r.n_val == 20000 and r.n_train == 16000        # 5 folds: every row held out once, each booster fitted on 4/5
    assert r.table['chosen'].sum() == 1 and len(fitted.boosters_) == 5
    best = r.table.loc[r.table['chosen']].iloc[0]
    assert best['val_loss'] == r.val_loss == r.table['val_loss'].min() and best['learning_rate'] == r.learning_rate
    assert r.val_loss < r.base_val_loss and r.val_mse < r.base_val_mse
    # independent check of the held-out numbers: booster k on its own fold, started from the recalibrated base score
    y, p0, G = tr['y'], tr['p0'], tr['groups'].to_numpy(float)
    a, b = r.recalibration_slope, r.recalibration_intercept
    z0 = a * np.log(p0 / (1 - p0)) + b
    oof = np.empty(len(y))
    for k, bst in enumerate(fitted.boosters_):
        m = fitted.folds_ == k
        oof[m] = 1 / (1 + np.exp(-(z0[m] + bst.predict(np.column_stack([G[m], p0[m]]), raw_score=True))))
    assert np.bincount(fitted.folds_).tolist() == [4000] * 5
    assert r.val_mse == pytest.approx(_mse(y, oof), rel=1e-9)
    assert r.val_loss == pytest.approx(-np.mean(y * np.log(oof) + (1 - y) * np.log(1 - oof)), rel=1e-9)


def test_paper_settings_one_split_and_grid(synth):
    "The paper's settings: squared loss from the base score itself, one 70/30 split, the learning-rate grid chosen by validation MSE."
    tr, te = synth
    m = Multicalibrator(loss='squared', recalibrate=False, n_folds=1, learning_rates=(0.01, 0.0316, 0.1, 0.316, 1.0), min_leaf_rows=20,
                        max_bins=8192).fit(tr['p0'][:8000], tr['y'][:8000], groups=tr['groups'][:8000])
    r = m.report_
    assert r.n_train + r.n_val == 8000 and r.n_val == 2400 and len(m.boosters_) == 1 and (r.recalibration_slope, r.recalibration_intercept) == (1.0, 0.0)
    assert list(r.table['learning_rate']) == [0.01, 0.0316, 0.1, 0.316, 1.0] and r.val_loss == r.val_mse == r.table['val_mse'].min()
    # independent check: clip(p0 + F) on the validation rows gives the reported validation MSE
    va = m.folds_ == 0
    f = np.clip(tr['p0'][:8000] + m.boosters_[0].predict(np.column_stack([tr['groups'][:8000].to_numpy(float), tr['p0'][:8000]])), 0, 1)
    assert va.sum() == 2400 and r.val_mse == pytest.approx(_mse(tr['y'][:8000][va], f[va]), rel=1e-9)
    assert np.allclose(m.predict(tr['p0'][:8000], groups=tr['groups'][:8000]), f)


def test_recalibration_matches_sklearn_logistic_regression(synth, fitted):
    "The logistic recalibration the boosting starts from is the unpenalised logistic regression of y on logit(p0)."
    from sklearn.linear_model import LogisticRegression
    tr, _ = synth
    z = np.log(tr['p0'] / (1 - tr['p0']))
    lr = LogisticRegression(C=1e10, tol=1e-10, max_iter=1000).fit(z[:, None], tr['y'])
    assert fitted.report_.recalibration_slope == pytest.approx(lr.coef_[0, 0], abs=1e-4)
    assert fitted.report_.recalibration_intercept == pytest.approx(lr.intercept_[0], abs=1e-4)
    # the base score is underconfident in group a (half the rows): pooled, its log-odds need stretching
    assert fitted.report_.recalibration_slope > 1.2


def test_mc_error_to_truth_brute_force_and_fit_reaches_truth(synth, fitted):
    "MC error to the true probabilities: the paper's formula with p_true in place of y; the fit brings it far below the base score's."
    _, te = synth
    G = te['groups'].to_numpy(int)
    f = fitted.predict(te['p0'], groups=te['groups'])
    for p in (te['p0'], f):
        assert mcmod.mc_error_to_truth(te['p_true'], p, G, 10) == pytest.approx(_mce_brute(te['p_true'], p, G, 10), rel=1e-9, abs=1e-12)
    assert mcmod.mc_error_to_truth(te['p_true'], te['p_true'], G) == 0.0
    base, ours = mcmod.mc_error_to_truth(te['p_true'], te['p0'], G), mcmod.mc_error_to_truth(te['p_true'], f, G)
    print(base, ours)
    assert ours < 0.15 * base


def test_no_discretisation_and_range(synth, fitted):
    _, te = synth
    f = fitted.predict(te['p0'], groups=te['groups'])
    assert 0 <= f.min() and f.max() <= 1
    assert len(np.unique(f)) > 1000               # continuous output, not a grid


def test_same_seed_same_model(synth):
    tr, te = synth
    a = Multicalibrator(learning_rates=(0.3,), seed=3).fit(tr['p0'][:4000], tr['y'][:4000], groups=tr['groups'][:4000])
    b = Multicalibrator(learning_rates=(0.3,), seed=3).fit(tr['p0'][:4000], tr['y'][:4000], groups=tr['groups'][:4000])
    assert np.array_equal(a.predict(te['p0'], groups=te['groups']), b.predict(te['p0'], groups=te['groups']))


def test_mcboost_baseline_is_discretised_and_reduces_error(synth, fitted):
    tr, te = synth
    mb = MCBoost(n_levels=10).fit(tr['p0'], tr['y'], groups=tr['groups'])
    f_mb = mb.predict(te['p0'], groups=te['groups'])
    assert len(np.unique(f_mb)) <= 10
    assert mc_error(te['y'], f_mb, te['groups']) < 0.5 * mc_error(te['y'], te['p0'], te['groups'])
    assert _mse(te['y'], fitted.predict(te['p0'], groups=te['groups'])) <= _mse(te['y'], f_mb)
    # matched by name too (issue 12, the MCBoost-style model compared only the number of columns)
    assert np.array_equal(mb.predict(te['p0'], groups=te['groups'][te['groups'].columns[::-1]]), f_mb)
    r = mb.report_
    check_report(r)
    assert r.converged and r.n_updates == len(r.table) == len(mb.updates_) > 0
    assert set(r.table['group']) <= set(te['groups'].columns)


def test_set_params_after_fit_does_not_change_predictions(synth):
    "Issue: MCBoost.predict read the setting n_levels (set_params(n_levels=50) after fit changed its output; 0 divided by zero)."
    tr, te = synth
    mb = MCBoost(n_levels=10).fit(tr['p0'][:5000], tr['y'][:5000], groups=tr['groups'][:5000])
    before = mb.predict(te['p0'], groups=te['groups'])
    for k in (50, 0, 2.5):
        assert np.array_equal(mb.set_params(n_levels=k).predict(te['p0'], groups=te['groups']), before)
    assert mb.n_levels_ == mb.report_.n_levels == 10
    # independent check: the outputs are the midpoints of the 10 fitted level sets
    assert set(np.round(np.unique(before), 12)) <= {round((k + 0.5) / 10, 12) for k in range(10)}
    with pytest.raises(TypeError, match='n_levels must be an integer'): mb.fit(tr['p0'][:500], tr['y'][:500], groups=tr['groups'][:500])   # the new setting is checked at fit
    # saturation_check reads the fitted max_rounds, patience and seed, not the current settings
    with quiet(NumericalWarning):
        m = Multicalibrator(learning_rates=(0.01,), max_rounds=1, patience=5).fit(tr['p0'][:4000], tr['y'][:4000], groups=tr['groups'][:4000])
    args = (tr['p0'][:4000], tr['y'][:4000])
    first = m.saturation_check(*args, groups=tr['groups'][:4000])
    m.set_params(max_rounds=5000, patience=0, seed=-1)
    again = m.saturation_check(*args, groups=tr['groups'][:4000])
    assert asdict(first) == asdict(again) and first.rounds == 1
    # independent check: the setting would have mattered (more rounds allowed: more rounds kept)
    assert m.set_params(patience=5, seed=0).saturation_check(*args, groups=tr['groups'][:4000], max_rounds=5000).rounds > 1


def test_mcboost_warns_when_it_does_not_converge(synth):
    tr, _ = synth
    with pytest.warns(NumericalWarning, match='remain after max_iter=1 sweeps'):
        mb = MCBoost(tolerance=1e-5, max_iter=1).fit(tr['p0'][:3000], tr['y'][:3000], groups=tr['groups'][:3000])
    assert not mb.report_.converged and mb.report_.sweeps == 1 and mb.report_.notes


def test_reliability_table_counts(synth):
    _, te = synth
    t = reliability_table(te['y'], {'base': te['p0']}, te['groups'][['a=1', 'a=0']], n_bins=5)
    assert t.groupby('group')['count'].sum().sum() == len(te['y'])
    one = reliability_table(te['y'], te['p0'], te['groups'][['a=1']], n_bins=5)
    assert set(one['model']) == {'model'} and one['count'].sum() == te['groups']['a=1'].sum()
    m = te['groups']['a=1'].to_numpy() & (te['p0'] < 0.2)
    row = one[one['bin'] == 0].iloc[0]
    assert row['mean_label'] == pytest.approx(te['y'][m].mean()) and row['mean_pred'] == pytest.approx(te['p0'][m].mean())


# ---------------------------------------------------------------- the estimator contract
def test_estimator_contract_multicalibrator():
    d = make_mc_synthetic(600, seed=4)
    check_estimator_contract(Multicalibrator(learning_rates=(0.3, 1.0), max_rounds=50, patience=5, seed=1),
                             fit=lambda est: est.fit(d['p0'], d['y'], groups=d['groups']),
                             output=lambda est: est.predict(d['p0'], groups=d['groups']))
    est = Multicalibrator(max_depth=3, learning_rates=(0.1,))
    assert clone(est).get_params() == est.get_params()
    assert est.set_params(max_depth=0).max_depth == 0        # no validation in __init__ / set_params ...
    with pytest.raises(ValueError, match='max_depth must be in'):  # ... but fit checks
        est.fit(d['p0'], d['y'], groups=d['groups'])


def test_a_named_score_column_is_matched_by_name():
    "Issue 33 item 4: a one-column DataFrame of scores is recorded at fit (feature_names_in_); a renamed column is an error later."
    d = make_mc_synthetic(600, seed=4)
    X = pd.DataFrame({'base_score': d['p0']})
    for est in (MCBoost(n_levels=8, tolerance=0.005), Multicalibrator(learning_rates=(0.3,), max_rounds=20, patience=5, n_folds=2)):
        est.fit(X, d['y'], groups=d['groups'])
        assert list(est.feature_names_in_) == ['base_score']
        np.testing.assert_array_equal(est.predict(X, groups=d['groups']), est.predict(d['p0'], groups=d['groups']))
        with pytest.raises(ValueError, match=r"X is missing column\(s\) \['base_score'\]"):
            est.predict(X.rename(columns={'base_score': 'other_score'}), groups=d['groups'])
        assert est.fit(d['p0'], d['y'], groups=d['groups']).feature_names_in_ is None


def test_estimator_contract_mcboost():
    d = make_mc_synthetic(600, seed=4)
    check_estimator_contract(MCBoost(n_levels=8, tolerance=0.005), fit=lambda est: est.fit(d['p0'], d['y'], groups=d['groups']),
                             output=lambda est: est.predict(d['p0'], groups=d['groups']))


def test_lightgbm_through_require(monkeypatch):
    d = make_mc_synthetic(100, seed=0)
    monkeypatch.setitem(sys.modules, 'lightgbm', None)    # as if it were not installed
    with pytest.raises(ImportError, match=r"Multicalibrator needs the optional package 'lightgbm'.*trustml_nb\[mc\]"):
        Multicalibrator().fit(d['p0'], d['y'], groups=d['groups'])


def test_no_blanket_warning_filters():
    src = inspect.getsource(mcmod)
    assert 'simplefilter' not in src and "filterwarnings('ignore'" not in src


# ---------------------------------------------------------------- Adult targets and the widget
@pytest.fixture(scope='module')
def adult():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        task = adult_mc_task(seed=0)
    return task, [w.category for w in caught]


def test_adult_task_and_its_warnings(adult):
    task, caught = adult
    assert DroppedRowsWarning in caught and SmallGroupWarning in caught   # no longer silenced
    cal, te = task['calib'], task['test']
    assert (len(task['base']), len(cal), len(te)) == (13566, 18089, 13567)
    assert cal.groups.shape[1] == 58 and list(cal.groups.columns) == list(te.groups.columns)
    assert 'sex=Female & race=White & age_group=50+' in cal.groups.columns
    # the deliberate miscalibration on top of the task's logistic score
    logit = task.base_model.decision_function(te.X)
    women = (te.A['sex'] == 'Female').to_numpy()
    assert np.allclose(te.score, 1 / (1 + np.exp(-(2 * logit - 0.8 * women))))
    assert te.score[women].mean() < (1 / (1 + np.exp(-logit[women]))).mean()   # biased down for women


def test_adult_targets(adult):
    task, _ = adult
    res = multicalibration_study(task)
    assert isinstance(res, MulticalibrationStudy)
    check_report(res)
    t = res.table.set_index('model')
    assert t.loc['base', 'mc_error'] >= 5 * t.loc['ERM depth 2', 'mc_error']
    assert t.loc['ERM depth 2', 'mse'] <= t.loc['MCBoost-style', 'mse']
    assert res.saturation_relative_drop < 5e-3
    assert res.mc_error_ratio == pytest.approx(t.loc['base', 'mc_error'] / t.loc['ERM depth 2', 'mc_error']) and res.mc_error_ratio >= 5
    assert res.mse_ours == t.loc['ERM depth 2', 'mse'] and res.grid_search and res.n_groups == 58   # the task's groups (>= 100 rows over all rows)
    assert res.mse_ours == pytest.approx(np.mean((res.y_test - res.test_predictions['ERM depth 2'].to_numpy()) ** 2))
    assert mc_error(res.y_test, res.test_predictions['ERM depth 2'], res.test_groups) == pytest.approx(res.mc_error_ours)
    assert list(res.test_groups.columns) == list(task['test'].groups.columns)          # the same groups as the task and the lesson
    assert res.n_levels == 10 and len(np.unique(res.test_predictions['MCBoost-style'])) <= 10


def test_study_uses_the_tasks_groups(adult):
    "Issue: the study rebuilt its groups (55, counted over calibration + test rows) instead of using the task's (58)."
    task, _ = adult
    dropped = 'sex=Female & race=Black'
    fewer = replace(task, splits={k: replace(s, groups=s.groups.drop(columns=[dropped])) for k, s in task.splits.items()})
    res = multicalibration_study(fewer, 'sex x race', learning_rate=0.3)
    # brute force from the names: the task's groups whose every part is a level of sex or race
    want = [c for c in fewer['test'].groups.columns if all(part.split('=', 1)[0] in ('sex', 'race') for part in c.split(' & '))]
    assert list(res.test_groups.columns) == want and res.n_groups == len(want) and dropped not in want and len(want) > 8
    A = fewer['test'].A
    direct = ((A['sex'].astype(str) == 'Female') & (A['race'].astype(str) == 'White')).to_numpy()
    assert np.array_equal(res.test_groups['sex=Female & race=White'].to_numpy(), direct)
    # min_size still leaves out small groups, counted over calibration + test rows
    sizes = fewer['calib'].groups[want].sum() + fewer['test'].groups[want].sum()
    cut = int(sizes.sort_values().iloc[2]) + 1
    res_big = multicalibration_study(fewer, 'sex x race', learning_rate=0.3, min_size=cut)
    assert list(res_big.test_groups.columns) == [c for c in want if sizes[c] >= cut] and res_big.n_groups == len(want) - 3


def test_explorer_controls():
    with quiet(DroppedRowsWarning, SmallGroupWarning):   # test_adult_task_and_its_warnings checks them
        task = adult_mc_task(seed=1, max_rows=6000)
    ex = mc_explorer(task)
    assert ex.error is None and ex.report.learning_rate == 0.1 and 'learning rate 0.1,' in ex.report.title
    assert list(ex.controls)[0] == 'learning_rate'
    ex.controls['learning_rate'].value = 1.0; ex.controls['family'].value = 'sex'; ex.on_run()
    r = ex.report
    assert ex.error is None and (r.learning_rate, r.max_depth, r.family, r.grid_search) == (1.0, 2, 'sex', False)
    assert r.title.startswith('Multicalibration on Adult: learning rate 1, depth 2, sex groups')
    assert r.n_groups == 2 and list(r.test_groups.columns) == ['sex=Female', 'sex=Male']
    # the 'metric bins' slider changes the metric only: MCBoost keeps its own 10 level sets
    ex.controls['n_bins'].value = 50; ex.on_run()
    r50 = ex.report
    assert ex.error is None and (r50.n_bins, r50.n_levels, r.n_levels) == (50, 10, 10)
    pd.testing.assert_frame_equal(r50.test_predictions, r.test_predictions)
    assert (r50.mse_mcboost, r50.mse_ours) == (r.mse_mcboost, r.mse_ours)
    # independent check: MCBoost's outputs are the 10 level midpoints, each inside one of the 50 bins, so its MC error does
    # not move; the 50 bins refine the 10, so no other MC error can fall (|sum| <= sum of |.|)
    assert set(np.round(np.unique(r.test_predictions['MCBoost-style']), 12)) <= {round((k + 0.5) / 10, 12) for k in range(10)}
    assert r50.mc_error_mcboost == pytest.approx(r.mc_error_mcboost, abs=1e-12)
    assert r50.mc_error_base >= r.mc_error_base - 1e-12 and r50.mc_error_ours >= r.mc_error_ours - 1e-12


def test_old_keywords_warn_and_still_work():
    "issue 34: MCBoost's alpha and make_mc_synthetic's n/delta/gamma keep working for one release, with a FutureWarning naming the new keyword."
    d = make_mc_synthetic(600, seed=4)
    new = MCBoost(tolerance=0.005).fit(d['p0'], d['y'], groups=d['groups'])
    with pytest.warns(FutureWarning, match="'alpha' is renamed 'tolerance'"):
        old = MCBoost(alpha=0.005).fit(d['p0'], d['y'], groups=d['groups'])
    np.testing.assert_array_equal(old.predict(d['p0'], groups=d['groups']), new.predict(d['p0'], groups=d['groups']))
    assert old.report_.tolerance == 0.005
    with pytest.warns(FutureWarning, match="'gamma' is renamed 'intersection_shift'"):
        old_d = make_mc_synthetic(n=600, delta=0.1, gamma=0.0, seed=4)
    new_d = make_mc_synthetic(n_rows=600, group_shift=0.1, intersection_shift=0.0, seed=4)
    np.testing.assert_array_equal(old_d['p_true'], new_d['p_true'])
