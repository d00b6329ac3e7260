"""FairDICE and its environments: exact routes against each other and closed forms, neural against exact, bad inputs.

Run: .venv/bin/python -m pytest tests/test_fairdice.py -q   (the three-MOMDP neural study: --runslow)
"""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from trustml_nb.fairdice import (Divergence, FairDICE, Welfare, behaviour_cloning, buggy_weighted_bc_loss, fairdice_dual,
                                 fairdice_explorer, fairdice_primal, get_welfare, jain_index, policy_metrics,
                                 solve_unregularised, train_fairdice, weighted_bc_loss)
from trustml_nb.momdp import (OfflineDataset, collect_dataset, counterexample_momdp, empirical_mdp, four_room,
                              from_mo_gymnasium, optimal_policy, random_momdp, spibb_policy, uniform_policy)

CX_DD = np.array([[0.7, 0.3], [0.0, 0.0]])


@pytest.fixture(scope="module")
def rm_data():
    rm = random_momdp(seed=3)
    return rm, collect_dataset(rm, spibb_policy(rm, 0.5, seed=3), 100, 50, seed=3)


def quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


# ---------------------------------------------------------------- exact routes
@pytest.mark.parametrize("welfare,div,beta", [("nsw", "softchi", 0.1), ("nsw", "chi2", 0.01), ("nsw", "kl", 0.1),
                                              (0.5, "softchi", 0.1), (0.5, "chi2", 0.05), ("maxmin", "softchi", 0.1),
                                              ("utilitarian", "chi2", 0.1)])
def test_primal_and_dual_agree_to_1e6(rm_data, welfare, div, beta):
    rm, D = rm_data
    du = quiet(fairdice_dual, D, welfare=welfare, divergence=div, beta=beta, gamma=rm.gamma)
    pr = quiet(fairdice_primal, D, welfare=welfare, divergence=div, beta=beta, gamma=rm.gamma)
    assert abs(du["objective"] - pr["objective"]) < 1e-6
    assert abs(du["dual_value"] - pr["objective"]) < 1e-6          # strong duality across the routes
    assert np.abs(du.d - pr.d).max() < 1e-6
    assert du["flow_residual"] < 1e-6 and pr["flow_residual"] < 1e-6


def test_fixed_mu_routes_agree_and_proposition_1(rm_data):
    rm, D = rm_data
    fd = quiet(fairdice_dual, D, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
    fx_d = quiet(fairdice_dual, D, divergence="softchi", beta=0.1, gamma=rm.gamma, mu=fd.mu)
    fx_p = quiet(fairdice_primal, D, divergence="softchi", beta=0.1, gamma=rm.gamma, mu=fd.mu)
    assert np.abs(fx_d.d - fd.d).max() < 1e-6 and np.abs(fx_p.d - fd.d).max() < 1e-6


def test_nash_optimum_has_mu_equal_one_over_J(rm_data):
    rm, D = rm_data
    for f in (fairdice_dual, fairdice_primal):
        r = quiet(f, D, welfare="nsw", divergence="softchi", beta=0.05, gamma=rm.gamma)
        np.testing.assert_allclose(r.mu * r.k, 1.0, atol=1e-6)
    a = quiet(fairdice_dual, D, welfare=0.5, divergence="softchi", beta=0.1, gamma=rm.gamma)
    np.testing.assert_allclose(a.mu, a.k ** -0.5, rtol=1e-6)
    m = quiet(fairdice_dual, D, welfare="maxmin", divergence="softchi", beta=0.1, gamma=rm.gamma)
    np.testing.assert_allclose(m.k, m.k.mean(), rtol=1e-6)


def test_nsw_scale_invariance(rm_data):
    rm, D = rm_data
    c = np.array([2.0, 0.5, 7.0])
    D2 = OfflineDataset(D.states, D.actions, D.rewards * c, D.next_states, D.dones, D.traj, D.n_states, D.n_actions)
    a = quiet(fairdice_dual, D, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
    b = quiet(fairdice_dual, D2, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
    assert np.abs(a.d - b.d).max() < 1e-6
    np.testing.assert_allclose(b.mu, a.mu / c, rtol=1e-5)


def test_large_beta_returns_the_behaviour_policy(rm_data):
    rm, D = rm_data
    r = quiet(fairdice_dual, D, welfare="nsw", divergence="softchi", beta=1e4, gamma=rm.gamma, data_distribution="occupancy")
    np.testing.assert_allclose(rm.returns(r.pi), rm.returns(behaviour_cloning(D)), rtol=2e-3)


# ---------------------------------------------------------------- counterexample (App. B, C.1)
def test_counterexample_unregularised_exact_numbers():
    un = solve_unregularised(counterexample_momdp(), "nsw")
    np.testing.assert_allclose(un.d[0], [7 / 12, 5 / 12], atol=1e-4)
    np.testing.assert_allclose(un.k, [11 / 6, 11 / 4], atol=1e-4)
    np.testing.assert_allclose(un.mu, [6 / 11, 4 / 11], atol=1e-4)
    assert abs(un["objective"] - 1.61774) < 1e-4
    # linear MORL with mu* is degenerate: both actions score 2
    np.testing.assert_allclose(counterexample_momdp().R[0] @ np.array([6 / 11, 4 / 11]), [2.0, 2.0], atol=1e-9)


def test_counterexample_regularised_and_beta_table():
    cx = counterexample_momdp()
    for f in (fairdice_dual, fairdice_primal):
        r = f(cx, CX_DD, welfare="nsw", divergence="chi2", beta=1.0)
        np.testing.assert_allclose(r.d[0], [0.6609, 0.3391], atol=1e-4)
        np.testing.assert_allclose(r.mu, [0.5959, 0.3353], atol=1e-4)
    fx = fairdice_dual(cx, CX_DD, divergence="chi2", beta=1.0, mu=[0.5959, 0.3353])
    assert abs(fx.d[0, 0] - 0.6609) < 1e-4                          # Proposition 1
    table = {0.01: 0.5856, 0.05: 0.5939, 0.1: 0.6028, 0.2: 0.6166, 0.5: 0.6416, 1.0: 0.6609}
    for b, d1 in table.items():
        assert abs(fairdice_dual(cx, CX_DD, divergence="chi2", beta=b).d[0, 0] - d1) < 1e-4


# ---------------------------------------------------------------- conjugates
@settings(max_examples=30, deadline=None)
@given(y=st.floats(-3, 3), kind=st.sampled_from(["chi2", "kl", "softchi"]))
def test_f0star_is_the_conjugate(y, kind):
    D = Divergence(kind)
    xs = np.linspace(0, 10, 200001)
    vals = xs * y - D.f(xs)
    assert abs(float(D.f0star(np.array(y))) - vals.max()) < 1e-6
    assert abs(float(D.wstar(np.array(y))) - xs[vals.argmax()]) < 1e-3


@pytest.mark.parametrize("spec", ["nsw", 0.5, 2.0, 5.0])
def test_welfare_conjugate_term_and_kstar(spec):
    W = get_welfare(spec)
    ks = np.linspace(1e-4, 80, 400001)
    u = np.log(ks) if W.kind == "nsw" else ks ** (1 - W.alpha) / (1 - W.alpha)
    for mu in (0.2, 1.0, 3.0):
        gain = u - mu * ks
        assert abs(float(W.conj(np.array([mu]))) - gain.max()) < 1e-4
        assert abs(float(W.kstar(np.array([mu]))[0]) - ks[gain.argmax()]) < 1e-3


def test_metrics():
    assert jain_index([1, 1, 1]) == pytest.approx(1.0) and jain_index([1, 0, 0]) == pytest.approx(1 / 3)
    m = policy_metrics(counterexample_momdp(), [[7 / 12, 5 / 12], [1, 0]])
    assert m["nsw"] == pytest.approx(1.61774, abs=1e-5)


# ---------------------------------------------------------------- environments and data
def test_policy_evaluation_matches_flow_and_monte_carlo():
    rm = random_momdp(n_states=20, seed=0)
    pi = spibb_policy(rm, 0.5, seed=0)
    J = rm.returns(pi)
    np.testing.assert_allclose((rm.occupancy(pi)[..., None] * rm.R).sum((0, 1)), J, atol=1e-10)
    D = collect_dataset(rm, pi, 4000, 200, seed=1)                  # goals pay once, then the episode ends
    disc = np.zeros((D.n_trajectories, 3))
    t = np.concatenate([np.arange(n) for n in np.bincount(D.traj)])
    np.add.at(disc, D.traj, (1 - rm.gamma) * rm.gamma ** t[:, None] * D.rewards)
    se = disc.std(0) / np.sqrt(len(disc))
    assert (np.abs(disc.mean(0) - J) < 3 * se + 1e-12).all()


def test_empirical_mdp_is_exact_for_deterministic_models():
    rd = random_momdp(n_states=12, n_actions=3, deterministic=True, seed=1)
    D = collect_dataset(rd, uniform_policy(rd), 200, 30, seed=0)
    mh, dD = quiet(empirical_mdp, D, rd.gamma)
    np.testing.assert_allclose(mh.T[dD > 0], rd.T[dD > 0])
    np.testing.assert_allclose(dD.sum(), 1.0)


def test_four_room_and_mo_gymnasium_adapters():
    fr = four_room()
    assert (fr.n_states, fr.n_actions, fr.n_objectives) == (105, 4, 3)
    ft = from_mo_gymnasium("fruit-tree-v0", depth=5, gamma=0.9)
    assert (ft.n_states, ft.n_objectives) == (32, 6)
    rg = from_mo_gymnasium("resource-gathering-v0")
    np.testing.assert_allclose(rg.T.sum(2), 1.0)
    dst = from_mo_gymnasium("deep-sea-treasure-v0", reward_shift=[0, 1])
    J = dst.returns(optimal_policy(dst, [1, 0])[0])
    assert J[0] > 0 and J[1] == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------- bad inputs
def test_bad_inputs_give_clear_errors(rm_data):
    rm, D = rm_data
    no_obj2 = OfflineDataset(D.states, D.actions, D.rewards * [1, 1, 0], D.next_states, D.dones, D.traj, D.n_states, D.n_actions)
    for f in (fairdice_dual, fairdice_primal):
        with pytest.raises(ValueError, match="non-positive returns under log welfare"):
            quiet(f, no_obj2, welfare="nsw", gamma=rm.gamma)
    with pytest.raises(ValueError, match="non-positive returns under log welfare"):
        train_fairdice(no_obj2, steps=2)
    with pytest.raises(ValueError, match="Nash welfare needs strictly positive returns"):
        get_welfare("nsw")([0.3, 0.0])
    with pytest.raises(ValueError, match="dataset is empty"):
        OfflineDataset([], [], np.zeros((0, 2)), [], [], [], 3, 2)
    with pytest.raises(ValueError, match="dD is all zero"):
        fairdice_dual(counterexample_momdp(), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"states must be indices in \[0, 2\], found 3"):
        OfflineDataset([0, 3], [0, 1], np.zeros((2, 2)), [1, 2], [False, True], [0, 0], 3, 2)
    with pytest.raises(ValueError, match=r"next_states must be indices in \[0, 2\], found 7"):
        OfflineDataset([0, 1], [0, 1], np.zeros((2, 2)), [1, 7], [False, True], [0, 0], 3, 2)
    with pytest.raises(ValueError, match=r"actions must be indices in \[0, 1\], found 2"):
        OfflineDataset([0, 1], [0, 2], np.zeros((2, 2)), [1, 2], [False, True], [0, 0], 3, 2)
    for b in (0.0, -1.0):
        with pytest.raises(ValueError, match="beta must be in"):
            fairdice_dual(D, beta=b, gamma=rm.gamma)
        with pytest.raises(ValueError, match="beta must be in"):
            fairdice_primal(D, beta=b, gamma=rm.gamma)
        with pytest.raises(ValueError, match="beta must be in"):
            train_fairdice(D, beta=b, steps=2)
    with pytest.raises(ValueError, match="gamma is required"):
        fairdice_dual(D)
    with pytest.raises(ValueError, match="divergence must be one of"):
        fairdice_dual(D, gamma=0.9, divergence="tv")


# ---------------------------------------------------------------- neural FairDICE and the official-code switches
def test_broadcasting_bug_lesson():
    torch.manual_seed(0)
    logits = torch.randn(8, 3, requires_grad=True)
    logp = torch.log_softmax(logits, -1)[torch.arange(8), torch.arange(8) % 3]
    w = torch.tensor([2.0, 0, 0, 1, 0, 3, 0, 2])
    with pytest.raises(ValueError, match="silently broadcast"):
        weighted_bc_loss(w.reshape(-1, 1), logp)
    bad = buggy_weighted_bc_loss(w, logp)
    assert torch.allclose(bad, w.sum() * (-logp.mean()), atol=1e-5)    # a constant times plain BC
    g_good = torch.autograd.grad(weighted_bc_loss(w, logp), logits, retain_graph=True)[0]
    g_bc = torch.autograd.grad(-logp.mean(), logits)[0]
    assert (g_good / g_good.norm() - g_bc / g_bc.norm()).abs().max() > 0.1


def test_official_switches_make_documented_differences():
    sc = Divergence("softchi")
    e = torch.tensor([-0.2, 0.0, 0.3, 0.5])
    code = sc.wstar((e - e.max()) / 0.1)
    assert torch.allclose(code / code.sum(), torch.softmax(e / 0.1, 0), atol=1e-6)
    m = FairDICE(4, 2, 2, beta=0.1, gamma=0.9, terminal="official")
    s, s2 = torch.tensor([0, 1]), torch.tensor([1, 3]); r = torch.ones(2, 2); done = torch.tensor([0.0, 1.0])
    e_off = m.advantage(s, r, s2, done); m.terminal = "mask"; e_mask = m.advantage(s, r, s2, done)
    assert torch.allclose(e_off[0], e_mask[0]) and not torch.allclose(e_off[1], e_mask[1]) or m.nu(s2[1:]).abs().item() == 0
    rd = random_momdp(n_states=10, n_actions=3, deterministic=True, seed=4)
    D = collect_dataset(rd, uniform_policy(rd), 100, 20, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = train_fairdice(D, beta=0.05, gamma=rd.gamma, steps=150, lr=3.0, mu_param="raw", seed=0, refit_steps=0)
        ok = train_fairdice(D, beta=0.05, gamma=rd.gamma, steps=150, lr=3.0, seed=0, refit_steps=0)
    assert raw.history[["mu0", "mu1", "mu2"]].min().min() <= 0 or not np.isfinite(raw.history.loss).all()
    assert (ok.mu > 0).all()


def test_training_is_seeded():
    rd = random_momdp(n_states=8, n_actions=2, deterministic=True, seed=0)
    D = collect_dataset(rd, uniform_policy(rd), 60, 20, seed=0)
    a = train_fairdice(D, gamma=rd.gamma, steps=30, seed=5, refit_steps=5)
    b = train_fairdice(D, gamma=rd.gamma, steps=30, seed=5, refit_steps=5)
    np.testing.assert_array_equal(a.pi, b.pi)


def _neural_gap(seed, steps=3000):
    det = random_momdp(n_states=15, n_actions=3, n_objectives=3, gamma=0.9, deterministic=True, seed=seed)
    D = collect_dataset(det, spibb_policy(det, 0.5, seed=seed), 300, 40, seed=seed)
    ex = quiet(fairdice_dual, D, welfare="nsw", divergence="softchi", beta=0.05, gamma=det.gamma)
    nn_ = train_fairdice(D, welfare="nsw", divergence="softchi", beta=0.05, gamma=det.gamma, steps=steps, seed=0)
    w_ex, w_nn = policy_metrics(det, ex.pi)["nsw"], policy_metrics(det, nn_.pi)["nsw"]
    return (w_ex - w_nn) / abs(w_ex)


def test_neural_fairdice_within_2pct_of_exact_on_a_deterministic_momdp():
    assert _neural_gap(2) < 0.02


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 5, 7])
def test_neural_fairdice_within_2pct_on_three_momdps(seed):
    assert _neural_gap(seed) < 0.02


# ---------------------------------------------------------------- widget
def test_explorer_responds_to_its_controls():
    ex = fairdice_explorer()
    assert "quality 0.00" in ex.result[0].data and ex.error is None
    ex.controls["welfare"].value = "utilitarian"
    assert "utilitarian" in ex.result[0].data
    ex.controls["beta"].value = 1.0
    assert "beta 1" in ex.result[0].data and ex.error is None


@pytest.mark.parametrize("welfare,div", [(0.5, "softchi"), ("utilitarian", "chi2"),
                                         pytest.param("nsw", "softchi", marks=pytest.mark.slow)])
def test_lbfgs_dual_agrees_with_primal(rm_data, welfare, div):
    "The dual by L-BFGS (preconditioned; thousands of iterations for Nash, hence slow) against the cvxpy primal."
    rm, D = rm_data
    a = quiet(fairdice_dual, D, welfare=welfare, divergence=div, beta=0.1, gamma=rm.gamma, method="lbfgs", newton_polish=False)
    pr = quiet(fairdice_primal, D, welfare=welfare, divergence=div, beta=0.1, gamma=rm.gamma)
    assert a["lbfgs_iterations"] > 0 and np.abs(a.d - pr.d).max() < 1e-6
