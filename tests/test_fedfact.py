"""Tests for trustml_nb.fedfact (and one short Flower run of trustml_nb.fedfact_flower).

Exact identities first (D matrices against directly computed rates, cost matrix, projection, smoothing gradient,
bi-level shares against direct rates, binary threshold reduction, dual direction), then small end-to-end runs on synthetic federations
(constraints met on the fitted data, large budgets recover the unconstrained rule, multi-class, infeasible budgets
reported), the estimator contract, the issue's findings, bad inputs, and Flower == in-process on two clients.
"""
import warnings

import numpy as np
import pytest
from contract import check_estimator_contract

from trustml_nb.core import DroppedRowsWarning, NumericalWarning, quiet
from trustml_nb.viz import figure_html, readability
from sklearn.base import clone

from trustml_nb.fedfact import (NOTIONS, FedAvg, FedFactIn, FedFactPost, InProcessRunner, adult_fed_data,
                                _explorer_base, confusion_matrices, explore_fedfact, cost_matrix, direct_disparities, dirichlet_partition, disparities,
                                dp_noise_floor, encode_fl, fairness_matrices, fl_counts, hedge_update, heterogeneous_partition,
                                make_fed_data, metrics_from_counts, positivity_shift, prediction_counts, project_l1_ball,
                                smooth_max, synthetic_conflict, tradeoff_curve)

QUIET = dict(show_progress=False)


def post(fd, base, **kw): return FedFactPost(base_model=base, **QUIET, **kw).fit(fd)
def inproc(fd, base, **kw): return FedFactIn(base_model=base, **QUIET, **kw).fit(fd)


def _random_fl(seed, m, G, N, n=3000):
    rng = np.random.default_rng(seed)
    return rng.integers(0, m, n), rng.integers(0, G, n), rng.integers(0, N, n), rng.integers(0, m, n)


# ---------------------------------------------------------------- exact identities
@pytest.mark.parametrize("m,G,N", [(2, 2, 2), (3, 2, 3), (2, 3, 2), (3, 3, 3), (4, 2, 2)])
@pytest.mark.parametrize("notion", NOTIONS)
@pytest.mark.parametrize("level", ["global", "local"])
def test_matrices_reproduce_direct_rates(m, G, N, notion, level):
    y, a, k, p = _random_fl(m * 100 + G * 10 + N, m, G, N)
    D = fairness_matrices(fl_counts(y, a, k), notion, level)
    C = confusion_matrices(y, p, a, k, (m, G, N))
    np.testing.assert_allclose(disparities(D, C, level), direct_disparities(y, p, a, k, (m, G, N), notion, level), atol=1e-12)


def test_randomised_classifier_rates_are_linear():
    "A soft (randomised) classifier's disparity is the average of the hard ones it mixes."
    y, a, k, p = _random_fl(1, 3, 2, 2)
    rng = np.random.default_rng(2); q = rng.integers(0, 3, len(y))
    D = fairness_matrices(fl_counts(y, a, k), 'eo', 'global')
    mix = 0.3 * np.eye(3)[p] + 0.7 * np.eye(3)[q]
    d_mix = disparities(D, confusion_matrices(y, mix, a, k, (3, 2, 2)))
    d_p, d_q = (direct_disparities(y, v, a, k, (3, 2, 2), 'eo') for v in (p, q))
    np.testing.assert_allclose(d_mix, 0.3 * d_p + 0.7 * d_q, atol=1e-12)


def test_binary_dp_constraints_are_negatives():
    y, a, k, p = _random_fl(3, 2, 2, 3)
    d = disparities(fairness_matrices(fl_counts(y, a, k), 'dp'), confusion_matrices(y, p, a, k, (2, 2, 3)))
    np.testing.assert_allclose(d.reshape(2, 2)[:, 0], -d.reshape(2, 2)[:, 1], atol=1e-12)


def test_eop_is_the_papers_per_class_equal_opportunity():
    "FedFACT's EOP (index set A x Y) equalises P(Yhat=y | Y=y, A) for every class: for two classes TPR and TNR, the rates EO equalises."
    y, a, k, p = _random_fl(11, 2, 2, 2)
    d_eop = direct_disparities(y, p, a, k, (2, 2, 2), 'eop').reshape(2, 2)           # (a', y)
    for g in range(2):
        for c in range(2):   # the rate of class c among rows of class c, group g, minus that of everyone of class c
            want = (p[(a == g) & (y == c)] == c).mean() - (p[y == c] == c).mean()
            assert abs(d_eop[g, c] - want) < 1e-12
    d_eo = direct_disparities(y, p, a, k, (2, 2, 2), 'eo').reshape(2, 2, 2)          # (part, a', y); FPR_y = 1 - TPR of the other class
    np.testing.assert_allclose(d_eo[0], d_eop, atol=1e-12); np.testing.assert_allclose(d_eo[1], -d_eop[:, ::-1], atol=1e-12)
    cnt = prediction_counts(y, p, a, k, (2, 2, 2)); m_eop, m_eo = metrics_from_counts(cnt, 'eop'), metrics_from_counts(cnt, 'eo')
    for key in ('global_subgroup', 'global_pairwise', 'local_subgroup', 'local_pairwise'): assert abs(m_eop[key] - m_eo[key]) < 1e-12
    # equal TPRs but unequal TNRs: a TPR-only notion would see no gap, FedFACT's EOP does
    y2, a2 = np.array([1, 1, 0, 0] * 2), np.array([0, 0, 0, 0, 1, 1, 1, 1]); p2 = np.array([1, 0, 0, 0, 1, 0, 1, 1])
    m = metrics_from_counts(prediction_counts(y2, p2, a2, np.zeros(8, int), (2, 2, 1)), 'eop')
    assert abs(m['global_pairwise'] - 1.0) < 1e-12                                   # TNR 1 vs 0; TPR 0.5 vs 0.5


def test_pairwise_is_subgroup_over_largest_share():
    "Two groups, DP: pairwise gap = subgroup gap / max_a p_a exactly (globally and per client); EOP/EO: between 1x and 2x."
    y, a, k, p = _random_fl(12, 3, 2, 3)
    rng = np.random.default_rng(0); keep = rng.random(len(y)) < np.where(a == 1, 0.3, 1.0)   # unequal group shares
    y, a, k, p = y[keep], a[keep], k[keep], p[keep]
    cnt = prediction_counts(y, p, a, k, (3, 2, 3)); mt = metrics_from_counts(cnt, 'dp')
    share = np.bincount(a) / len(a)
    assert abs(mt['global_pairwise'] - mt['global_subgroup'] / share.max()) < 1e-12
    share_k = np.array([np.bincount(a[k == c], minlength=2) / (k == c).sum() for c in range(3)])
    np.testing.assert_allclose(mt['client_pairwise'], mt['client_subgroup'] / share_k.max(1), atol=1e-12)
    for notion in ('eop', 'eo'):
        mt = metrics_from_counts(cnt, notion)
        assert mt['global_subgroup'] - 1e-12 <= mt['global_pairwise'] <= 2 * mt['global_subgroup'] + 1e-12


def test_zero_duals_identity_and_shift_invariance():
    y, a, k, _ = _random_fl(4, 3, 2, 2)
    cnt = fl_counts(y, a, k); p_ak = cnt.sum(2) / cnt.sum()
    Dg, Dl = fairness_matrices(cnt, 'dp', 'global'), fairness_matrices(cnt, 'dp', 'local')
    M0 = cost_matrix(p_ak, Dg, np.zeros((2, 6)), Dl, np.zeros((2, 2, 6)))
    np.testing.assert_array_equal(M0, np.broadcast_to(np.eye(3), (2, 2, 3, 3)))
    rng = np.random.default_rng(0)
    M = cost_matrix(p_ak, Dg, rng.uniform(0, .3, (2, 6)), Dl, rng.uniform(0, .3, (2, 2, 6)))
    eta = rng.dirichlet(np.ones(3), len(y))
    s1 = np.einsum('ir,irj->ij', eta, M[k, a]); s2 = np.einsum('ir,irj->ij', eta, positivity_shift(M)[k, a])
    np.testing.assert_array_equal(s1.argmax(1), s2.argmax(1))
    assert positivity_shift(M).min() > 0


def test_binary_reduction_is_a_threshold_rule():
    "DP dual on (a', y=1) only: argmax rule == eta_1 > 1/2 + c_{a,k} / (2 p_{a,k})."
    y, a, k, _ = _random_fl(5, 2, 2, 3)
    cnt = fl_counts(y, a, k); p_ak = cnt.sum(2) / cnt.sum()
    Dg = fairness_matrices(cnt, 'dp', 'global')
    lam = np.zeros((2, 4)); lam[0, 1] = 0.07                # u = (a'=0, y=1)
    M = cost_matrix(p_ak, Dg, lam)
    eta1 = np.random.default_rng(1).uniform(size=len(y)); eta = np.c_[1 - eta1, eta1]
    rule = np.einsum('ir,irj->ij', eta, M[k, a]).argmax(1)
    c = 0.07 * Dg[1][:, :, 0, 1]                             # (N, G): dual-weighted column-1 entry
    thr = 0.5 + c[k, a] / (2 * p_ak[k, a])
    np.testing.assert_array_equal(rule, (eta1 > thr).astype(int))


def test_mu_sign_direction():
    "'+' convention: raising mu1 for (a'=0, y=1) on client 0 lowers P(Yhat=1 | A=0, K=0); the printed '-' raises it."
    y, a, k, _ = _random_fl(6, 3, 2, 3, n=6000)
    cnt = fl_counts(y, a, k); p_ak = cnt.sum(2) / cnt.sum(); Dl = fairness_matrices(cnt, 'dp', 'local')
    eta = np.random.default_rng(7).dirichlet(np.ones(3), len(y)); cell = (k == 0) & (a == 0)
    def rate(v, sign):
        mu = np.zeros((3, 2, 6)); mu[0, 0, 1] = v
        pred = np.einsum('ir,irj->ij', eta, cost_matrix(p_ak, Dl=Dl, mu=mu, mu_sign=sign)[k, a]).argmax(1)
        return (pred[cell] == 1).mean()
    plus, minus = [rate(v, 1) for v in (0, .01, .03)], [rate(v, -1) for v in (0, .01, .03)]
    assert plus[0] > plus[1] > plus[2] and minus[0] < minus[1] < minus[2]


def test_projection_and_smoothing():
    np.testing.assert_allclose(project_l1_ball([.8, .6, -.2], 1.0), [.6, .4, 0], atol=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.normal(size=8) * 3; x = project_l1_ball(v, 2.0)
        assert x.min() >= 0 and x.sum() <= 2 + 1e-9
        np.testing.assert_allclose(project_l1_ball(x, 2.0), x, atol=1e-12)
        # optimality: no feasible point is closer (compare against random feasible points)
        for _ in range(20):
            z = project_l1_ball(rng.uniform(0, 1, 8), 2.0)
            assert np.linalg.norm(v - x) <= np.linalg.norm(v - z) + 1e-9
    z = rng.normal(size=(6, 3)); _, g = smooth_max(z, 0.05)
    fd = np.stack([(smooth_max(z + 1e-6 * np.eye(3)[j], .05)[0] - smooth_max(z - 1e-6 * np.eye(3)[j], .05)[0]) / 2e-6 for j in range(3)], 1)
    np.testing.assert_allclose(g, fd, atol=1e-5)


def test_hedge_update_closed_form():
    "Hedge's weight of theta after one step: 1 / (1 + (1 - w) / w * exp(-eta_w * (loss_phi - loss_theta))), written out."
    assert abs(hedge_update(0.5, 0.2, 0.8, 0.3) - 1 / (1 + np.exp(-0.3 * 0.6))) < 1e-12
    assert abs(hedge_update(0.2, 0.5, 0.1, 1.0) - 1 / (1 + 4 * np.exp(0.4))) < 1e-12


def test_metrics_from_counts_match_direct():
    y, a, k, p = _random_fl(9, 3, 3, 2)
    for notion in NOTIONS:
        mt = metrics_from_counts(prediction_counts(y, p, a, k, (3, 3, 2)), notion)
        assert abs(mt['global_subgroup'] - np.abs(direct_disparities(y, p, a, k, (3, 3, 2), notion)).max()) < 1e-12
        assert abs(mt['local_subgroup'] - np.abs(direct_disparities(y, p, a, k, (3, 3, 2), notion, 'local')).max()) < 1e-12
    # pairwise DP by hand for the pooled population
    rates = np.array([[(p[a == g] == c).mean() for c in range(3)] for g in range(3)])
    mt = metrics_from_counts(prediction_counts(y, p, a, k, (3, 3, 2)), 'dp')
    assert abs(mt['global_pairwise'] - (rates.max(0) - rates.min(0)).max()) < 1e-12


# ---------------------------------------------------------------- partitions
def test_partitions():
    rng = np.random.default_rng(0); a = rng.integers(0, 2, 4000); y = rng.integers(0, 2, 4000)
    k = dirichlet_partition(a, 5, 0.5, min_size=30, seed=2)
    n_ka = np.zeros((5, 2), int); np.add.at(n_ka, (k, a), 1)
    assert n_ka.min() >= 30
    np.testing.assert_array_equal(k, dirichlet_partition(a, 5, 0.5, min_size=30, seed=2))
    kh = heterogeneous_partition(a, y, 4, seed=0)
    for i in (0, 1):
        for j in (0, 1):   # every (a, y) cell is fully distributed
            assert np.bincount(kh[(a == i) & (y == j)], minlength=4).sum() == ((a == i) & (y == j)).sum()


def _old_dirichlet(a, n_clients, alpha, min_size, seed):
    "The literal Dir(alpha) split as first implemented (reference for the default scheme)."
    rng = np.random.default_rng(seed)
    while True:
        k = np.empty(len(a), int)
        for g in np.unique(a):
            idx = rng.permutation(np.nonzero(a == g)[0])
            cuts = (np.cumsum(rng.dirichlet(np.full(n_clients, alpha))) * len(idx)).astype(int)[:-1]
            for c, part in enumerate(np.split(idx, cuts)): k[part] = c
        n_ka = np.zeros((n_clients, 2), int); np.add.at(n_ka, (k, a), 1)
        if n_ka.min() >= min_size: return k


def test_dirichlet_schemes():
    rng = np.random.default_rng(1); a = (rng.random(6000) < 0.33).astype(int)
    for seed in range(3):   # the default scheme is the literal Dir(alpha) split, draw for draw
        np.testing.assert_array_equal(dirichlet_partition(a, 5, 0.5, min_size=20, seed=seed), _old_dirichlet(a, 5, 0.5, 20, seed))
    mins = {}
    for sch in ('as_given', 'logofair'):
        mins[sch] = []
        for seed in range(12):
            k = dirichlet_partition(a, 5, 0.5, min_size=20, seed=seed, scheme=sch)
            n_ka = np.zeros((5, 2), int); np.add.at(n_ka, (k, a), 1)
            assert n_ka.min() >= 20 and n_ka.sum() == len(a)
            if sch == 'logofair': assert (n_ka[:, 0] < len(a) / 5).all()   # balancing: nobody got >= n/N rows of the first group
            mins[sch].append(n_ka.min())
        np.testing.assert_array_equal(dirichlet_partition(a, 5, 0.5, seed=3, scheme=sch), dirichlet_partition(a, 5, 0.5, seed=3, scheme=sch))
    assert np.median(mins['logofair']) > np.median(mins['as_given'])   # Dir(2 alpha) is less lopsided
    with pytest.raises(ValueError, match="scheme"):
        dirichlet_partition(a, 5, 0.5, scheme='dir2')


def test_dp_noise_floor():
    c = np.zeros((1, 2, 2, 2)); c[0, :, 0, 0] = 80; c[0, :, 1, 1] = 20     # two groups of 100, both at rate 0.2
    se = np.sqrt(0.16 * 2 / 100)
    fl = dp_noise_floor(c, budget=0.04, n_sim=20000, seed=1)
    assert abs(fl['mean'] - se * np.sqrt(2 / np.pi)) < 0.003 and fl['min_cell'] == 100
    assert abs(fl['p_within'] - (2 * __import__('scipy').stats.norm.cdf(0.04 / se) - 1)) < 0.05
    se2 = np.sqrt(0.16 * 2 * (1 / 100 + 1 / 150))
    assert abs(dp_noise_floor(c, n_sim=20000, fit_counts=1.5 * c)['mean'] - se2 * np.sqrt(2 / np.pi)) < 0.004
    c5 = np.concatenate([c] * 5)   # the worst of five independent clients is larger
    assert dp_noise_floor(c5, n_sim=4000)['mean'] > 1.5 * fl['mean']


# ---------------------------------------------------------------- end to end (synthetic, small)
@pytest.fixture(scope="module")
def syn2():
    return synthetic_conflict(n=4000, seed=1)


@pytest.fixture(scope="module")
def base2(syn2):
    return FedAvg(n_rounds=5, local_steps=10, seed=0, **QUIET).fit(syn2)


@pytest.fixture(scope="module")
def post2(syn2, base2):
    "FedFACT-Post with budgets 0.02 (shared by the tests below, so the suite fits it once)."
    return post(syn2, base2, global_budget=0.02, local_budget=0.02, seed=0)


def test_post_meets_budgets_on_fitted_data(syn2, base2, post2):
    for xi in (0.02, 0.05):
        r = post2.report_ if xi == 0.02 else post(syn2, base2, global_budget=xi, local_budget=xi, seed=0).report_
        assert r.constraints_met
        assert r.train_global_gap <= xi + 0.01 and r.train_worst_local_gap <= xi + 0.01, r.summary()
    free = post(syn2, base2, global_budget=None, local_budget=None, seed=0).report_
    assert free.train_worst_local_gap > 0.1                 # the unconstrained plug-in rule is far from fair


def test_global_only_and_local_only(syn2, base2):
    rg = post(syn2, base2, global_budget=0.02, local_budget=None, seed=0).report_
    rl = post(syn2, base2, global_budget=None, local_budget=0.02, seed=0).report_
    assert rg.train_global_gap <= 0.03 and rl.train_worst_local_gap <= 0.03
    assert rg.train_worst_local_gap > rl.train_worst_local_gap + 0.02     # global fairness does not give local fairness


def test_large_budgets_recover_unconstrained(syn2, base2):
    r = post(syn2, base2, global_budget=1.0, local_budget=1.0, seed=0)
    assert np.all(r.payload_['lam'] == 0) and all(np.all(s['mu'] == 0) for s in r.client_states_)
    proto = r.protocol_
    for c, st in enumerate(r.client_states_):       # the rule is the plain argmax of the calibrated scores
        d = syn2.client(c)
        np.testing.assert_array_equal(proto.predict(c, r.payload_, st, d), proto.client_eta(r.payload_, st, d).argmax(1))
    # without the per-group calibration the plug-in scores are FedAvg's own, and large budgets give FedAvg exactly
    r_id = post(syn2, base2, global_budget=1.0, local_budget=1.0, seed=0, calibrate=False).report_
    assert r_id.table.equals(base2.report_.table) and r_id.accuracy == base2.report_.accuracy
    np.testing.assert_array_equal(FedFactPost(global_budget=1.0, local_budget=1.0, calibrate=False, base_model=base2, **QUIET).fit(syn2).predict(
        syn2.X_test, sensitive=syn2.a_test, clients=syn2.k_test), base2.predict(syn2.X_test))
    ri = inproc(syn2, base2, global_budget=1.0, local_budget=1.0, seed=0, n_rounds=2, local_steps=5)
    assert np.all(ri.payload_['lam'] == 0) and abs(ri.report_.accuracy - base2.report_.accuracy) < 0.03


def test_monotone_tradeoff(syn2, base2):
    res = [post(syn2, base2, global_budget=xi, local_budget=xi, seed=0).report_ for xi in (0.01, 0.05, 0.2)]
    acc = [r.accuracy for r in res]; loc = [r.train_worst_local_gap for r in res]
    assert acc[0] <= acc[2] + 0.005 and loc[0] <= loc[2] + 0.005


def test_multiclass_post_meets_budgets():
    fd = synthetic_conflict(n=6000, n_classes=3, seed=2)
    r0 = FedAvg(n_rounds=5, local_steps=10, seed=0, **QUIET).fit(fd)
    r = post(fd, r0, global_budget=0.03, local_budget=0.03, seed=0).report_
    assert fd.shape[0] == 3
    assert r.train_global_gap <= 0.04 and r.train_worst_local_gap <= 0.04, r.summary()
    r_free = post(fd, r0, global_budget=None, local_budget=None, seed=0).report_   # the unconstrained plug-in rule
    assert r_free.train_worst_local_gap > 0.08


@pytest.mark.parametrize("notion", ["eop", "eo"])
def test_post_meets_eop_eo_budgets(syn2, base2, notion):
    r = post(syn2, base2, notion=notion, global_budget=0.03, local_budget=0.03, seed=0).report_
    free = post(syn2, base2, notion=notion, global_budget=None, local_budget=None, seed=0).report_
    # the rule randomises in a few cells: its expected rates are audited (the realised draws add sampling noise)
    assert r.constraints_met and r.train_global_gap_expected <= 0.03 + 1e-6 and r.train_worst_local_gap_expected <= 0.03 + 1e-6, r.summary()
    assert free.train_worst_local_gap > 0.2


def test_in_processing_reduces_disparity(syn2, base2):
    r = inproc(syn2, base2, global_budget=0.02, local_budget=0.02, seed=0, n_rounds=15, local_steps=10).report_
    assert r.train_worst_local_gap < 0.6 * base2.report_.train_worst_local_gap, (r.summary(), base2.report_.summary())


IN_KW = dict(n_rounds=4, local_steps=5)


def test_in_history_same_seed_same_predictions(syn2, base2):
    "N_h > 1: a seeded randomised rule; same seed -> same predictions, and the draws do use several rounds."
    kw = dict(global_budget=0.02, local_budget=0.02, **IN_KW, n_history=3, mixture='uniform')
    with quiet(NumericalWarning):
        r1, r2, r3 = (inproc(syn2, base2, seed=s, **kw) for s in (5, 5, 6))
    proto = r1.protocol_; used_older = False
    for c in range(syn2.shape[2]):
        d = syn2.client(c, 'test')
        p1, p2 = (r.protocol_.predict(c, r.payload_, r.client_states_[c], d) for r in (r1, r2))
        np.testing.assert_array_equal(p1, p2)
        P = proto.rule_predictions(c, r1.payload_, r1.client_states_[c], d)
        assert P.shape == (3, len(d['y']))
        assert np.all((P == p1).any(0))                     # every prediction is one of the stored rules' predictions
        used_older |= bool((p1 != P[-1]).any())            # ... and not always the final rule's
        np.testing.assert_allclose(proto.predict_dist(c, r1.payload_, r1.client_states_[c], d).sum(1), 1.0)
    assert used_older
    assert r1.report_.table.equals(r2.report_.table) and np.array_equal(r1.report_.test_counts, r2.report_.test_counts)
    assert not np.array_equal(r1.report_.test_counts, r3.report_.test_counts)   # another seed, other draws (and another training run)
    # predict on new rows is seeded too: on the test rows it reproduces the evaluation's draws exactly
    pred = r1.predict(syn2.X_test, clients=syn2.k_test)
    np.testing.assert_array_equal(prediction_counts(syn2.y_test, pred, syn2.a_test, syn2.k_test, syn2.shape), r1.report_.test_counts)
    np.testing.assert_array_equal(pred, r2.predict(syn2.X_test, clients=syn2.k_test))


def test_in_history_mixture_rates_are_the_average_of_rounds(syn2, base2):
    "The randomised rule over the last N_h = T rounds has the average of the per-round rules' training rates."
    T, kw = 3, dict(global_budget=0.02, local_budget=0.02, seed=2, local_steps=IN_KW['local_steps'], mixture='uniform')
    with quiet(NumericalWarning):
        mix = inproc(syn2, base2, n_rounds=T, n_history=T, **kw)
        # the last iterate of a t-round run is round t's rule of the T-round run (same seed: same prefix)
        last = [inproc(syn2, base2, n_rounds=t, n_history=1, **kw).report_ for t in range(1, T + 1)]
    assert not np.array_equal(last[0].train_counts, last[-1].train_counts)   # the rounds' rules do differ
    avg_counts = np.mean([r.train_counts for r in last], 0)
    np.testing.assert_allclose(mix.report_.train_counts_expected, avg_counts, atol=1e-9)
    np.testing.assert_allclose(_expected_train_counts(mix, syn2), avg_counts, atol=1e-9)
    ex = metrics_from_counts(avg_counts)
    assert abs(mix.report_.train_global_gap_expected - ex['global_subgroup']) < 1e-9
    assert abs(mix.report_.train_worst_local_gap_expected - ex['local_subgroup']) < 1e-9
    # the sampled predictions follow the mixture: each cell's positive count is within 4 sd of its expectation
    exp_c = _expected_train_counts(mix, syn2)
    n_cell = exp_c.sum(3); p_hat = mix.report_.train_counts[..., 1] / np.maximum(n_cell, 1); p_exp = exp_c[..., 1] / np.maximum(n_cell, 1)
    assert np.all(np.abs(p_hat - p_exp) <= 4 * np.sqrt(0.25 / np.maximum(n_cell, 1)) + 1e-12)


def _expected_train_counts(r, fd):
    proto = r.protocol_; m, G, N = fd.shape; out = np.zeros((N, G, m, m))
    for c in range(N):
        d = fd.client(c, 'train'); P = proto.predict_dist(c, r.payload_, r.client_states_[c], d)
        for j in range(m): np.add.at(out[c, :, :, j], (d['a'], d['y']), P[:, j])
    return out


def test_bad_n_history():
    fd = synthetic_conflict(n=400, seed=0)
    for bad, err, msg in [(0, ValueError, r'n_history must be in \[1, inf\], got 0'), (-2, ValueError, r'n_history must be in \[1, inf\], got -2'),
                          (2.5, TypeError, 'n_history must be an integer'), ('3', TypeError, 'n_history must be an integer')]:
        with pytest.raises(err, match=msg):
            FedFactIn(n_history=bad, **QUIET).fit(fd)
    with pytest.raises(ValueError, match="dual_audit must be one of 'last', 'mixture'"):
        FedFactIn(dual_audit='avg', **QUIET).fit(fd)


def test_same_seed_same_result(syn2, base2, post2):
    r1 = post2; r2 = post(syn2, base2, global_budget=0.02, local_budget=0.02, seed=0)
    np.testing.assert_array_equal(r1.payload_['lam'], r2.payload_['lam'])
    assert r1.report_.table.equals(r2.report_.table)


def test_infeasible_budget_is_reported():
    fd = synthetic_conflict(n=500, seed=3)
    with pytest.warns(NumericalWarning, match='budget not met'):
        r = FedFactPost(global_budget=0.0, local_budget=0.0, tol=0.0, seed=0, n_rounds=5, base_model=FedAvg(n_rounds=2, local_steps=5, seed=0), **QUIET).fit(fd).report_
    assert r.constraints_met is False and any('budget not met' in n for n in r.notes)


# ---------------------------------------------------------------- the estimators: contract, warm start, prediction, curve
@pytest.fixture(scope="module")
def tiny():
    return synthetic_conflict(n=600, sizes=(0.6, 0.4), group_share=(0.7, 0.3), bias=(1.0, -1.0), seed=0)


TINY_AVG = dict(n_rounds=1, local_steps=3, **QUIET)


def test_estimator_contracts(tiny):
    with quiet(NumericalWarning):   # two rounds cannot meet the budgets; that is reported, and not the point here
        check_estimator_contract(FedAvg(**TINY_AVG), fit=lambda e: e.fit(tiny), output=lambda e: e.predict_proba(tiny.X_test))
        check_estimator_contract(FedFactPost(n_rounds=2, local_steps=2, base_model=FedAvg(**TINY_AVG), **QUIET), fit=lambda e: e.fit(tiny),
                                 output=lambda e: e.predict(tiny.X_test, sensitive=tiny.a_test, clients=tiny.k_test))
        check_estimator_contract(FedFactIn(n_rounds=2, local_steps=2, n_history=2, base_model=FedAvg(**TINY_AVG), **QUIET),
                                 fit=lambda e: e.fit(tiny), output=lambda e: e.predict(tiny.X_test, clients=tiny.k_test))


def test_warm_start_equals_one_pipeline(tiny):
    "A fitted FedAvg passed as base_model gives exactly what training it inside the FedFACT run gives (and is not retrained)."
    with quiet(NumericalWarning):
        avg = FedAvg(**TINY_AVG, seed=2).fit(tiny)
        warm = FedFactPost(n_rounds=2, base_model=avg, seed=1, **QUIET).fit(tiny)
        cold = FedFactPost(n_rounds=2, base_model=FedAvg(**TINY_AVG, seed=2), seed=1, **QUIET).fit(tiny)
    assert warm.base_model_ is avg and not warm.report_.round_log['stage'].eq('FedAvg').any()
    assert warm.report_.table.equals(cold.report_.table) and np.array_equal(warm.payload_['lam'], cold.payload_['lam'])
    assert cold.base_model_.report_.accuracy == avg.report_.accuracy
    assert np.isnan(cold.base_model_.report_.cpu_seconds) and np.isfinite(avg.report_.cpu_seconds) and avg.report_.cpu_seconds > 0
    for k, v in avg.weights_.items(): np.testing.assert_array_equal(cold.base_model_.weights_[k], v)


def test_explicit_runner_repr_and_clone(tiny):
    "InProcessRunner has no settings: its repr (and that of an estimator holding it) works, and clone copies it."
    assert repr(InProcessRunner()) == 'InProcessRunner()'
    for est in (FedAvg(runner=InProcessRunner()), FedFactPost(runner=InProcessRunner()), FedFactIn(runner=InProcessRunner(), seed=3)):
        assert 'runner=InProcessRunner()' in repr(est)
        c = clone(est)
        assert isinstance(c.runner, InProcessRunner) and c.runner is not est.runner and repr(c) == repr(est)
    fitted = FedAvg(runner=InProcessRunner(), **TINY_AVG).fit(tiny)
    assert fitted.report_.runner == 'in-process' and 'runner=InProcessRunner()' in repr(fitted)


def test_explorer_draws_fitted_gaps_as_bars_and_test_gaps_with_their_noise_band():
    "explore_fedfact: FedAvg's numbers are its fit's counts; bars are training-row gaps (FedFACT-Post's within xi_l), diamonds test gaps, whiskers the noise band."
    with quiet(DroppedRowsWarning, NumericalWarning):
        rep, fig = explore_fedfact(global_budget=0.02, local_budget=0.03, max_rows=3000, n_clients=3)
    fd, base = _explorer_base(0.5, 3000, 3, 0)
    again = metrics_from_counts(prediction_counts(fd.y_test, base.predict(fd.X_test), fd.a_test, fd.k_test, fd.shape))
    assert (rep.fedavg_accuracy, rep.fedavg_global_gap, rep.fedavg_worst_local_gap) == (again['accuracy'], again['global_pairwise'], again['local_pairwise'])
    fit_avg = metrics_from_counts(prediction_counts(fd.y, base.predict(fd.X), fd.a, fd.k, fd.shape))
    assert abs(rep.fedavg_train_worst_local_gap - fit_avg['local_subgroup']) < 1e-12
    ax1, ax2 = fig.axes[:2]
    assert list(ax2.lines[0].get_ydata()) == [0.03, 0.03] and 'subgroup' in ax2.get_ylabel()   # the xi_l line (then the whiskers' caps)
    post_main = FedFactPost(notion='dp', global_budget=0.02, local_budget=0.03, base_model=base, seed=0, **QUIET)
    with quiet(NumericalWarning):
        post_main = post_main.fit(fd).report_
    fit_post = metrics_from_counts(post_main.train_counts_expected)['client_subgroup']
    heights = sorted(round(b.get_height(), 9) for b in ax2.patches if b.get_height() > 0)
    assert heights == sorted(round(v, 9) for v in np.r_[fit_avg['client_subgroup'], fit_post] if v > 0)
    assert rep.constraints_met and (fit_post <= 0.03 + post_main.tolerance).all()      # the guarantee the bars show
    diamonds = ax2.collections[-1].get_offsets()[:, 1]
    np.testing.assert_allclose(diamonds, post_main.table['local_gap_subgroup'])
    band = dp_noise_floor(post_main.test_counts, fit_counts=post_main.train_counts, seed=0, form='subgroup')['client_q90']
    np.testing.assert_allclose(rep.clients.noise_q90, band)
    # left panel: the fitted-rows trade-off, one point per budget scale, monotone in the budget, each gap within its budget
    t = rep.table.sort_values('local_budget')
    assert (np.diff(t.train_accuracy) > -1e-3).all() and (t.train_worst_local_gap <= t.local_budget + post_main.tolerance).all()   # dual ascent: optimal to ~1e-3
    np.testing.assert_allclose(ax1.lines[0].get_ydata(), rep.table.train_accuracy)
    figure_html(fig)   # as shown: a figure wider than the column has its panels stacked, text at full size
    assert readability(fig).ok, readability(fig)


def test_noise_floor_subgroup_form_is_half_the_pairwise_for_two_equal_cells():
    "Two equal-sized groups: |r_a - client rate| = |r_a - r_b| / 2 on every simulated draw, so every quantile halves."
    c = np.zeros((2, 2, 2, 2)); c[:, :, 0, 0] = 70; c[:, :, 1, 1] = 30; c[1] *= 2
    pw, sg = dp_noise_floor(c, n_sim=500, seed=4), dp_noise_floor(c, n_sim=500, seed=4, form='subgroup')
    np.testing.assert_allclose(sg['client_q90'], pw['client_q90'] / 2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sg['client_mean'], pw['client_mean'] / 2, rtol=0, atol=1e-12)
    assert pw['client_q90'][0] > pw['client_q90'][1]      # the larger client's cells are less noisy
    u = c.copy(); u[0, 0] *= 3                             # unequal cells: the subgroup form is no longer half the pairwise
    assert not np.allclose(dp_noise_floor(u, n_sim=500, seed=4, form='subgroup')['client_q90'], dp_noise_floor(u, n_sim=500, seed=4)['client_q90'] / 2)


def test_post_predict_new_rows(syn2, post2):
    "predict(X, sensitive, clients) on the test rows reproduces the evaluation; groups by name or code, rows in any order."
    est = post2
    pred = est.predict(syn2.X_test, sensitive=syn2.a_test, clients=syn2.k_test)
    np.testing.assert_array_equal(prediction_counts(syn2.y_test, pred, syn2.a_test, syn2.k_test, syn2.shape), est.report_.test_counts)
    names = np.array(syn2.group_names)[syn2.a_test]
    np.testing.assert_array_equal(est.predict(syn2.X_test, sensitive=names, clients=syn2.k_test), pred)
    order = np.random.default_rng(0).permutation(len(pred))
    P = est.decision_distribution(syn2.X_test, sensitive=syn2.a_test, clients=syn2.k_test); sure = (P.max(1) == 1.0)[order]
    assert sure.mean() > 0.9              # the rule randomises only near a few thresholds; elsewhere the order of the rows is irrelevant
    np.testing.assert_array_equal(est.predict(syn2.X_test[order], sensitive=syn2.a_test[order], clients=syn2.k_test[order])[sure], pred[order][sure])
    with pytest.raises(ValueError, match='sensitive has group'):
        est.predict(syn2.X_test[:3], sensitive=['x', 'y', 'z'], clients=[0, 1, 2])


def test_tradeoff_curve_says_unmet_budgets_once(tiny):
    with quiet(NumericalWarning):
        avg = FedAvg(**TINY_AVG).fit(tiny)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        curve = tradeoff_curve(tiny, avg, budgets=(0.0, 1.0), estimator=FedFactPost(n_rounds=2, tol=0.0, **QUIET))
    unmet = [w for w in caught if issubclass(w.category, NumericalWarning)]
    assert len(unmet) == 1 and 'budget not met' in str(unmet[0].message) and '1 of 2' in str(unmet[0].message)
    assert curve['constraints_met'].tolist() == [False, True] and curve['xi'].tolist() == [0.0, 1.0]


# ---------------------------------------------------------------- the findings (each failed before the fix)
def test_fedavg_settings_that_train_nothing_are_refused(tiny):
    "batch_size=0 trained nothing and n_rounds=0 was reported as 'FedAvg'; local_steps=0 likewise."
    for kw, arg in [(dict(batch_size=0), 'batch_size'), (dict(n_rounds=0), 'n_rounds'), (dict(local_steps=0), 'local_steps')]:
        with pytest.raises(ValueError, match=rf"{arg} must be in \[1, inf\]"):
            FedAvg(**{**TINY_AVG, **kw}).fit(tiny)
        with pytest.raises(ValueError, match=rf"base_model: {arg} must be"):
            FedFactPost(base_model=FedAvg(**{**TINY_AVG, **kw}), **QUIET).fit(tiny)


def test_empty_client_is_an_error_not_nan():
    cnt = np.ones((3, 2, 2)); cnt[1] = 0                           # client 1 has no rows
    for level in ('global', 'local'):
        with warnings.catch_warnings():
            warnings.simplefilter('error', RuntimeWarning)         # no numpy division warning on the way
            with pytest.raises(ValueError, match=r'client\(s\) \[1\] have no rows'):
                fairness_matrices(cnt, 'dp', level)


def test_dirichlet_partition_refuses_fractional_codes():
    with pytest.raises(ValueError, match='a must hold group labels or integer codes, got fractional'):
        dirichlet_partition(np.r_[np.zeros(50), np.full(50, 0.7)], 2, 1.0, min_size=5)
    # labels work and split exactly like their codes
    a = np.repeat([0, 1], 60)
    np.testing.assert_array_equal(dirichlet_partition(np.where(a == 1, 'm', 'f'), 2, 1.0, min_size=5, seed=1),
                                  dirichlet_partition(a, 2, 1.0, min_size=5, seed=1))


@pytest.mark.parametrize("lr", [0.0, -0.01, float('nan'), float('inf')])
def test_learning_rates_are_checked_before_torch(tiny, lr):
    with pytest.raises(ValueError, match='lr must'):
        FedAvg(**TINY_AVG, lr=lr).fit(tiny)
    with pytest.raises(ValueError, match='lr must'):
        FedFactIn(lr=lr, **QUIET).fit(tiny)


OLD_ADULT_3000 = dict(sizes=(1800, 1200, 98), X_sum=10800.0, X_test_sum=7224.660609622092,
                      counts=[[[137, 17], [67, 22]], [[186, 27], [254, 121]], [[11, 0], [282, 137]], [[113, 22], [156, 66]], [[67, 9], [70, 36]]])


def test_adult_fed_data_is_built_on_adult_task():
    "The same rows, clients and features as the loader it replaced (numbers recorded from the old implementation)."
    with quiet(DroppedRowsWarning):
        fd = adult_fed_data(max_rows=3000, seed=0)
    assert fd.shape == (2, 2, 5) and fd.group_names == ['Female', 'Male'] and fd.class_names == ['<=50K', '>50K']
    assert (len(fd.y), len(fd.y_test), fd.X.shape[1]) == OLD_ADULT_3000['sizes']
    np.testing.assert_array_equal(fd.counts.astype(int), OLD_ADULT_3000['counts'])
    assert abs(fd.X.sum() - OLD_ADULT_3000['X_sum']) < 1e-6 and abs(fd.X_test.sum() - OLD_ADULT_3000['X_test_sum']) < 1e-6


# ---------------------------------------------------------------- bad inputs
def test_bad_inputs():
    with pytest.raises(ValueError, match='client 1 has no rows of group 0'):
        encode_fl([0, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1])
    with pytest.raises(ValueError, match='y has only one class'):
        encode_fl([1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 1, 1])
    with pytest.raises(ValueError, match='y has 4 but a has 3'):
        encode_fl([0, 1, 1, 0], [0, 1, 1], [0, 0, 1, 1])
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match=r'X_test must have shape \(any, 2\)'):
        make_fed_data(X, [0, 1, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1], np.zeros((4, 3)), [0, 1, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1])
    with pytest.raises(ValueError, match='test y has only one class'):
        make_fed_data(X, [0, 1, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1], X, [1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 1, 1])
    fd = synthetic_conflict(n=400, seed=0)
    with pytest.raises(ValueError, match=r'global_budget must be in \[0, inf\], got -0.01'):
        FedFactPost(global_budget=-0.01).fit(fd)
    with pytest.raises(ValueError, match=r'local_budget must be in \[0, inf\], got -1'):
        FedFactPost(local_budget=-1).fit(fd)
    with pytest.raises(ValueError, match="notion must be one of 'dp', 'eop', 'eo'"):
        FedFactPost(notion='parity').fit(fd)
    with pytest.raises(TypeError, match='fd must be a FedData'):
        FedFactPost().fit({'X': 1})
    with pytest.raises(TypeError, match='runner must be a FedRunner'):
        FedFactPost(runner='flower').fit(fd)
    with pytest.raises(ValueError, match='with label 2'):
        fairness_matrices(np.array([[[5, 5, 0], [5, 5, 1]], [[5, 5, 1], [5, 5, 1]]]), 'eop', 'local')
    with pytest.raises(ValueError, match=r'lam must have shape \(2, 4\)'):
        y, a, k, _ = _random_fl(0, 2, 2, 2); cnt = fl_counts(y, a, k)
        cost_matrix(cnt.sum(2) / cnt.sum(), fairness_matrices(cnt, 'dp'), np.zeros((2, 3)))
    with pytest.raises(ValueError, match='no Dirichlet'):
        dirichlet_partition(np.r_[np.zeros(50), np.ones(50)].astype(int), 5, 0.05, min_size=10, max_tries=5)


# ---------------------------------------------------------------- Flower (one short run)
def test_flower_matches_inprocess():
    pytest.importorskip('flwr')
    import ray
    from trustml_nb.fedfact_flower import FlowerRunner
    fd = synthetic_conflict(n=1200, sizes=(0.6, 0.4), group_share=(0.8, 0.3), bias=(1.0, -1.0), seed=0)
    kw = dict(n_rounds=1, local_steps=5, seed=3, **QUIET)
    with quiet(NumericalWarning):   # one round cannot meet the budget; that is reported, and not the point here
        r_in = FedFactPost(base_model=FedAvg(n_rounds=1, local_steps=5, seed=3), runner=InProcessRunner(), **kw).fit(fd)
        r_fl = FedFactPost(base_model=FedAvg(n_rounds=1, local_steps=5, seed=3), runner=FlowerRunner(), **kw).fit(fd)
    for key in ('w.weight', 'w.bias', 'lam'):
        np.testing.assert_array_equal(r_fl.payload_[key], r_in.payload_[key])
    assert r_fl.report_.table.equals(r_in.report_.table) and r_fl.report_.runner == 'Flower simulation'
    # the clients' private states come back at the evaluation, so the Flower fit predicts new rows like the in-process one
    np.testing.assert_array_equal(r_fl.predict(fd.X_test, sensitive=fd.a_test, clients=fd.k_test),
                                  r_in.predict(fd.X_test, sensitive=fd.a_test, clients=fd.k_test))
    assert r_fl.base_model_.report_.accuracy == r_in.base_model_.report_.accuracy
    assert not ray.is_initialized()


def test_in_history_survives_flower_records(syn2, base2):
    "Cheap check of the Flower path without Ray: a client's state with its N_h history round-trips through ArrayRecord."
    pytest.importorskip('flwr')
    from trustml_nb.fedfact_flower import from_record, to_record
    with quiet(NumericalWarning):
        r = inproc(syn2, base2, global_budget=0.02, local_budget=0.02, seed=1, **IN_KW, n_history=3)
    proto = r.protocol_; pay = from_record(to_record(r.payload_))
    for c, st in enumerate(r.client_states_):
        st2 = from_record(to_record(st)); d = {**syn2.client(c, 'test'), 'stream': 1}
        np.testing.assert_array_equal(proto.rule_predictions(c, pay, st2, d), proto.rule_predictions(c, r.payload_, st, d))
        np.testing.assert_array_equal(proto.predict(c, pay, st2, d), proto.predict(c, r.payload_, st, d))


@pytest.mark.slow
def test_flower_matches_inprocess_in_history():
    "FedFACT-In with N_h = 3 under Flower (about 30 s: a second Ray start): histories in context.state; the draws agree too."
    pytest.importorskip('flwr')
    import ray
    from trustml_nb.fedfact_flower import FlowerRunner
    fd = synthetic_conflict(n=1200, sizes=(0.6, 0.4), group_share=(0.8, 0.3), bias=(1.0, -1.0), seed=0)
    kw = dict(n_rounds=3, local_steps=5, n_history=3, seed=3, **QUIET)
    with quiet(NumericalWarning):
        r_in = FedFactIn(base_model=FedAvg(n_rounds=1, local_steps=5, seed=3), **kw).fit(fd)
        r_fl = FedFactIn(base_model=FedAvg(n_rounds=1, local_steps=5, seed=3), runner=FlowerRunner(), **kw).fit(fd)
    for key in ('w.weight', 'w.bias', 'lam'):
        np.testing.assert_array_equal(r_fl.payload_[key], r_in.payload_[key])
    np.testing.assert_array_equal(r_fl.report_.test_counts, r_in.report_.test_counts)
    np.testing.assert_array_equal(r_fl.report_.train_counts_expected, r_in.report_.train_counts_expected)
    assert r_fl.report_.table.equals(r_in.report_.table)
    np.testing.assert_array_equal(r_fl.predict(fd.X_test, clients=fd.k_test), r_in.predict(fd.X_test, clients=fd.k_test))
    assert not ray.is_initialized()


# ---------------------------------------------------------------- the exact fair optimum and randomised rules (issue 14)
from trustml_nb.core import PrefitClassifier
from trustml_nb.fedfact import FedFactInProtocol, expected_fairness, fair_optimum, known_eta_federation, make_model
from trustml_nb.fedfact_protocols import _client_post_grads, _local_train   # the protocols' inner steps, tested directly


def _top_share_curves(eta, grid):
    "Brute force: for one group, the expected accuracy, P(Yhat=1), TPR and TNR of 'predict 1 for the top r share by eta' at every r in grid."
    e = np.sort(eta)[::-1]; n = len(e)
    cum = lambda v: np.r_[0.0, np.cumsum(v)]
    pos = grid * n; i = np.floor(pos).astype(int).clip(0, n - 1); frac = pos - i
    at = lambda c, v: c[i] + frac * v[i]                    # the boundary row is randomised by the fractional part
    c_one, c_zero = cum(e), cum(1 - e)
    acc = (at(c_one, e) + (1 - e).sum() - at(c_zero, 1 - e)) / n
    return acc, grid, at(c_one, e) / e.sum(), ((1 - e).sum() - at(c_zero, 1 - e)) / (1 - e).sum()


@pytest.mark.parametrize("notion", ["dp", "eop"])
def test_fair_optimum_against_brute_force(notion):
    "One client, two groups, tied scores: the LP's optimum is never below the best of a 801 x 801 grid of randomised per-group thresholds."
    rng = np.random.default_rng(0)
    eta = np.r_[rng.choice([.2, .45, .7, .9], 40), rng.choice([.1, .35, .6], 30)]; a = np.r_[np.zeros(40, int), np.ones(30, int)]
    k = np.zeros(70, int); grid = np.linspace(0, 1, 801)
    (acc0, r0, t0, s0), (acc1, r1, t1, s1) = (_top_share_curves(eta[a == g], grid) for g in (0, 1))
    n0, n1 = 40, 30; tot = (n0 * acc0[:, None] + n1 * acc1[None]) / 70
    if notion == 'dp': rates = [(r0[:, None] + 0 * r1[None], 0 * r0[:, None] + r1[None], (n0 * r0[:, None] + n1 * r1[None]) / 70)]
    else:
        w1 = [eta[a == g].sum() for g in (0, 1)]; w0 = [(1 - eta[a == g]).sum() for g in (0, 1)]
        rates = [(t0[:, None] + 0 * t1[None], 0 * t0[:, None] + t1[None], (w1[0] * t0[:, None] + w1[1] * t1[None]) / sum(w1)),
                 (s0[:, None] + 0 * s1[None], 0 * s0[:, None] + s1[None], (w0[0] * s0[:, None] + w0[1] * s1[None]) / sum(w0))]
    for xi in (0.0, 0.03, 0.15, 1.0):
        ok = np.ones_like(tot, bool)
        for g0, g1, overall in rates: ok &= (np.abs(g0 - overall) <= xi + 1e-12) & (np.abs(g1 - overall) <= xi + 1e-12)
        best = tot[ok].max()
        r = fair_optimum(eta, a, k, global_budget=xi, notion=notion)
        assert r.accuracy >= best - 1e-9 and r.global_gap <= xi + 1e-7, (xi, r.accuracy, best)
        if notion == 'dp': assert r.accuracy <= best + 2e-3       # the grid's resolution (DP's optimum is a randomised threshold rule)
        ev = expected_fairness(eta, r.decision, a, k, notion)
        assert abs(ev['accuracy'] - r.accuracy) < 1e-12
    assert fair_optimum(eta, a, k, global_budget=0.0).n_randomised >= 1   # an exactly fair rule on tied scores must randomise


def test_fair_optimum_local_constraints_bind_per_client():
    fd, eta = known_eta_federation(n_clients=3, seed=4)
    free, loc = fair_optimum(eta, fd.a, fd.k), fair_optimum(eta, fd.a, fd.k, local_budget=0.01)
    assert free.worst_local_gap > 0.05 and loc.worst_local_gap <= 0.01 + 1e-7 and loc.accuracy <= free.accuracy + 1e-12
    np.testing.assert_array_equal(free.decision.argmax(1), (eta > 0.5).astype(int))          # no budget: the Bayes rule


@pytest.mark.parametrize("seed,xi_g,xi_l", [(0, 0.02, None), (1, None, 0.03), (2, 0.01, 0.03), (3, 0.05, 0.01)])
def test_post_reaches_the_fair_optimum_with_known_scores(seed, xi_g, xi_l):
    "FedFACT-Post handed the true eta (PrefitClassifier reads it from X): within 0.005 of the LP optimum, budgets met on expected rates."
    fd, eta = known_eta_federation(n_clients=3, seed=seed)
    opt = fair_optimum(eta, fd.a, fd.k, xi_g, xi_l)
    est = FedFactPost(global_budget=xi_g, local_budget=xi_l, calibrate=False, base_model=PrefitClassifier().fit(), **QUIET).fit(fd)
    P = est.decision_distribution(fd.X, fd.a, fd.k)
    np.testing.assert_allclose(P.sum(1), 1.0)
    ev = expected_fairness(eta, P, fd.a, fd.k)
    assert opt.accuracy - ev['accuracy'] <= 0.005 and ev['accuracy'] <= opt.accuracy + 1e-9
    if xi_g is not None: assert ev['global_gap'] <= xi_g + 0.002
    if xi_l is not None: assert ev['worst_local_gap'] <= xi_l + 0.002
    assert est.report_.constraints_met


def test_post_randomises_on_tied_scores():
    "Every (client, group) cell shares one score: no deterministic rule can equalise the rates, the randomised one does, and its draws follow it."
    rng = np.random.default_rng(1); k = np.repeat([0, 0, 1, 1], [300, 200, 250, 350]); a = np.repeat([0, 1, 0, 1], [300, 200, 250, 350])
    eta = np.repeat([0.7, 0.4, 0.65, 0.3], [300, 200, 250, 350]); y = (rng.random(len(eta)) < eta).astype(int)
    fd = make_fed_data(eta[:, None], y, a, k, eta[:, None], y, a, k)
    for xi_g, xi_l in ((0.02, 0.02), (0.0, None)):
        est = FedFactPost(global_budget=xi_g, local_budget=xi_l, calibrate=False, base_model=PrefitClassifier().fit(), **QUIET).fit(fd)
        P = est.decision_distribution(fd.X, fd.a, fd.k); ev = expected_fairness(eta, P, a, k)
        opt = fair_optimum(eta, a, k, xi_g, xi_l)
        if opt.n_randomised: assert ((P[:, 1] > 1e-9) & (P[:, 1] < 1 - 1e-9)).any()   # randomised where the optimum is
        assert ev['global_gap'] <= xi_g + 1e-6 and (xi_l is None or ev['worst_local_gap'] <= xi_l + 1e-6)
        assert opt.accuracy - ev['accuracy'] <= 0.005
        r = est.report_                                                   # audited on expected counts; the realised draws follow them
        np.testing.assert_allclose(r.train_counts_expected.sum((2, 3)), r.train_counts.sum((2, 3)))
        realised, expected = r.train_counts[..., 1].sum(2), r.train_counts_expected[..., 1].sum(2)
        assert np.all(np.abs(realised - expected) <= 4 * np.sqrt(fd.counts.sum(2) / 4) + 1)
        assert r.train_global_gap_expected <= xi_g + 1e-6


def test_in_final_mixture_meets_budgets(syn2, base2):
    "FedFACT-In's final LP mixes the last N_h rules and the constant rules: budgets met on the expected rates of the fitted data."
    r = inproc(syn2, base2, global_budget=0.02, local_budget=0.02, seed=0, n_rounds=6, local_steps=5)
    rep = r.report_
    assert rep.constraints_met and rep.train_global_gap_expected <= 0.02 + 1e-6 and rep.train_worst_local_gap_expected <= 0.02 + 1e-6
    mix = r.payload_['mix']; assert mix.shape[:2] == (3, 1) and mix.shape[2] >= 2 + 2 and np.allclose(mix.sum(2), 1)
    P = r.decision_distribution(syn2.X, clients=syn2.k)
    exp = prediction_counts(syn2.y, np.zeros(len(syn2.y), int), syn2.a, syn2.k, syn2.shape)   # re-built from the distribution
    exp[..., 0] = 0
    for j in range(2): np.add.at(exp[..., j], (syn2.k, syn2.a, syn2.y), P[:, j])
    np.testing.assert_allclose(exp, rep.train_counts_expected, atol=1e-9)
    assert rep.accuracy >= base2.report_.accuracy - 0.15


# ---------------------------------------------------------------- package code against references it did not compute (issue 15)
def test_cost_sensitive_training_reaches_the_calibrated_minimiser():
    "FedFACT-In's cost-sensitive CE (`_local_train` with rows of Mbar): on a constant feature the model's softmax -> Mbar^T eta / sum (closed form)."
    import torch
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], [500, 300, 200]); X = np.ones((len(y), 1)); cnt = fl_counts(y, np.r_[np.zeros(500, int), np.ones(500, int)], np.zeros(1000, int))
    proto = FedFactInProtocol(1, 3, cnt, 'dp', 0.01, 0.01, n_rounds=1)
    Mbar = proto.cost_matrices(0, rng.uniform(0, .5, (2, proto.Ug)), rng.uniform(0, .5, (2, proto.Ul)))[0]       # group 0's cost matrix
    assert (Mbar > 0).all()
    model = make_model(1, 3, seed=0)
    _local_train(model, X, y, rng, steps=1500, lr=0.05, batch_size=len(y), row_weights=Mbar[y])
    with torch.no_grad(): p = torch.softmax(model(torch.ones(1, 1, dtype=torch.float64)), 1).numpy()[0]
    v = Mbar.T @ (np.bincount(y) / len(y))
    np.testing.assert_allclose(p, v / v.sum(), atol=2e-3)


def test_client_shares_add_up_to_the_direct_disparities():
    "The bi-level split: each client's share from `_client_post_grads` (sharp smoothing) adds up to the global DP gaps, and scales to its local gaps, computed from frequencies."
    y, a, k, _ = _random_fl(8, 2, 2, 3)
    cnt = fl_counts(y, a, k); p_ak = cnt.sum(2) / cnt.sum(); p_k = p_ak.sum(1)
    Dg, Dl = fairness_matrices(cnt, 'dp', 'global'), fairness_matrices(cnt, 'dp', 'local')
    rng = np.random.default_rng(0); lam, mu = rng.uniform(0, .3, (2, 4)), rng.uniform(0, .3, (3, 2, 4))
    eta = rng.dirichlet(np.ones(2), len(y)); M = cost_matrix(p_ak, Dg, lam, Dl, mu)
    pred = np.einsum('ir,irj->ij', eta, M[k, a]).argmax(1)
    glob = np.zeros(4)
    for c in range(3):
        idx = np.flatnonzero(k == c)
        _, dg, dl = _client_post_grads(eta[idx], [np.flatnonzero(a[idx] == g) for g in range(2)], M[c], Dg[:, c], Dl[c], p_ak[c], len(idx), 1e-7)
        glob += dg * p_k[c]
        np.testing.assert_allclose(dl * p_k[c], direct_disparities(y, pred, a, k, (2, 2, 3), 'dp', 'local')[c], atol=1e-9)
    np.testing.assert_allclose(glob, direct_disparities(y, pred, a, k, (2, 2, 3), 'dp', 'global'), atol=1e-9)


@pytest.mark.slow
def test_deployment_matches_inprocess():
    "Flower's Deployment Engine (a SuperLink and two SuperNodes, separate processes on 127.0.0.1) gives the in-process results (1e-9)."
    pytest.importorskip('flwr')
    from trustml_nb.fedfact_flower import DeploymentRunner
    fd = synthetic_conflict(n=1200, sizes=(0.6, 0.4), group_share=(0.8, 0.3), bias=(1.0, -1.0), seed=0)
    kw = dict(n_rounds=2, local_steps=5, seed=3, **QUIET)
    with quiet(NumericalWarning):
        r_in = FedFactPost(base_model=FedAvg(n_rounds=1, local_steps=5, seed=3), runner=InProcessRunner(), **kw).fit(fd)
        r_dep = FedFactPost(base_model=FedAvg(n_rounds=1, local_steps=5, seed=3), runner=DeploymentRunner(timeout=900), **kw).fit(fd)
    for key in ('w.weight', 'w.bias', 'lam', 'mix'):
        np.testing.assert_allclose(r_dep.payload_[key], r_in.payload_[key], rtol=0, atol=1e-9)
    for a_, b_ in zip(r_dep.client_states_, r_in.client_states_):
        for key in ('mu', 'tau', 'q'): np.testing.assert_allclose(a_[key], b_[key], rtol=0, atol=1e-9)
    np.testing.assert_allclose(r_dep.report_.test_counts, r_in.report_.test_counts, atol=1e-9)
    np.testing.assert_allclose(r_dep.report_.train_counts_expected, r_in.report_.train_counts_expected, atol=1e-9)
    assert r_dep.report_.runner == 'Flower deployment'
    np.testing.assert_array_equal(r_dep.predict(fd.X_test, sensitive=fd.a_test, clients=fd.k_test),
                                  r_in.predict(fd.X_test, sensitive=fd.a_test, clients=fd.k_test))
