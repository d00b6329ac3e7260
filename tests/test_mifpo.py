"""Tests for trustml_nb.mifpo: the LP against brute force and a closed form, monotonicity and convexity of the error
front, DCCP never below the exact LP, the entropy objective against exact bounds, the representation (TV, transform,
held-out rates), peers on or above the front, the estimator contract and the explorer. The bad-input sweep is in
test_bad_input_mifpo.py.

scikit-learn's `check_estimator` does not apply: `FairRepresentation` takes one probability per row as `X` and needs
`sensitive`; `GroupCalibratedScores` needs `sensitive` too. `tests/contract.py::check_estimator_contract` checks the rules
that do apply.
"""
import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from contract import check_estimator_contract, check_report
from trustml_nb.mifpo import (FairRepresentation, GroupCalibratedScores, best_fair_classifier, bin_scores, compare_peers,
                              conditional_h, mifpo_explorer, mifpo_program, pareto_front, render_mifpo, score_bins, synthetic_bins,
                              synthetic_error_front, synthetic_mifpo)


def random_bins(rng, n=None, m=None):
    n = n or int(rng.integers(1, 5)); m = m or int(rng.integers(1, 5))
    return score_bins(rng.uniform(size=m), rng.dirichlet(np.ones(m)), rng.uniform(size=n), rng.dirichlet(np.ones(n)), float(rng.uniform(0.1, 0.9)))


def brute_force_error(bins, gamma):
    "Min error over randomised rules: an LP optimum has all t in {0, 1} but at most one coordinate (one general constraint)."
    (p0, p1), (v, u), a = bins.rates, bins.masses, bins.group_share
    w = np.concatenate([(1 - a) * v, a * u]); p = np.concatenate([p0, p1]); s = np.concatenate([-v, u])   # DP = s @ t
    err = lambda t: float(w @ (p + t * (1 - 2 * p)))
    best = np.inf
    for bits in itertools.product([0.0, 1.0], repeat=len(p)):
        t = np.array(bits)
        if abs(s @ t) <= gamma + 1e-12: best = min(best, err(t))
        for i in range(len(p)):                         # one fractional coordinate, at a boundary of the DP constraint
            if s[i] == 0: continue
            rest = s @ t - s[i] * t[i]
            for target in (gamma, -gamma):
                ti = (target - rest) / s[i]
                if 0 <= ti <= 1:
                    tt = t.copy(); tt[i] = ti; best = min(best, err(tt))
    return best


def greedy_error(bins, gamma):
    "Closed form for two groups: close the Bayes rule's DP gap with the cheapest moves first (fractional knapsack)."
    (p0, p1), (v, u), a = bins.rates, bins.masses, bins.group_share
    t0, t1 = (p0 > 0.5).astype(float), (p1 > 0.5).astype(float)
    E = float((1 - a) * v @ np.minimum(p0, 1 - p0) + a * u @ np.minimum(p1, 1 - p1))
    D = u @ t1 - v @ t0
    if abs(D) <= gamma: return E
    if D < 0:   # swap the roles so that group 1 is the favoured one
        return greedy_error(score_bins(p1, u, p0, v, 1 - a), gamma)
    moves = [(a * (2 * p - 1), m) for p, m in zip(p1, u) if p > 0.5] + [((1 - a) * (1 - 2 * p), m) for p, m in zip(p0, v) if p <= 0.5]
    need = D - gamma
    for cost, cap in sorted(moves):
        step = min(cap, need); E += cost * step; need -= step
        if need <= 1e-15: break
    return E


def test_lp_matches_brute_force_on_tiny_instances():
    rng = np.random.default_rng(0)
    for _ in range(60):
        b = random_bins(rng); g = float(rng.uniform(0, 0.6))
        assert abs(best_fair_classifier(b, g).error - brute_force_error(b, g)) < 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.floats(0, 1))
def test_lp_matches_the_closed_form_greedy(seed, gamma):
    b = random_bins(np.random.default_rng(seed))
    fc = best_fair_classifier(b, gamma)
    assert abs(fc.error - greedy_error(b, gamma)) < 1e-9
    assert fc.dp_gap <= gamma + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_error_front_is_monotone_and_convex(seed):
    b = random_bins(np.random.default_rng(seed), 6, 5)
    f = pareto_front(b, routes=('lp',))
    e = f.table['lp'].to_numpy()
    assert f.lp_monotone and np.all(np.diff(e) <= 1e-12)
    assert np.all(np.diff(e, 2) >= -1e-9)                     # convex on the uniform grid
    assert abs(e[-1] - conditional_h(b)) < 1e-12                # gamma = 1: no constraint, E min(p, 1 - p)


def test_synthetic_closed_form_both_routes():
    f = pareto_front(synthetic_bins(), gammas=[0.0, 0.1, 0.2, 0.35, 0.5, 0.8], show_progress=False)
    truth = synthetic_error_front(f.table['gamma'].tolist())
    assert np.abs(f.table['lp'] - truth).max() < 1e-6
    assert np.abs(f.table['dccp'] - truth).max() < 1e-5
    assert (f.table['tv'] <= f.table['gamma'] + 1e-6).all()
    check_report(f)


def test_closed_form_is_the_knapsack():
    g = np.linspace(0, 1, 41)
    b = synthetic_bins()
    np.testing.assert_allclose(synthetic_error_front(g.tolist()), [greedy_error(b, x) for x in g], atol=1e-12)


def test_dccp_never_below_the_lp_and_is_fair():
    rng = np.random.default_rng(1)
    for r in range(6):
        b = random_bins(rng, 4, 4); g = float(rng.uniform(0, 0.4))
        s = mifpo_program(b, g, n_atoms=int(rng.integers(1, 3)), restarts=1, seed=r)
        assert s.value >= best_fair_classifier(b, g).error - 1e-6
        assert s.tv <= g + 1e-6
        for e in s.encoding: np.testing.assert_allclose(e.sum(1), 1, atol=1e-9)
        check_report(s)


def test_entropy_objective_between_exact_bounds():
    rng = np.random.default_rng(2)
    b = random_bins(rng, 4, 4)
    p = (1 - b.group_share) * b.masses[0] @ b.rates[0] + b.group_share * b.masses[1] @ b.rates[1]
    h_y = float(-p * np.log(p) - (1 - p) * np.log(1 - p))       # constant Z is feasible at every gamma
    for g in (0.0, 0.1, 0.3):
        s = mifpo_program(b, g, objective='entropy', restarts=1)
        assert conditional_h(b, 'entropy') - 1e-6 <= s.value <= h_y + 1e-6     # data processing / trivial representation
    assert abs(mifpo_program(b, 1.0, objective='entropy').value - conditional_h(b, 'entropy')) < 1e-5


def test_representation_on_synthetic_rows():
    fit, test = synthetic_mifpo(8000, seed=3), synthetic_mifpo(8000, seed=4)
    for route in ('lp', 'dccp'):
        rep = FairRepresentation(gamma=0.1, route=route).fit(fit['p_true'], fit['y'], sensitive=fit['group'])
        r = rep.report_
        assert r.tv <= 0.1 + 1e-6 and r.fit_dp_gap <= 0.1 + 1e-6
        assert abs(r.front_value - best_fair_classifier(rep.bins_, 0.1).error) < 1e-5
        Z = rep.transform(test['p_true'], sensitive=test['group'])
        np.testing.assert_allclose(Z.sum(1), 1, atol=1e-9)
        ev = rep.evaluate(test['p_true'], test['y'], sensitive=test['group'])
        assert abs(ev.error - synthetic_error_front(0.1)[0]) < 0.02 and ev.dp_gap < 0.14
        d = rep.decision_probability(test['p_true'], sensitive=test['group'])
        assert abs(np.mean(rep.predict(test['p_true'], sensitive=test['group'])) - d.mean()) < 0.02


def test_lp_representation_attains_the_front_on_the_fitting_rows():
    fit = synthetic_mifpo(5000, seed=5)
    rep = FairRepresentation(gamma=0.05).fit(fit['p_true'], fit['y'], sensitive=fit['group'])
    assert abs(rep.report_.fit_error - rep.report_.front_value) < 1e-9    # empirical bin rates: the front is exact on these rows


def test_bins_match_empirical_rates_and_new_rows():
    rng = np.random.default_rng(3)
    s = rng.uniform(size=500); y = (rng.uniform(size=500) < s).astype(int); a = np.where(rng.uniform(size=500) < 0.5, 'x', 'y')
    b = bin_scores(y, s, a, n_bins=5)
    for g, lab in enumerate(b.groups):
        sg, yg = s[a == lab], y[a == lab]
        edges = np.concatenate([[-np.inf], b.edges[g], [np.inf]])
        for k in range(len(b.rates[g])):
            inside = (sg > edges[k]) & (sg <= edges[k + 1])
            assert abs(yg[inside].mean() - b.rates[g][k]) < 1e-12 and abs(inside.mean() - b.masses[g][k]) < 1e-12


def test_peers_on_or_above_the_front():
    fit, test = synthetic_mifpo(6000, seed=6), synthetic_mifpo(6000, seed=7)
    pc = compare_peers(fit['y'], fit['p_true'], fit['group'], test['y'], test['p_true'], test['group'], dp_levels=(0.02, 0.1))
    assert pc.all_on_or_above and pc.worst_margin >= -1e-7
    assert {'ThresholdOptimizer (DP)', 'ExponentiatedGradient (DP)'} <= set(pc.table['method'])
    assert pc.table['test_error'].notna().all()
    check_report(pc)


def test_fair_representation_contract():
    fit = synthetic_mifpo(600, seed=8)
    check_estimator_contract(FairRepresentation(gamma=0.1), lambda e: e.fit(fit['p_true'], fit['y'], sensitive=fit['group']),
                             output=lambda e: e.transform(fit['p_true'], sensitive=fit['group']))
    check_estimator_contract(FairRepresentation(gamma=0.1, route='dccp', restarts=1), lambda e: e.fit(fit['p_true'], fit['y'], sensitive=fit['group']),
                             output=lambda e: e.predict(fit['p_true'], sensitive=fit['group']))


def test_group_calibrated_scores_contract():
    fit = synthetic_mifpo(400, seed=9)
    X = pd.DataFrame({'logit': np.log(fit['p_true'] / (1 - fit['p_true'])), 'noise': np.random.default_rng(0).normal(size=len(fit))})
    check_estimator_contract(GroupCalibratedScores(n_folds=2, max_iter=10), lambda e: e.fit(X, fit['y'], sensitive=fit['group']),
                             output=lambda e: e.predict_proba(X, sensitive=fit['group']))


def _brute_force_ece(y, p, n_bins=10):
    "Expected calibration error by a loop over the bins [b/10, (b+1)/10) (the last one closed): sum_b |sum over b of (y - p)| / n."
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        inside = [(yi, pi) for yi, pi in zip(y, p) if lo <= pi < hi or (b == n_bins - 1 and pi == 1.0)]
        total += abs(sum(yi - pi for yi, pi in inside))
    return total / len(y)


def test_calibration_error_against_brute_force():
    "Issue 33 item 9: ScoreReport.calibration_error is the ECE, the mean of |residual sum| per bin, checked where bins differ in sign."
    fit = synthetic_mifpo(500, seed=12)
    X = pd.DataFrame({'logit': np.log(fit['p_true'] / (1 - fit['p_true'])), 'noise': np.random.default_rng(1).normal(size=len(fit))})
    gs = GroupCalibratedScores(calibration='sigmoid', n_folds=2, max_iter=10, seed=0).fit(X, fit['y'], sensitive=fit['group'])
    y, groups = fit['y'].to_numpy(), fit['group'].astype(str).to_numpy()
    table = gs.report_.table.set_index('group')
    signs_differ = False
    for g in gs.groups_:
        yg, pg = y[groups == g], gs.oof_score_[groups == g]
        assert table.loc[g, 'calibration_error'] == pytest.approx(_brute_force_ece(yg, pg), abs=1e-12), g
        sums = [np.sum((yg - pg)[(pg >= b / 10) & (pg < (b + 1) / 10)]) for b in range(10)]
        signs_differ |= min(sums) < -1e-3 and max(sums) > 1e-3
        assert table.loc[g, 'brier'] == pytest.approx(np.mean((yg - pg) ** 2), abs=1e-12)
    assert signs_differ          # so |sum over bins| (a planted bug) would differ from the sum of |bin sums|


def test_group_calibrated_scores_match_columns_by_name():
    fit = synthetic_mifpo(300, seed=13)
    X = pd.DataFrame({'logit': np.log(fit['p_true'] / (1 - fit['p_true'])), 'noise': np.random.default_rng(2).normal(size=len(fit))})
    gs = GroupCalibratedScores(n_folds=2, max_iter=5).fit(X, fit['y'], sensitive=fit['group'])
    assert list(gs.feature_names_in_) == ['logit', 'noise']
    np.testing.assert_array_equal(gs.predict_proba(X[['noise', 'logit']], sensitive=fit['group']), gs.predict_proba(X, sensitive=fit['group']))
    with pytest.raises(ValueError, match=r"X has column\(s\) \['extra'\] not seen at fit"):
        gs.predict_proba(X.assign(extra=0.0), sensitive=fit['group'])


def test_groups_matched_by_label():
    fit = synthetic_mifpo(600, seed=10)
    rep = FairRepresentation(gamma=0.1).fit(fit['p_true'], fit['y'], sensitive=fit['group'])
    with pytest.raises(ValueError, match='sensitive'):
        rep.transform(fit['p_true'], sensitive=fit['group'].replace({'g1': 'G1'}))


def test_render_and_explorer():
    fit, test = synthetic_mifpo(3000, seed=11), synthetic_mifpo(3000, seed=12)
    head, fig, view = render_mifpo(fit['y'], fit['p_true'], fit['group'], test['y'], test['p_true'], test['group'], gamma=0.1, n_bins=5)
    assert 'gamma 0.10' in head and view.fit_dp_gap <= 0.1 + 1e-6 and view.front_value >= view.exact_error - 1e-6
    check_report(view)
    ex = mifpo_explorer(fit['y'], fit['p_true'], fit['group'], test['y'], test['p_true'], test['group'])
    first = ex.report
    ex.controls['gamma'].value = 0.3; ex.on_run()
    assert ex.report.gamma == 0.3 and ex.report.exact_error <= first.exact_error
    ex.controls['objective'].value = 'entropy'; ex.on_run()
    assert ex.error is None and ex.report.objective == 'entropy' and np.isnan(ex.report.exact_error)
