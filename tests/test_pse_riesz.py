"""Learned Riesz representers of the path-specific-effects functionals (trustml_nb.pse, issue 40): the closed-form check
against the exact weights of the binary generator, the sieve's closed form against a brute-force minimisation of the Riesz
loss, determinism per seed, the weights= option of PathSpecificEffects and its bad values."""
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from trustml_nb.pse import (RIESZ_WEIGHTS, PathSpecificEffects, _poly_basis, _sieve_coef, _standardiser, crossfit_gmf, gmf_estimate,
                            gmf_weights, riesz_weights)
from trustml_nb.pse_simulator import binary_sfm_nuisances, sim_binary_sfm


def _riesz_error(method, n, a=(1, 0, 1), seed=0, n_test=20_000):
    "RMSE per stage of the learned weights of psi(a) (fitted on n rows) against the exact ones, on n_test fresh rows."
    d = pd.concat([sim_binary_sfm(n, seed=seed).data, sim_binary_sfm(n_test, seed=seed + 1000).data], ignore_index=True)
    nu = binary_sfm_nuisances(d)
    true = gmf_weights(d.x, [nu['e1'], nu['e2'], nu['e3']], a)[n:]
    learned = riesz_weights(d.x, [d[['z']], d[['w']], d[['v']]], a, method, train=np.arange(n), test=np.arange(n, len(d)), seed=seed)
    return np.sqrt(((learned - true) ** 2).mean(0))


@pytest.mark.parametrize('method', ['riesz_sieve', 'riesz_net'])
def test_learned_riesz_converges_to_the_exact_weights(method):
    "The exact check: on the binary generator the learned representer of psi(1,0,1) approaches the closed form as n grows, every stage."
    err = np.array([_riesz_error(method, n) for n in (1_000, 4_000, 16_000)])     # rows: n; columns: stages
    assert np.all(np.diff(err.sum(1)) < 0), err                                   # the total error shrinks with n
    assert np.all(err[-1] < 0.5 * err[0]), err                                    # and every stage's, from 1,000 to 16,000 rows
    assert err[-1, 0] < 0.05 and err[-1, 2] < 0.3, err                            # small where the weights are not extreme
    if method == 'riesz_sieve':                                                   # the sieve holds every function of binary (Z, W, V):
        assert np.all(np.diff(err, axis=0) < 0), err                              # every stage shrinks at every step
        assert err[-1, 0] < 0.01, err


def test_sieve_is_the_riesz_loss_minimiser():
    "The closed form against BFGS on the full exposure-crossed basis [1{X=a}B, 1{X!=a}B]: same f, and the X != a half is zero."
    rng = np.random.default_rng(7)
    H = rng.normal(size=(400, 3)); on = rng.binomial(1, 1 / (1 + np.exp(-H[:, 0]))).astype(float); prev = rng.uniform(0.3, 3, 400)
    B = _poly_basis(_standardiser(H)(H), 2)
    beta = _sieve_coef(B, on, prev, 1e-3)
    full, at_a = np.hstack([B * on[:, None], B * (1 - on[:, None])]), np.hstack([B, 0 * B])
    loss = lambda b: np.mean((full @ b) ** 2 - 2 * prev * (at_a @ b)) + 1e-3 * b @ b
    grad = lambda b: 2 * full.T @ (full @ b) / len(B) - 2 * at_a.T @ prev / len(B) + 2e-3 * b
    bf = minimize(loss, np.zeros(full.shape[1]), jac=grad, method='BFGS', options=dict(gtol=1e-12, maxiter=10_000)).x
    np.testing.assert_allclose(bf[:B.shape[1]], beta, atol=1e-6)
    np.testing.assert_allclose(bf[B.shape[1]:], 0, atol=1e-6)
    assert loss(np.r_[beta, 0 * beta]) <= loss(bf) + 1e-12


def test_riesz_weights_structure():
    "Zero unless X = a_k; equal consecutive stages share their weight; weights have mean near one (E[alpha_k] = 1)."
    d = sim_binary_sfm(8_000, seed=3).data
    W = riesz_weights(d.x, [d[['z']], d[['w']], d[['v']]], (0, 0, 1), 'riesz_sieve')
    x = d.x.to_numpy()
    assert np.all(W[x == 1, :2] == 0) and np.all(W[x == 0, 2] == 0)
    np.testing.assert_array_equal(W[:, 0], W[:, 1])
    np.testing.assert_allclose(W.mean(0), 1, atol=0.05)


def test_net_is_deterministic_per_seed():
    d = sim_binary_sfm(1_500, seed=4).data
    blocks = [d[['z']], d[['w']], d[['v']]]
    one = riesz_weights(d.x, blocks, (1, 0, 1), 'riesz_net', seed=5)
    np.testing.assert_array_equal(one, riesz_weights(d.x, blocks, (1, 0, 1), 'riesz_net', seed=5))
    assert not np.array_equal(one, riesz_weights(d.x, blocks, (1, 0, 1), 'riesz_net', seed=6))
    np.random.seed(0); a = np.random.random()
    riesz_weights(d.x, blocks, (1, 0, 1), 'riesz_net', seed=5)
    np.random.seed(0); assert np.random.random() == a                           # the global generators are left alone


def _est(**kw):
    return PathSpecificEffects(exposure='x', covariates=['z'], mediators_first=['w'], mediators_second=['v'], outcome='y',
                               learners='glm', warn=False, **kw)


def test_option_estimates_the_binary_effects():
    "weights='riesz_sieve' on 10,000 units of the binary generator: every effect within 3.5 SE of its exact value, the same report."
    sim = sim_binary_sfm(10_000, seed=11)
    rep = _est(weights='riesz_sieve', star=False).fit(sim.data, sim.truth_for('y')).report_
    assert rep.weights == 'riesz_sieve' and rep.nuisances.riesz is not None
    t = rep.table[(rep.table.estimator == 'DR') & rep.table.effect.isin(['TE', 'NDE', 'NIE', 'VDE'])]
    assert np.all(np.abs(t.estimate - t.truth) < 3.5 * t.se), t
    base = _est(star=False).fit(sim.data, sim.truth_for('y')).report_
    assert base.weights == 'propensity' and base.nuisances.riesz is None
    assert list(base.table.columns) == list(rep.table.columns) and len(base.table) == len(rep.table)


def test_propensity_weights_unchanged_by_the_option():
    "weights='propensity' is the default and reproduces gmf_estimate on the cross-fitted propensities exactly."
    sim = sim_binary_sfm(3_000, seed=2)
    rep = _est(star=False).fit(sim.data).report_
    cf = rep.nuisances
    d = sim.data
    f = gmf_estimate(d.x, d.y, cf.propensities, cf.regressions[(1, 0, 1)], (1, 0, 1))
    assert rep.estimates['psi(1,0,1)']['DR'].estimate == f.estimate
    g = gmf_estimate(d.x, d.y, None, cf.regressions[(1, 0, 1)], (1, 0, 1), weights=f.weights)
    assert g.estimate == f.estimate


def test_bad_weights_name_the_argument():
    d = sim_binary_sfm(500, seed=0).data
    with pytest.raises(ValueError, match='weights'): _est(weights='riesz').fit(d)
    with pytest.raises((ValueError, TypeError), match='weights'): _est(weights=1).fit(d)
    with pytest.raises(ValueError, match='weights'): crossfit_gmf(d.x, d.y, [d[['z']], d[['w']], d[['v']]], [(1, 0, 1)], weights='net')
    with pytest.raises(ValueError, match='method'): riesz_weights(d.x, [d[['z']], d[['w']], d[['v']]], (1, 0, 1), method='propensity')
    with pytest.raises(ValueError, match='weights'):
        gmf_estimate(d.x, d.y, None, np.zeros((len(d), 3)), (1, 0, 1), weights=np.ones((len(d), 2)))
    assert RIESZ_WEIGHTS[0] == 'propensity'
