"""Tests for trustml_nb.omniprediction: Bayes action vs brute force, optimality with true probabilities, learner
tolerances, coverage, columns matched by name, the estimator contract, the explorer. The bad-input sweep is in
test_bad_input_omniprediction.py.

scikit-learn's `check_estimator` does not apply to `OmniPredictor` or `GroupConformal`: both are post-processors whose
`X` is one probability per row (check_estimator fits on arbitrary real matrices, with continuous or multiclass `y`).
`tests/contract.py::check_estimator_contract` checks the rules that do apply.
"""
import inspect
import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone

import trustml_nb.groups
import trustml_nb.omniprediction as omod
from contract import check_estimator_contract, check_report
from trustml_nb.core import NumericalWarning
from trustml_nb.omniprediction import (ABSTAIN, ACTIONS, GroupConformal, Loss, OmniPredictor, bayes_action, calibration_violation,
                                       compare_omniprediction, coverage_report, expected_losses, group_ratio_sd, loss_grid,
                                       multiaccuracy_violations, realized_loss, selective_report, synthetic_groups, synthetic_selective,
                                       threshold_action, tune_selective)

cost = st.floats(0.01, 10, allow_nan=False)


def brute_action(p, L):
    "argmin over the three actions in the order (0, 1, abstain), by explicit enumeration."
    costs = {0: p * L.fn, 1: (1 - p) * L.fp, ABSTAIN: L.abstain}
    best = min(costs.values())
    return next(a for a in (0, 1, ABSTAIN) if costs[a] == best)


@settings(max_examples=200, deadline=None)
@given(fp=cost, fn=cost, ab=st.floats(0, 10, allow_nan=False), p=st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_bayes_action_equals_brute_force(fp, fn, ab, p):
    L = Loss(fp, fn, ab)
    assert list(bayes_action(np.array(p), L)) == [brute_action(q, L) for q in p]


@settings(max_examples=200, deadline=None)
@given(fp=cost, fn=cost, ab=st.floats(0, 10, allow_nan=False), p=st.floats(0, 1))
def test_abstention_interval_formula(fp, fn, ab, p):
    L = Loss(fp, fn, ab); lo, hi = L.interval
    a = bayes_action(np.array([p]), L)[0]
    if lo + 1e-9 < p < hi - 1e-9: assert a == ABSTAIN
    if p < lo - 1e-9 or p > hi + 1e-9: assert a != ABSTAIN
    if lo >= hi and a != ABSTAIN:  # no abstention region: a plain threshold
        if p > L.threshold + 1e-9: assert a == 1
        if p < L.threshold - 1e-9: assert a == 0


def test_bayes_action_minimises_expected_loss_on_grid():
    p = np.linspace(0, 1, 1001)
    for L in loss_grid():
        e = expected_losses(p, L)
        chosen = e[np.arange(len(p)), [list(ACTIONS).index(a) for a in bayes_action(p, L)]]
        np.testing.assert_allclose(chosen, e.min(axis=1))


def _expected(ps, acts, L):
    "Mean exact expected loss of the actions when y ~ Bernoulli(ps) (columns of expected_losses in the order of ACTIONS)."
    e = expected_losses(ps, L)
    col = np.select([acts == a for a in ACTIONS], np.arange(len(ACTIONS)), -1)
    assert (col >= 0).all()
    return e[np.arange(len(ps)), col].mean()


def test_true_probabilities_optimal_for_every_loss():
    syn = synthetic_selective(3000, seed=0); ps = syn['p_true'].to_numpy(); y = syn['y']
    rng = np.random.default_rng(0)
    scores = [ps, ps + rng.normal(0, 0.1, len(ps)), syn['x1'].to_numpy()]
    grid = loss_grid()
    assert len(grid) >= 20
    for L in grid:
        best = _expected(ps, bayes_action(ps, L), L)
        for s in scores:
            assert best <= _expected(ps, threshold_action(s, *tune_selective(s, y, L)), L) + 1e-12
        # and against every threshold pair on p_true itself (coarse grid)
        cuts = np.linspace(0, 1, 21)
        for t0, t1 in itertools.combinations_with_replacement(cuts, 2):
            assert best <= _expected(ps, threshold_action(ps, t0, t1), L) + 1e-12


def test_tune_selective_matches_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(5):
        s = rng.integers(0, 12, 40) / 11.0; y = (rng.uniform(size=40) < s).astype(int)   # ties included
        for L in (Loss(1, 2, 0.3), Loss(2, 1, 0.2), Loss(1, 1, 1)):
            t0, t1 = tune_selective(s, y, L)
            cuts = np.concatenate([[-np.inf], np.unique(s)])
            brute = min(realized_loss(y, threshold_action(s, a, b), L).sum() for a in cuts for b in cuts if a <= b)
            assert realized_loss(y, threshold_action(s, t0, t1), L).sum() == pytest.approx(brute)


def test_metrics_take_y_true_first():
    for fn in (multiaccuracy_violations, calibration_violation, compare_omniprediction, group_ratio_sd):
        assert list(inspect.signature(fn).parameters)[:2] == ['y_true', 'y_prob'], fn.__name__
    for fn in (realized_loss, selective_report, coverage_report):
        assert list(inspect.signature(fn).parameters)[:2] == ['y_true', 'y_pred'], fn.__name__
    # one home for groups: the module's own check_groups is gone
    assert not hasattr(omod, 'check_groups') or omod.check_groups is trustml_nb.groups.check_groups
    for gone in ('fit_omnipredictor', 'select_n_bins', 'fit_on_split', 'conformal_sets', 'adult_selective', 'adult_groups'):
        assert not hasattr(omod, gone), gone


def _syn_fit(n=6000, seed=1):
    syn = synthetic_selective(n, seed=seed); G = synthetic_groups(syn)
    base = 1 / (1 + np.exp(-(1.0 * syn['x1'].to_numpy())))                    # ignores x2 and the groups
    T = pd.DataFrame({'one': np.ones(n), 'x1': syn['x1'], 'x2': syn['x2']})
    return syn, G, base, T


def test_learner_tolerances_hold():
    syn, G, base, T = _syn_fit()
    eps = 0.003
    om = OmniPredictor(tolerance=eps, n_bins=20).fit(base, syn['y'], groups=G, tests=T)
    p = om.predict(base, groups=G, tests=T)
    r = om.report_
    assert r.converged
    assert np.abs(multiaccuracy_violations(syn['y'], p, G, T).to_numpy()).max() <= eps + 1e-12
    assert calibration_violation(syn['y'], p, 20) <= eps
    assert r.calibration_residual <= eps and r.multiaccuracy_residual <= eps and r.calibration == 'patch'
    # every round is a sequence of exact line searches: the squared error never rises
    assert (np.diff(r.history['squared_error']) <= 1e-12).all()
    assert r.squared_error == pytest.approx(np.mean((syn['y'] - p)**2)) and r.squared_error < r.base_squared_error
    # closer to the truth than the base model
    assert np.mean((p - syn['p_true'])**2) < np.mean((base - syn['p_true'])**2)
    # replay is deterministic
    np.testing.assert_array_equal(p, om.predict(base, groups=G, tests=T))
    assert om.groups_ == list(G.columns) and om.tests_ == list(T.columns) and om.n_bins_ == 20 and r.cv_table is None


def test_binning_is_calibrated_on_level_sets():
    syn, G, base, T = _syn_fit()
    om = OmniPredictor(tolerance=0.003, n_bins=15, calibration='binning').fit(base, syn['y'], groups=G, tests=T)
    p = om.predict(base, groups=G, tests=T)
    assert om.report_.converged and om.report_.calibration_residual <= 1e-9 and om.report_.multiaccuracy_residual <= 0.003
    # level-set calibration by brute force: every distinct value is the mean label of the rows that get it
    for v in np.unique(p): assert abs(syn['y'][p == v].mean() - v) * (p == v).sum() / len(p) <= 1e-9
    with pytest.raises(ValueError, match='calibration'): OmniPredictor(calibration='isotonic').fit(base, syn['y'], groups=G, tests=T)


def test_n_bins_chosen_by_cross_validation():
    syn, G, base, T = _syn_fit(4000, seed=5)
    est = OmniPredictor(tolerance=0.005, n_bins=None, n_bins_candidates=(5, 10, 40), folds=3, seed=1, show_progress=False)
    r = est.fit(base, syn['y'], groups=G, tests=T).report_
    t = r.cv_table
    assert list(t['n_bins']) == [5, 10, 40] and r.n_bins == est.n_bins_ == int(t.loc[t['cv_loss'].idxmin(), 'n_bins'])
    assert est.n_bins is None                                            # the setting is kept; the choice is fitted state
    # cv_loss is the grid-averaged held-out loss: between the loss of always abstaining cheaply and the worst loss
    assert (t['cv_loss'] > 0).all() and (t['cv_loss'] < max(L.abstain for L in loss_grid())).all()
    # brute force: the cv_loss of one candidate, recomputed from fits on the folds
    fold = np.random.default_rng(1).permutation(len(syn)) % 3; y = syn['y'].to_numpy(); total = 0.0
    for k in range(3):
        tr, va = fold != k, fold == k
        om = OmniPredictor(tolerance=0.005, n_bins=10).fit(base[tr], y[tr], groups=G[tr], tests=T[tr])
        p = om.predict(base[va], groups=G[va], tests=T[va])
        total += np.mean([realized_loss(y[va], bayes_action(p, L), L).sum() for L in loss_grid()])
    assert t.loc[t['n_bins'] == 10, 'cv_loss'].iloc[0] == pytest.approx(total / len(y), rel=1e-12)
    again = clone(est).fit(base, syn['y'], groups=G, tests=T).report_.cv_table
    pd.testing.assert_frame_equal(t, again)                              # same seed, same folds, same answer
    with pytest.raises(ValueError, match='folds'): OmniPredictor(n_bins=None, folds=1).fit(base, syn['y'], groups=G, tests=T)
    with pytest.raises(ValueError, match='candidates'): OmniPredictor(n_bins=None, n_bins_candidates=(1,)).fit(base, syn['y'], groups=G, tests=T)
    with pytest.raises(ValueError, match='candidates'): OmniPredictor(n_bins=None, n_bins_candidates=()).fit(base, syn['y'], groups=G, tests=T)


def test_group_and_test_columns_are_matched_by_name():
    "Issue 12, silent wrong result 5: predict compared only the number of test-function columns, not their names."
    syn, G, base, T = _syn_fit(4000, seed=8)
    om = OmniPredictor(tolerance=0.003).fit(base, syn['y'], groups=G, tests=T)
    p = om.predict(base, groups=G, tests=T)
    rng = np.random.default_rng(0)
    for _ in range(3):
        Ts, Gs = T[list(rng.permutation(T.columns))], G[list(rng.permutation(G.columns))]
        assert np.array_equal(om.predict(base, groups=Gs, tests=Ts), p)
    # what the old code computed: the reordered columns replayed by position give other (wrong) probabilities
    Tr = T[T.columns[::-1]]
    by_position = omod._replay(base, G.to_numpy(float), Tr.to_numpy(float), om.steps_)
    assert np.abs(by_position - p).max() > 0.05
    assert np.mean((by_position - syn['p_true'])**2) > np.mean((p - syn['p_true'])**2)
    with pytest.raises(ValueError, match=r"tests .*missing \['x2'\], unexpected \['X2'\]"):
        om.predict(base, groups=G, tests=T.rename(columns={'x2': 'X2'}))
    with pytest.raises(ValueError, match=r"tests .*missing \['x1'\]"): om.predict(base, groups=G, tests=T.drop(columns='x1'))
    with pytest.raises(ValueError, match='c0, c1'): om.predict(base, groups=G, tests=T.to_numpy())
    with pytest.raises(ValueError, match=r"groups .*missing \['young'\]"): om.predict(base, groups=G.drop(columns='young'), tests=T)


def test_duplicate_column_names_are_clear_errors():
    "Issue 12: duplicate column names in fit_omnipredictor ended deep inside pandas."
    syn, G, base, T = _syn_fit(500, seed=9)
    T2 = pd.concat([T, T[['x1']]], axis=1); G2 = pd.concat([G, G[['young']]], axis=1)
    with pytest.raises(ValueError, match=r"tests has duplicate column name\(s\) \['x1'\]"):
        OmniPredictor().fit(base, syn['y'], groups=G, tests=T2)
    with pytest.raises(ValueError, match=r"groups has duplicate column name\(s\) \['young'\]"):
        OmniPredictor().fit(base, syn['y'], groups=G2, tests=T)


def test_estimator_contracts():
    syn, G, base, T = _syn_fit(800, seed=10)
    y = syn['y'].to_numpy()
    check_estimator_contract(OmniPredictor(tolerance=0.01, n_bins=None, n_bins_candidates=(5, 10), folds=2, seed=3),
                             fit=lambda est: est.fit(base, y, groups=G, tests=T),
                             output=lambda est: est.predict(base, groups=G, tests=T))
    cal = np.arange(800) < 400; Gt = G[~cal].reset_index(drop=True)
    for method in ('max', 'qr', 'conditional'):
        check_estimator_contract(GroupConformal(alpha=0.2, method=method, seed=4),
                                 fit=lambda est: est.fit(syn['p_true'][cal], y[cal], groups=G[cal]),
                                 output=lambda est: est.predict(syn['p_true'][~cal], groups=Gt))
    # the same seed gives the same sets, whatever was predicted before
    gc = GroupConformal(seed=7).fit(syn['p_true'][cal], y[cal], groups=G[cal])
    first = gc.predict(syn['p_true'][~cal], groups=Gt)
    gc.predict(syn['p_true'][:5], groups=G[:5])
    pd.testing.assert_frame_equal(gc.predict(syn['p_true'][~cal], groups=Gt), first)


def test_group_ratio_sd_matches_binomial_scale():
    syn, G, base, T = _syn_fit(8000, seed=7)
    fit = np.arange(len(syn)) < 4000; Gt = G[~fit].reset_index(drop=True)
    sd = group_ratio_sd(syn['y'][~fit], syn['p_true'][~fit].to_numpy(), Gt, score=base[~fit], y_fit=syn['y'][fit], score_fit=base[fit], n_boot=300)
    n = Gt.sum()
    assert (sd > 0).all() and list(sd.index) == list(G.columns)
    # smaller groups, noisier ratios (roughly 1/sqrt(n))
    assert sd[n.idxmin()] > sd[n.idxmax()]


def test_omnipredictor_competes_on_synthetic():
    syn, G, base, T = _syn_fit(12000, seed=2)
    fit, test = np.arange(len(syn)) < 6000, np.arange(len(syn)) >= 6000
    om = OmniPredictor(tolerance=0.003).fit(base[fit], syn['y'][fit], groups=G[fit], tests=T[fit])
    Gt = G[test].reset_index(drop=True)
    p = om.predict(base[test], groups=Gt, tests=T[test])
    res = compare_omniprediction(syn['y'][test], p, Gt, score=base[test], y_fit=syn['y'][fit], score_fit=base[fit])
    check_report(res)
    assert res.ratio_global < 1.0          # beats the tuned classifiers on the (group-blind) base score
    assert res.worst_group_ratio < 1.02
    # the global numbers are over all rows: here the group 'all'
    assert res.ratio_global == pytest.approx(res.by_group.loc['all', 'ratio']) and res.n_losses == 25
    assert res.worst_group == res.by_group['ratio'].idxmax()


@pytest.mark.parametrize('method', ['max', 'qr', 'conditional'])
def test_group_coverage(method):
    alpha = 0.1
    syn = synthetic_selective(24000, seed=4); G = synthetic_groups(syn); cal = np.arange(len(syn)) < 12000
    Gt = G[~cal].reset_index(drop=True); yt = syn['y'][~cal]
    gc = GroupConformal(alpha=alpha, method=method).fit(syn['p_true'][cal], syn['y'][cal], groups=G[cal])
    check_report(gc.report_)
    cr = coverage_report(yt, gc.predict(syn['p_true'][~cal], groups=Gt), Gt, alpha).table
    n_cal = G[cal].sum().to_numpy()
    slack = 3 * np.sqrt(alpha * (1 - alpha) / cr['n'].to_numpy()) + 1 / (n_cal + 1) + (len(G.columns) / n_cal if method == 'qr' else 0)
    assert (cr['coverage'].to_numpy() >= 1 - alpha - slack).all(), cr
    if method in ('qr', 'conditional'): assert (cr['gap'].abs() < 0.03).all()


def _mean_coverage_small_calibration(method, reps=150, n_cal=150, n_te=1000):
    "Per-group coverage averaged over many independent small calibration sets (the finite-sample regime)."
    syn = synthetic_selective(reps * (n_cal + n_te), seed=11); G = synthetic_groups(syn)
    p, y = syn['p_true'].to_numpy(), syn['y'].to_numpy(); covs = []
    for r in range(reps):
        i = np.arange(r * (n_cal + n_te), (r + 1) * (n_cal + n_te)); c, t = i[:n_cal], i[n_cal:]
        Gc, Gt = G.iloc[c].reset_index(drop=True), G.iloc[t].reset_index(drop=True)
        sets = GroupConformal(alpha=0.1, method=method, seed=r).fit(p[c], y[c], groups=Gc).predict(p[t], groups=Gt)
        covs.append(coverage_report(y[t], sets, Gt, 0.1).table['coverage'].to_numpy())
    covs = np.array(covs)
    return covs.mean(0), covs.std(0) / np.sqrt(reps)


@pytest.mark.parametrize('method', ['max', 'conditional'])
def test_finite_sample_guarantee_in_every_group(method):
    # ~24 calibration rows in the smallest group: the guaranteed methods still cover >= 1 - alpha on average
    m, se = _mean_coverage_small_calibration(method)
    assert (m >= 0.9 - 3 * se).all(), (m, se)


@pytest.mark.parametrize('method', ['max', 'conditional'])
def test_conformal_coverage_is_exact_at_the_sharp_sample_size(method):
    """Split conformal with n = 10 calibration scores and alpha = 0.1 takes the ceil((n + 1)(1 - alpha)) = 10th smallest, so
    a fresh exchangeable score is covered with probability exactly 10/11 = 0.909 (theory, not the package); dropping the
    (n + 1) correction takes the 9th and covers 9/11 = 0.818. 150 calibration sets of 10, 50 test rows each."""
    reps, n_cal, n_te = 150, 10, 50
    rng = np.random.default_rng(31)
    p = rng.uniform(size=(reps, n_cal + n_te)); y = (rng.uniform(size=p.shape) < p).astype(int)
    cov = np.empty(reps)
    for r in range(reps):
        gc = GroupConformal(alpha=0.1, method=method, allow_empty=True, seed=r).fit(p[r, :n_cal], y[r, :n_cal])
        sets = gc.predict(p[r, n_cal:])
        cov[r] = np.mean(np.where(y[r, n_cal:] == 1, sets.has1, sets.has0))
    se = cov.std(ddof=1) / np.sqrt(reps)                                    # measured about 0.007
    assert abs(cov.mean() - 10 / 11) < 4 * se and 4 * se < 0.04, (cov.mean(), se)


def test_qr_is_not_guaranteed_with_small_groups():
    # the plain quantile regression under-covers there, which is why 'conditional' exists
    m, se = _mean_coverage_small_calibration('qr')
    assert ((m - 0.9) / se).min() < -3


def test_group_quantiles_match_brute_force():
    rng = np.random.default_rng(12)
    p = rng.uniform(size=300); y = (rng.uniform(size=300) < p).astype(int)
    G = pd.DataFrame({'all': np.ones(300, bool), 'half': np.arange(300) < 150, 'tiny': np.arange(300) < 5})
    gc = GroupConformal(alpha=0.1, seed=0).fit(p, y, groups=G)
    sc = np.where(y == 1, 1 - p, p) + 1e-3 * np.random.default_rng(0).uniform(size=300)   # the scores with their jitter
    for j, c in enumerate(G.columns):
        s = np.sort(sc[G[c].to_numpy()]); k = int(np.ceil((len(s) + 1) * 0.9))
        assert gc.report_.table.loc[j, 'group_quantile'] == (s[k - 1] if k <= len(s) else np.inf)
    assert gc.report_.table.loc[2, 'group_quantile'] == np.inf and gc.report_.notes   # 5 rows: too few at alpha = 0.1
    assert list(gc.report_.table['n_calibration']) == [300, 150, 5]
    sets = gc.predict(p[:10], groups=G[:10])
    assert (sets.loc[:4, 'action'] == ABSTAIN).all()                     # members of 'tiny' always get {0, 1}


def _augmented_pinball(Phi, s, phi, big, tau, q_at_phi):
    "The smallest pinball loss of the augmented regression among fits whose value at phi is q_at_phi (an LP of its own)."
    from trustml_nb.omniprediction import quantile_fit
    from scipy.optimize import linprog
    A = np.vstack([Phi, phi]); y = np.append(s, big); n, d = A.shape
    # variables theta (free), u, v >= 0: y - A theta = u - v; minimise tau u + (1 - tau) v with phi' theta = q_at_phi
    c = np.concatenate([np.zeros(d), np.full(n, tau), np.full(n, 1 - tau)])
    A_eq = np.vstack([np.hstack([A, np.eye(n), -np.eye(n)]), np.concatenate([phi, np.zeros(2 * n)])])
    r = linprog(c, A_eq=A_eq, b_eq=np.append(y, q_at_phi), bounds=[(None, None)] * d + [(0, None)] * (2 * n), method='highs')
    return r.fun


def test_conditional_thresholds_are_exact_fits():
    "The windowed LPs of 'conditional' give the augmented quantile regression's optimum: same pinball loss as a full refit per pattern."
    from trustml_nb.omniprediction import quantile_fit, _augmented_quantiles
    rng = np.random.default_rng(21); n = 600
    a, b, c = rng.uniform(size=(3, n)) < np.array([[0.5], [0.3], [0.6]])
    Phi = np.column_stack([np.ones(n), a, ~a, b, c, a & b]).astype(float)   # overlapping groups, fewer columns than cells (rank-deficient)
    s = rng.uniform(size=n); pats = np.unique(Phi, axis=0); big = s.max() + 1
    assert np.linalg.matrix_rank(pats) < len(pats)
    for tau in (0.8, 0.9):
        fast = _augmented_quantiles(Phi, s, pats, tau, big, width=2)          # tiny windows: the exactness check must widen them
        for phi, q in zip(pats, fast):
            full = phi @ quantile_fit(np.vstack([Phi, phi]), np.append(s, big), tau)
            opt, ours = _augmented_pinball(Phi, s, phi, big, tau, full), _augmented_pinball(Phi, s, phi, big, tau, q)
            assert ours == pytest.approx(opt, rel=1e-9, abs=1e-12), (phi, q, full)   # an optimal fit, whichever optimum the full LP returned


def test_conditional_on_a_partition_is_split_conformal_per_cell():
    "Closed form: with groups that span every cell's indicator, the fit separates by cell, so 'conditional' is split conformal in each cell."
    rng = np.random.default_rng(5); n = 900
    f, yg = rng.uniform(size=n) < 0.4, rng.uniform(size=n) < 0.3
    G = pd.DataFrame({'all': np.ones(n, bool), 'female': f, 'male': ~f, 'young': yg, 'old': ~yg, 'female & young': f & yg})
    p = rng.uniform(size=n); y = (rng.uniform(size=n) < p).astype(int)
    gc = GroupConformal(alpha=0.1, method='conditional', seed=3).fit(p, y, groups=G)
    sets = gc.predict(p[:40], groups=G[:40])
    cell = f.astype(int) * 2 + yg.astype(int)
    for k in range(4):
        sc = np.sort(gc.scores_[cell == k]); j = int(np.ceil((len(sc) + 1) * 0.9))
        want = sc[j - 1] if j <= len(sc) else gc.scores_.max() + 1
        assert np.allclose(sets['q'][cell[:40] == k], want, rtol=0, atol=1e-12), k


def test_quantile_fit_matches_sklearn():
    from sklearn.linear_model import QuantileRegressor
    from trustml_nb.omniprediction import quantile_fit
    rng = np.random.default_rng(8)
    Phi = np.column_stack([np.ones(800), rng.uniform(size=(800, 3)) < 0.3]).astype(float); s = rng.gamma(2.0, size=800)
    for tau in (0.1, 0.5, 0.9):
        pin = lambda th: np.mean(np.maximum(tau * (s - Phi @ th), (tau - 1) * (s - Phi @ th)))
        sk = QuantileRegressor(quantile=tau, alpha=0, fit_intercept=False, solver='highs').fit(Phi, s).coef_
        assert abs(pin(quantile_fit(Phi, s, tau)) - pin(sk)) <= 1e-9
    with pytest.raises(ValueError, match='quantile'): quantile_fit(Phi, s, 1.0)
    with pytest.raises(ValueError, match='features|scores'): quantile_fit(Phi, s[:-1], 0.5)


def test_no_empty_sets_when_disallowed():
    syn = synthetic_selective(4000, seed=5); G = synthetic_groups(syn); cal = np.arange(4000) < 2000
    s = GroupConformal(alpha=0.3, allow_empty=False).fit(syn['p_true'][cal], syn['y'][cal], groups=G[cal]).predict(
        syn['p_true'][~cal], groups=G[~cal].reset_index(drop=True))
    assert (s['has0'] | s['has1']).all() and set(s['action']) <= {0, 1, ABSTAIN}
    # the same fit with empty sets allowed: exactly the rows whose set was empty now hold the more likely label, alone
    e = GroupConformal(alpha=0.3, allow_empty=True).fit(syn['p_true'][cal], syn['y'][cal], groups=G[cal]).predict(
        syn['p_true'][~cal], groups=G[~cal].reset_index(drop=True))
    empty, top = ~(e['has0'] | e['has1']), syn['p_true'][~cal].to_numpy() >= 0.5
    assert empty.sum() > 10 and (s['has1'][empty] == top[empty]).all() and (s['has0'][empty] == ~top[empty]).all()
    assert (s[~empty][['has0', 'has1']] == e[~empty][['has0', 'has1']]).all().all()


def test_selective_report_values():
    y = np.array([0, 0, 1, 1, 1, 0]); a = np.array([0, 1, 1, ABSTAIN, 0, ABSTAIN]); L = Loss(1, 2, 0.3)
    rep = selective_report(y, a, L)
    check_report(rep)
    assert rep.table.loc[0, 'abstain_rate'] == pytest.approx(1/3) and rep.abstain_rate == pytest.approx(1/3)
    assert rep.table.loc[0, 'selective_risk'] == pytest.approx(0.5) and rep.selective_risk == pytest.approx(0.5)
    assert rep.table.loc[0, 'loss'] == pytest.approx((1 + 0.3 + 2 + 0.3) / 6) and rep.mean_loss == pytest.approx((1 + 0.3 + 2 + 0.3) / 6)
    # a group where the classifier always abstains: selective risk undefined, said in the notes
    rep = selective_report(y, a, L, {'all': np.ones(6, bool), 'abstained': a == ABSTAIN})
    assert np.isnan(rep.table.loc[1, 'selective_risk']) and 'abstained' in rep.notes[0]


def test_coverage_report_values():
    y = np.array([0, 1, 1, 0]); sets = pd.DataFrame({'has0': [True, True, False, False], 'has1': [False, True, True, False]})
    cr = coverage_report(y, sets, {'all': [True] * 4, 'first two': [True, True, False, False]}, alpha=0.25)
    check_report(cr)
    assert cr.coverage == 0.75 and cr.mean_set_size == 1.0 and cr.abstain_rate == 0.25 and cr.empty_rate == 0.25
    assert list(cr.table['coverage']) == [0.75, 1.0] and cr.worst_gap == 0.0 and cr.worst_abs_gap == 0.25
    assert cr.alpha == 0.25 and list(cr.table['group']) == ['all', 'first two'] and list(cr.table['n']) == [4, 2]
    assert coverage_report(y, sets[['has0', 'has1']].to_numpy()).coverage == 0.75


def test_bad_inputs():
    with pytest.raises(ValueError, match='fp'): Loss(-1, 1, 0.1)
    with pytest.raises(ValueError, match='abstain'): Loss(1, 1, -0.5)
    with pytest.raises(ValueError, match='fn'): Loss(1, 0, 0.1)
    with pytest.raises(TypeError, match='Loss'): bayes_action([0.5], (1, 1, 0.2))
    with pytest.raises(ValueError, match=r'\[0, 1\]'): bayes_action([0.2, 1.5], Loss(1, 1, 0.2))
    with pytest.raises(ValueError, match=r'\[0, 1\]'): bayes_action([-0.1], Loss(1, 1, 0.2))
    with pytest.raises(ValueError, match='nobody'): selective_report([0, 1], [0, 1], Loss(1, 1, 0.1), {'all': [True, True], 'nobody': [False, False]})
    with pytest.raises(ValueError, match='groups'):
        OmniPredictor().fit([0.5, 0.5], [0, 1], groups={'g': [False, False]}, tests=np.ones((2, 1)))
    with pytest.raises(ValueError, match='alpha'):
        GroupConformal(alpha=0).fit([0.5, 0.4], [1, 0], groups={'all': [True, True]})
    with pytest.raises(ValueError, match='alpha'):
        GroupConformal(alpha=1.2).fit([0.5, 0.4], [1, 0], groups={'all': [True, True]})
    with pytest.raises(ValueError, match='method'):
        GroupConformal(method='mondrian').fit([0.5, 0.4], [1, 0], groups={'all': [True, True]})
    with pytest.raises(ValueError, match='tests'):
        OmniPredictor().fit([0.5, 0.5], [0, 1], groups={'g': [True, True]}, tests=np.full((2, 1), 3.0))
    with pytest.raises(ValueError, match='y_pred'): realized_loss([0, 1], [0, 5], Loss(1, 1, 0.1))


def test_not_converged_warns():
    syn, G, base, T = _syn_fit(2000, seed=3)
    with pytest.warns(NumericalWarning, match='not converged'):
        om = OmniPredictor(tolerance=1e-4, max_rounds=1, max_steps=2).fit(base, syn['y'], groups=G, tests=T)
    assert not om.report_.converged and 'not converged' in om.report_.notes[0]


def test_explorer_reposts_without_retraining():
    from trustml_nb.omniprediction import coverage_explorer, omni_explorer
    syn = synthetic_selective(3000, seed=6); G = synthetic_groups(syn)
    ex = omni_explorer(syn['y'], syn['p_true'].to_numpy(), G)
    assert list(ex.controls)[0] == 'fp' and ex.report.loss == Loss(1, 1, 0.3)
    check_report(ex.report)
    assert 'fp=1.00' in ex.report._repr_html_()                       # what the browser test waits for
    ex.controls['abstain'].value = 0.05; many = ex.report.abstain_rate
    ex.controls['abstain'].value = 0.45; few = ex.report.abstain_rate
    assert many > few and ex.error is None
    assert few == selective_report(syn['y'], bayes_action(syn['p_true'], Loss(1, 1, 0.45)), Loss(1, 1, 0.45), G).abstain_rate
    ex.controls['fp'].value = ex.controls['fp'].max
    assert ex.report.loss.fp == 5.0 and 'fp=5.00' in ex.report._repr_html_()
    cal = np.arange(3000) < 1500; Gt = G[~cal].reset_index(drop=True)
    cx = coverage_explorer(syn['y'][cal], syn['p_true'][cal], G[cal], syn['y'][~cal], syn['p_true'][~cal], Gt)
    assert cx.report.alpha == 0.1 and cx.error is None
    cx.controls['method'].value = 'qr'
    assert cx.error is None and cx.report.worst_abs_gap < 0.05


@pytest.mark.slow
def test_adult_targets():
    from trustml_nb.data import adult_task
    from trustml_nb.omniprediction import ADULT_GROUPS, ADULT_SENSITIVE, adult_tests
    task = adult_task({'base': 12000, 'fit': 10000, 'cal': None}, official_test=True, sensitive=ADULT_SENSITIVE, max_order=2,
                      keep_groups=ADULT_GROUPS, base_model='hgb', seed=0)
    f, c, t = task.fit, task.cal, task.test
    om = OmniPredictor(tolerance=0.002, n_bins=None, seed=0).fit(f.score, f.y, groups=f.groups, tests=adult_tests(f.X, f.score))
    P = {k: om.predict(s.score, groups=s.groups, tests=adult_tests(s.X, s.score)) for k, s in task.splits.items()}
    res = compare_omniprediction(t.y, P['test'], t.groups, score=t.score, y_fit=f.y, score_fit=f.score)
    big = (t.groups.sum() >= 500).to_numpy()
    assert res.ratio_global < 1.01
    assert res.by_group['ratio'].to_numpy()[big].max() < 1.02
    cr = coverage_report(t.y, GroupConformal(alpha=0.1, method='qr').fit(P['cal'], c.y, groups=c.groups).predict(P['test'], groups=t.groups),
                         t.groups, 0.1).table
    assert cr.loc[cr['n'] >= 500, 'gap'].abs().max() <= 0.02


def test_qr_report_lists_each_groups_coefficient():
    "method='qr': the report's coefficient column is the fitted theta, and theta is the (1 - alpha)-quantile regression of the scores (LP check)."
    from scipy.optimize import linprog
    rng = np.random.default_rng(5)
    n = 400
    p = rng.uniform(0.05, 0.95, n); y = (rng.uniform(size=n) < p).astype(int)
    G = pd.DataFrame({'all': np.ones(n, bool), 'a': np.arange(n) % 2 == 0})
    est = GroupConformal(method='qr', alpha=0.2).fit(p, y, groups=G)
    assert np.array_equal(est.report_.table['coefficient'].to_numpy(), est.coef_)
    # independent LP: min sum tau u+ + (1 - tau) u- with s - Phi theta = u+ - u-
    from trustml_nb.core import make_rng
    Phi, tau = G.to_numpy(float), 0.8
    s = np.where(y == 1, 1 - p, p) + omod.JITTER * make_rng(est.seed).uniform(size=n)   # the fit's tie-breaking jitter, redrawn
    d = Phi.shape[1]
    res = linprog(np.r_[np.zeros(2 * d), tau * np.ones(n), (1 - tau) * np.ones(n)],
                  A_eq=np.c_[Phi, -Phi, np.eye(n), -np.eye(n)], b_eq=s, bounds=(0, None), method='highs')
    theta = res.x[:d] - res.x[d:2 * d]
    loss = lambda th: np.sum(np.maximum(tau * (s - Phi @ th), (tau - 1) * (s - Phi @ th)))
    assert abs(loss(est.coef_) - loss(theta)) <= 1e-9
    assert loss(theta + [0.05, 0]) > loss(theta) + 1e-3              # and the LP optimum is sharp at this scale


# --- issue 33: labelled input matched by name everywhere, no hidden global state, the like-for-like MAPIE peer ---

def test_probability_column_is_matched_by_name():
    "Issue 33 item 4: a base score fitted as a named one-column DataFrame was accepted under any other name at predict."
    syn, G, base, T = _syn_fit(1500, seed=11)
    y = syn['y'].to_numpy(); Xs = pd.DataFrame({'base score': base})
    om = OmniPredictor(tolerance=0.005).fit(Xs, y, groups=G, tests=T)
    with pytest.raises(ValueError, match=r"X is missing column\(s\) \['base score'\] and has column\(s\) \['other score'\]"):
        om.predict(pd.DataFrame({'other score': base}), groups=G, tests=T)
    assert list(om.feature_names_in_) == ['base score']
    p = om.predict(Xs, groups=G, tests=T)
    assert np.array_equal(om.predict(base, groups=G[G.columns[::-1]], tests=T[T.columns[::-1]]), p)   # array by position, tables by name
    cal = np.arange(len(y)) < 800
    for method in ('max', 'qr', 'conditional'):
        gc = GroupConformal(method=method, alpha=0.2).fit(Xs[cal], y[cal], groups=G[cal])
        assert list(gc.feature_names_in_) == ['base score']
        ref = gc.predict(Xs[~cal], groups=G[~cal])
        pd.testing.assert_frame_equal(gc.predict(base[~cal], groups=G[~cal][G.columns[::-1]]), ref)
        with pytest.raises(ValueError, match=r"X is missing column\(s\) \['base score'\]"):
            gc.predict(pd.DataFrame({'p': base[~cal]}), groups=G[~cal])
    assert OmniPredictor(tolerance=0.01).fit(base, y, groups=G, tests=T).feature_names_in_ is None    # unnamed input: no names recorded


def test_adult_tests_matches_a_series_score_by_index():
    "Issue 33 item 4: `adult_tests` read a score Series by position, so a score in another row order gave wrong test functions."
    rng = np.random.default_rng(3); n = 50
    X = pd.DataFrame({'age': rng.integers(18, 80, n), 'education_num': rng.integers(1, 17, n), 'hours_per_week': rng.integers(5, 80, n)},
                     index=rng.permutation(1000)[:n])
    s = pd.Series(rng.uniform(size=n), index=X.index)
    ref = omod.adult_tests(X, s)
    assert list(ref.index) == list(X.index)
    np.testing.assert_allclose(ref['score'].to_numpy(), 2 * s.to_numpy() - 1)           # independent: the formula on aligned values
    shuffled = s.sample(frac=1, random_state=1)
    pd.testing.assert_frame_equal(omod.adult_tests(X, shuffled), ref)                   # rows matched by label
    pd.testing.assert_frame_equal(omod.adult_tests(X[['hours_per_week', 'education_num', 'age']], s), ref)   # columns by name
    with pytest.raises(ValueError, match="score is a Series whose index is not X's row index"):
        omod.adult_tests(X, s.reset_index(drop=True))


def _global_states():
    import random
    return random.getstate(), np.random.get_state()


def _same_states(a, b):
    return a[0] == b[0] and all(np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y for x, y in zip(a[1], b[1]))


@pytest.mark.parametrize('seed', [0, None])
def test_fit_and_predict_leave_global_generators_alone(seed):
    "Issue 33 item 5: no fit, predict or study function of the module draws from or reseeds Python's or numpy's global generator."
    syn, G, base, T = _syn_fit(1200, seed=12); y = syn['y'].to_numpy(); cal = np.arange(len(y)) < 600
    calls = [lambda: OmniPredictor(tolerance=0.01, n_bins=None, n_bins_candidates=(5, 10), folds=2, seed=seed).fit(base, y, groups=G, tests=T).predict(base, groups=G, tests=T),
             lambda: synthetic_selective(300, seed=seed),
             lambda: group_ratio_sd(y, base, G, score=base, y_fit=y, score_fit=base, n_boot=5, seed=seed)]
    calls += [lambda m=m: GroupConformal(method=m, seed=seed).fit(base[cal], y[cal], groups=G[cal]).predict(base[~cal], groups=G[~cal])
              for m in ('max', 'qr', 'conditional')]
    import random
    for call in calls:
        random.seed(123); np.random.seed(123)
        before = _global_states(); call(); after = _global_states()
        assert _same_states(before, after)


def test_conditional_equals_mapie_conditional_conformal():
    "The 'conditional' sets equal MAPIE's ConditionalSplitConformalClassifier (Gibbs et al., same group features), an independent implementation."
    cond = pytest.importorskip('mapie.conditional_conformal_prediction')
    from trustml_nb.core import PrefitClassifier
    syn, G, _, _ = _syn_fit(1300, seed=13); y = syn['y'].to_numpy(); p = syn['p_true'].to_numpy()
    cal = np.arange(len(y)) < 1000
    ours = GroupConformal(method='conditional', alpha=0.1).fit(p[cal], y[cal], groups=G[cal]).predict(p[~cal], groups=G[~cal])
    Xm = np.column_stack([G.to_numpy(float), p])
    m = cond.ConditionalSplitConformalClassifier(feature_map=lambda X: X[:, :-1], estimator=PrefitClassifier().fit(), confidence_level=0.9,
                                                 conformity_score='lac', prefit=True).conformalize(Xm[cal], y[cal])
    _, s = m.predict_set(Xm[~cal])
    differ = (s[:, 0, 0] != ours['has0'].to_numpy()) | (s[:, 1, 0] != ours['has1'].to_numpy())
    q, pt = ours['q'].to_numpy(), p[~cal]
    near = np.minimum(np.abs(pt - q), np.abs(1 - pt - q)) <= omod.JITTER      # only our tie-breaking jitter may separate the two
    assert not (differ & ~near).any() and differ.sum() <= 3


def test_tune_selective_returns_named_thresholds():
    "issue 34: tune_selective returns named thresholds (low, high) that still compare, unpack and splat as the old (t0, t1) tuple."
    from trustml_nb.omniprediction import SelectiveThresholds
    L = Loss(1, 2, 0.3)
    rng = np.random.default_rng(0); s = rng.normal(size=200); y = (rng.uniform(size=200) < 1 / (1 + np.exp(-2 * s))).astype(int)
    t = tune_selective(s, y, L)
    assert isinstance(t, SelectiveThresholds) and t._fields == ('low', 'high') and t.low <= t.high
    t0, t1 = t
    assert (t0, t1) == (t.low, t.high) == t
    assert np.array_equal(threshold_action(s, *t), threshold_action(s, t.low, t.high))


def test_old_keywords_warn_and_still_work():
    "issue 34: eps, t0/t1, Phi/s/tau and n keep working for one release, with a FutureWarning naming the new keyword, and give the same result."
    syn, G, base, T = _syn_fit(800, seed=12); y = syn['y'].to_numpy()
    new = OmniPredictor(tolerance=0.01).fit(base, y, groups=G, tests=T).predict(base, groups=G, tests=T)
    with pytest.warns(FutureWarning, match="'eps' is renamed 'tolerance'"):
        old = OmniPredictor(eps=0.01).fit(base, y, groups=G, tests=T).predict(base, groups=G, tests=T)
    np.testing.assert_array_equal(old, new)
    with pytest.warns(FutureWarning, match="'t0' is renamed 'low'"):
        np.testing.assert_array_equal(threshold_action(base, t0=0.3, t1=0.6), threshold_action(base, low=0.3, high=0.6))
    Phi, s, quantile_fit = G.to_numpy(float), base, omod.quantile_fit
    with pytest.warns(FutureWarning, match="'tau' is renamed 'quantile'"):
        np.testing.assert_array_equal(quantile_fit(Phi=Phi, s=s, tau=0.8), quantile_fit(features=Phi, scores=s, quantile=0.8))
    with pytest.warns(FutureWarning, match="'n' is renamed 'n_rows'"):
        pd.testing.assert_frame_equal(synthetic_selective(n=50, seed=1), synthetic_selective(n_rows=50, seed=1))
    with pytest.raises(TypeError, match="both 'low' and its old name 't0'"): threshold_action(base, low=0.3, t0=0.3, high=0.6)
