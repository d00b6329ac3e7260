"""Tests for trustml_nb.fedfact (and one short Flower run of trustml_nb.fedfact_flower).

Exact identities first (D matrices against directly computed rates, cost matrix, projection, smoothing gradient,
bi-level split, binary threshold reduction, dual direction), then small end-to-end runs on synthetic federations
(constraints met on the fitted data, large budgets recover the unconstrained rule, multi-class, infeasible budgets
reported), bad inputs, and Flower == in-process on two clients.
"""
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

from trustml_nb.core import NumericalWarning
from trustml_nb.fedfact import (NOTIONS, FedData, calibrate, confusion_matrices, cost_matrix, direct_disparities,
                                dirichlet_partition, disparities, dp_noise_floor, encode_fl, fairness_matrices, fedfact, fl_counts,
                                hedge_update, heterogeneous_partition, make_fed_data, metrics_from_counts,
                                positivity_shift, prediction_counts, project_l1_ball, smooth_max, synthetic_conflict)

QUIET = dict(show_progress=False)


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


def test_bilevel_split_and_hedge():
    y, a, k, _ = _random_fl(8, 2, 2, 3)
    cnt = fl_counts(y, a, k); p_ak = cnt.sum(2) / cnt.sum(); p_k = p_ak.sum(1)
    Dg, Dl = fairness_matrices(cnt, 'dp', 'global'), fairness_matrices(cnt, 'dp', 'local')
    rng = np.random.default_rng(0); lam, mu = rng.uniform(0, .1, (2, 4)), rng.uniform(0, .1, (3, 2, 4))
    eta = rng.dirichlet(np.ones(2), len(y)); M = cost_matrix(p_ak, Dg, lam, Dl, mu)
    xi_g, xi_l = 0.01, 0.03
    H = np.einsum('ir,irj->ij', eta, M[k, a]).max(1).mean() + xi_g * lam.sum() + xi_l * mu.sum()
    Hk = [np.einsum('ir,irj->ij', eta[k == c], M[c][a[k == c]]).max(1).mean() + xi_g * lam.sum() + xi_l / p_k[c] * mu[c].sum() for c in range(3)]
    assert abs((p_k * np.array(Hk)).sum() - H) < 1e-12
    assert abs(hedge_update(0.5, 0.2, 0.8, 0.3) - 0.54488) < 1e-5


def test_cost_sensitive_loss_is_calibrated():
    rng = np.random.default_rng(3)
    for _ in range(3):
        Mb, eta = rng.uniform(0, 1, (4, 4)), rng.dirichlet(np.ones(4)); v = Mb.T @ eta
        s = minimize(lambda s: -(v * (s - np.log(np.exp(s).sum()))).sum(), np.zeros(4), method='BFGS', options={'gtol': 1e-10}).x
        np.testing.assert_allclose(np.exp(s) / np.exp(s).sum(), v / v.sum(), atol=1e-6)


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
    return fedfact(syn2, 'fedavg', seed=0, fedavg_kw=dict(n_rounds=5, local_steps=10), **QUIET)


def test_post_meets_budgets_on_fitted_data(syn2, base2):
    for xi in (0.02, 0.05):
        r = fedfact(syn2, 'post', xi_g=xi, xi_l=xi, base=base2, seed=0, **QUIET)
        assert r['constraints_met']
        assert r['train_global_subgroup'] <= xi + 0.01 and r['train_local_subgroup'] <= xi + 0.01, r.summary
    free = fedfact(syn2, 'post', xi_g=None, xi_l=None, base=base2, seed=0, **QUIET)
    assert free['train_local_subgroup'] > 0.1                 # the unconstrained plug-in rule is far from fair


def test_global_only_and_local_only(syn2, base2):
    rg = fedfact(syn2, 'post', xi_g=0.02, xi_l=None, base=base2, seed=0, **QUIET)
    rl = fedfact(syn2, 'post', xi_g=None, xi_l=0.02, base=base2, seed=0, **QUIET)
    assert rg['train_global_subgroup'] <= 0.03 and rl['train_local_subgroup'] <= 0.03
    assert rg['train_local_subgroup'] > rl['train_local_subgroup'] + 0.02     # global fairness does not give local fairness


def test_large_budgets_recover_unconstrained(syn2, base2):
    r = fedfact(syn2, 'post', xi_g=1.0, xi_l=1.0, base=base2, seed=0, **QUIET)
    assert np.all(r.payload['lam'] == 0) and all(np.all(s['mu'] == 0) for s in r.states)
    proto = r.protocols[-1]
    for c, st in enumerate(r.states):       # the rule is the plain argmax of the calibrated scores
        d = syn2.client(c)
        np.testing.assert_array_equal(proto.predict(c, r.payload, st, d), proto.client_eta(r.payload, st, d).argmax(1))
    # without the per-group calibration the plug-in scores are FedAvg's own, and large budgets give FedAvg exactly
    r_id = fedfact(syn2, 'post', xi_g=1.0, xi_l=1.0, base=base2, seed=0, method_kw=dict(calibrate=False), **QUIET)
    assert r_id.table.equals(base2.table) and r_id['accuracy'] == base2['accuracy']
    ri = fedfact(syn2, 'in', xi_g=1.0, xi_l=1.0, base=base2, seed=0, method_kw=dict(n_rounds=2, local_steps=5), **QUIET)
    assert np.all(ri.payload['lam'] == 0) and abs(ri['accuracy'] - base2['accuracy']) < 0.03


def test_monotone_tradeoff(syn2, base2):
    res = [fedfact(syn2, 'post', xi_g=xi, xi_l=xi, base=base2, seed=0, **QUIET) for xi in (0.01, 0.05, 0.2)]
    acc = [r['accuracy'] for r in res]; loc = [r['train_local_subgroup'] for r in res]
    assert acc[0] <= acc[2] + 0.005 and loc[0] <= loc[2] + 0.005


def test_multiclass_post_meets_budgets():
    fd = synthetic_conflict(n=6000, n_classes=3, seed=2)
    r0 = fedfact(fd, 'fedavg', seed=0, fedavg_kw=dict(n_rounds=5, local_steps=10), **QUIET)
    r = fedfact(fd, 'post', xi_g=0.03, xi_l=0.03, base=r0, seed=0, **QUIET)
    assert fd.shape[0] == 3
    assert r['train_global_subgroup'] <= 0.04 and r['train_local_subgroup'] <= 0.04, r.summary
    r_free = fedfact(fd, 'post', xi_g=None, xi_l=None, base=r0, seed=0, **QUIET)   # the unconstrained plug-in rule
    assert r_free['train_local_subgroup'] > 0.08


@pytest.mark.parametrize("notion", ["eop", "eo"])
def test_post_meets_eop_eo_budgets(syn2, base2, notion):
    r = fedfact(syn2, 'post', notion=notion, xi_g=0.03, xi_l=0.03, base=base2, seed=0, **QUIET)
    free = fedfact(syn2, 'post', notion=notion, xi_g=None, xi_l=None, base=base2, seed=0, **QUIET)
    assert r['train_global_subgroup'] <= 0.04 and r['train_local_subgroup'] <= 0.04, r.summary
    assert free['train_local_subgroup'] > 0.2


def test_in_processing_reduces_disparity(syn2, base2):
    r = fedfact(syn2, 'in', xi_g=0.02, xi_l=0.02, base=base2, seed=0, method_kw=dict(n_rounds=15, local_steps=10), **QUIET)
    assert r['train_local_subgroup'] < 0.6 * base2['train_local_subgroup'], (r.summary, base2.summary)


IN_KW = dict(n_rounds=4, local_steps=5)


def test_in_history_same_seed_same_predictions(syn2, base2):
    "N_h > 1: a seeded randomised rule; same seed -> same predictions, and the draws do use several rounds."
    kw = dict(xi_g=0.02, xi_l=0.02, base=base2, **QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', NumericalWarning)
        r1 = fedfact(syn2, 'in', seed=5, method_kw=dict(IN_KW, n_history=3), **kw)
        r2 = fedfact(syn2, 'in', seed=5, method_kw=dict(IN_KW, n_history=3), **kw)
        r3 = fedfact(syn2, 'in', seed=6, method_kw=dict(IN_KW, n_history=3), **kw)
    proto = r1.protocols[-1]; used_older = False
    for c in range(syn2.shape[2]):
        d = syn2.client(c, 'test')
        p1, p2 = (r.protocols[-1].predict(c, r.payload, r.states[c], d) for r in (r1, r2))
        np.testing.assert_array_equal(p1, p2)
        P = proto.rule_predictions(c, r1.payload, r1.states[c], d)
        assert P.shape == (3, len(d['y']))
        assert np.all((P == p1).any(0))                     # every prediction is one of the stored rules' predictions
        used_older |= bool((p1 != P[-1]).any())            # ... and not always the final rule's
        np.testing.assert_allclose(proto.predict_dist(c, r1.payload, r1.states[c], d).sum(1), 1.0)
    assert used_older
    assert r1.table.equals(r2.table) and np.array_equal(r1.test_counts, r2.test_counts)
    assert not np.array_equal(r1.test_counts, r3.test_counts)   # another seed, other draws (and another training run)


def test_in_history_mixture_rates_are_the_average_of_rounds(syn2, base2):
    "The randomised rule over the last N_h = T rounds has the average of the per-round rules' training rates."
    T, kw = 3, dict(xi_g=0.02, xi_l=0.02, base=base2, seed=2, **QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', NumericalWarning)
        mix = fedfact(syn2, 'in', method_kw=dict(IN_KW, n_rounds=T, n_history=T), **kw)
        # the last iterate of a t-round run is round t's rule of the T-round run (same seed: same prefix)
        last = [fedfact(syn2, 'in', method_kw=dict(IN_KW, n_rounds=t), **kw) for t in range(1, T + 1)]
    assert not np.array_equal(last[0].train_counts, last[-1].train_counts)   # the rounds' rules do differ
    avg_counts = np.mean([r.train_counts for r in last], 0)
    np.testing.assert_allclose(mix.train_counts_expected, avg_counts, atol=1e-9)
    np.testing.assert_allclose(_expected_train_counts(mix, syn2), avg_counts, atol=1e-9)
    ex = metrics_from_counts(avg_counts)
    assert abs(mix['train_global_subgroup_expected'] - ex['global_subgroup']) < 1e-9
    assert abs(mix['train_local_subgroup_expected'] - ex['local_subgroup']) < 1e-9
    # the sampled predictions follow the mixture: each cell's positive count is within 4 sd of its expectation
    exp_c = _expected_train_counts(mix, syn2)
    n_cell = exp_c.sum(3); p_hat = mix.train_counts[..., 1] / np.maximum(n_cell, 1); p_exp = exp_c[..., 1] / np.maximum(n_cell, 1)
    assert np.all(np.abs(p_hat - p_exp) <= 4 * np.sqrt(0.25 / np.maximum(n_cell, 1)) + 1e-12)


def _expected_train_counts(r, fd):
    proto = r.protocols[-1]; m, G, N = fd.shape; out = np.zeros((N, G, m, m))
    for c in range(N):
        d = fd.client(c, 'train'); P = proto.predict_dist(c, r.payload, r.states[c], d)
        for j in range(m): np.add.at(out[c, :, :, j], (d['a'], d['y']), P[:, j])
    return out


def test_bad_n_history():
    fd = synthetic_conflict(n=400, seed=0)
    for bad, err, msg in [(0, ValueError, r'n_history must be in \[1, inf\], got 0'), (-2, ValueError, r'n_history must be in \[1, inf\], got -2'),
                          (2.5, TypeError, 'n_history must be an integer'), ('3', TypeError, 'n_history must be an integer')]:
        with pytest.raises(err, match=msg):
            fedfact(fd, 'in', method_kw=dict(n_history=bad), **QUIET)
    with pytest.raises(ValueError, match="dual_audit must be one of 'last', 'mixture'"):
        fedfact(fd, 'in', method_kw=dict(dual_audit='avg'), **QUIET)


def test_same_seed_same_result(syn2, base2):
    r1 = fedfact(syn2, 'post', base=base2, seed=4, **QUIET); r2 = fedfact(syn2, 'post', base=base2, seed=4, **QUIET)
    np.testing.assert_array_equal(r1.payload['lam'], r2.payload['lam'])
    assert r1.table.equals(r2.table)


def test_infeasible_budget_is_reported():
    fd = synthetic_conflict(n=500, seed=3)
    with pytest.warns(NumericalWarning, match='budget not met'):
        r = fedfact(fd, 'post', xi_g=0.0, xi_l=0.0, tol=0.0, seed=0, fedavg_kw=dict(n_rounds=2, local_steps=5),
                    method_kw=dict(n_rounds=5), **QUIET)
    assert r['constraints_met'] is False and any('budget not met' in n for n in r.notes)


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
    with pytest.raises(ValueError, match=r'xi_g must be in \[0, inf\], got -0.01'):
        fedfact(fd, 'post', xi_g=-0.01)
    with pytest.raises(ValueError, match=r'xi_l must be in \[0, inf\], got -1'):
        fedfact(fd, 'post', xi_l=-1)
    with pytest.raises(ValueError, match="notion must be one of 'dp', 'eop', 'eo'"):
        fedfact(fd, 'post', notion='parity')
    with pytest.raises(TypeError, match='fd must be a FedData'):
        fedfact({'X': 1})
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
    fd = synthetic_conflict(n=1200, sizes=(0.6, 0.4), group_share=(0.8, 0.3), bias=(1.0, -1.0), seed=0)
    kw = dict(fedavg_kw=dict(n_rounds=1, local_steps=5), method_kw=dict(n_rounds=1, local_steps=5), **QUIET)
    with warnings.catch_warnings():   # one round cannot meet the budget; that is reported, and not the point here
        warnings.simplefilter('ignore', NumericalWarning)
        r_in = fedfact(fd, 'post', seed=3, **kw)
        r_fl = fedfact(fd, 'post', seed=3, backend='flower', **kw)
    for key in ('w.weight', 'w.bias', 'lam'):
        np.testing.assert_array_equal(r_fl.payload[key], r_in.payload[key])
    assert r_fl.table.equals(r_in.table)
    assert not ray.is_initialized()


def test_in_history_survives_flower_records(syn2, base2):
    "Cheap check of the Flower path without Ray: a client's state with its N_h history round-trips through ArrayRecord."
    pytest.importorskip('flwr')
    from trustml_nb.fedfact_flower import from_record, to_record
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', NumericalWarning)
        r = fedfact(syn2, 'in', xi_g=0.02, xi_l=0.02, base=base2, seed=1, method_kw=dict(IN_KW, n_history=3), **QUIET)
    proto = r.protocols[-1]; pay = from_record(to_record(r.payload))
    for c, st in enumerate(r.states):
        st2 = from_record(to_record(st)); d = {**syn2.client(c, 'test'), 'stream': 1}
        np.testing.assert_array_equal(proto.rule_predictions(c, pay, st2, d), proto.rule_predictions(c, r.payload, st, d))
        np.testing.assert_array_equal(proto.predict(c, pay, st2, d), proto.predict(c, r.payload, st, d))


@pytest.mark.slow
def test_flower_matches_inprocess_in_history():
    "FedFACT-In with N_h = 3 under Flower (about 30 s: a second Ray start): histories in context.state; the draws agree too."
    pytest.importorskip('flwr')
    import ray
    fd = synthetic_conflict(n=1200, sizes=(0.6, 0.4), group_share=(0.8, 0.3), bias=(1.0, -1.0), seed=0)
    kw = dict(fedavg_kw=dict(n_rounds=1, local_steps=5), method_kw=dict(n_rounds=3, local_steps=5, n_history=3), **QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', NumericalWarning)
        r_in = fedfact(fd, 'in', seed=3, **kw)
        r_fl = fedfact(fd, 'in', seed=3, backend='flower', **kw)
    for key in ('w.weight', 'w.bias', 'lam'):
        np.testing.assert_array_equal(r_fl.payload[key], r_in.payload[key])
    np.testing.assert_array_equal(r_fl.test_counts, r_in.test_counts)
    np.testing.assert_array_equal(r_fl.train_counts_expected, r_in.train_counts_expected)
    assert r_fl.table.equals(r_in.table)
    assert not ray.is_initialized()
