"""FairDICE and its environments: exact routes against each other and closed forms, neural against exact, the estimator
contract, and the issue-12 findings.

Run: .venv/bin/python -m pytest tests/test_fairdice.py -q   (the three-MOMDP neural study: --runslow)
The bad-input sweep of every public entry point is tests/test_bad_input_fairdice.py.
"""
import pickle
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from sklearn.base import clone

from contract import check_estimator_contract, check_report
from trustml_nb.core import NumericalWarning
from trustml_nb.fairdice import (Divergence, FairDICE, FairDICENetwork, FairDICEReport, NeuralFairDICE, NeuralFairDICEReport,
                                 behaviour_cloning, buggy_weighted_bc_loss, fairdice_explorer, four_room_data, get_welfare,
                                 jain_index, policy_metrics, render_fairdice, solve_unregularised, weighted_bc_loss)
from trustml_nb.momdp import (OfflineDataset, collect_dataset, counterexample_momdp, empirical_mdp, four_room,
                              from_mo_gymnasium, optimal_policy, random_momdp, spibb_policy, uniform_policy, unmapped_room)

CX_DD = np.array([[0.7, 0.3], [0.0, 0.0]])


@pytest.fixture(scope="module")
def rm_data():
    rm = random_momdp(seed=3)
    return rm, collect_dataset(rm, spibb_policy(rm, 0.5, seed=3), 100, 50, seed=3)


def exact(data, dD=None, **settings):
    "The exact solver's report (dual route unless solver='primal' is given)."
    return FairDICE(**settings).fit(data, state_action_distribution=dD).report_


def _returns_by_iteration(mdp, pi, tol=1e-15):
    "Normalised returns by iterating V <- r_pi + gamma P_pi V to a fixed point (no linear solve)."
    P, r = np.einsum("sa,sat->st", pi, mdp.T), np.einsum("sa,sai->si", pi, mdp.R)
    V = np.zeros_like(r)
    for _ in range(100_000):
        V, V_old = r + mdp.gamma * P @ V, V
        if np.abs(V - V_old).max() < tol: break
    return (1 - mdp.gamma) * mdp.p0 @ V


def nsw_of(mdp, pi):
    return float(policy_metrics(mdp, pi).nash_welfare.iloc[0])


# ---------------------------------------------------------------- exact routes
@pytest.mark.parametrize("welfare,div,beta", [("nsw", "softchi", 0.1), ("nsw", "chi2", 0.01), ("nsw", "kl", 0.1),
                                              (0.5, "softchi", 0.1), (0.5, "chi2", 0.05), ("maxmin", "softchi", 0.1),
                                              ("utilitarian", "chi2", 0.1)])
def test_primal_and_dual_agree_to_1e6(rm_data, welfare, div, beta):
    rm, D = rm_data
    du = exact(D, welfare=welfare, divergence=div, beta=beta, gamma=rm.gamma)
    pr = exact(D, welfare=welfare, divergence=div, beta=beta, gamma=rm.gamma, solver="primal")
    assert abs(du.objective - pr.objective) < 1e-6
    assert abs(du.dual_value - pr.objective) < 1e-6          # strong duality across the routes
    assert np.abs(du.occupancy - pr.occupancy).max() < 1e-6
    assert du.flow_residual < 1e-6 and pr.flow_residual < 1e-6
    assert du.status == "converged" and pr.status in ("optimal", "optimal_inaccurate") and pr.dual_value is None
    assert (pr.status == "optimal") == (not pr.notes)                # an inaccurate primal says so in its notes


def test_fixed_mu_routes_agree_and_proposition_1(rm_data):
    rm, D = rm_data
    fd = exact(D, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
    fx_d = exact(D, divergence="softchi", beta=0.1, gamma=rm.gamma, objective_weights=fd.objective_weights)
    fx_p = exact(D, divergence="softchi", beta=0.1, gamma=rm.gamma, objective_weights=fd.objective_weights, solver="primal")
    assert np.abs(fx_d.occupancy - fd.occupancy).max() < 1e-6 and np.abs(fx_p.occupancy - fd.occupancy).max() < 1e-6
    assert fx_d.welfare == "linear (fixed weights)"


def test_nash_optimum_has_mu_equal_one_over_J(rm_data):
    rm, D = rm_data
    for solver in ("dual", "primal"):
        r = exact(D, welfare="nsw", divergence="softchi", beta=0.05, gamma=rm.gamma, solver=solver)
        np.testing.assert_allclose(r.objective_weights * r.returns, 1.0, atol=1e-6)
    a = exact(D, welfare=0.5, divergence="softchi", beta=0.1, gamma=rm.gamma)
    np.testing.assert_allclose(a.objective_weights, a.returns ** -0.5, rtol=1e-6)
    m = exact(D, welfare="maxmin", divergence="softchi", beta=0.1, gamma=rm.gamma)
    np.testing.assert_allclose(m.returns, m.returns.mean(), rtol=1e-6)


def test_nsw_scale_invariance(rm_data):
    rm, D = rm_data
    c = np.array([2.0, 0.5, 7.0])
    D2 = OfflineDataset(D.states, D.actions, D.rewards * c, D.next_states, D.dones, D.traj, D.n_states, D.n_actions)
    a = exact(D, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
    b = exact(D2, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
    assert np.abs(a.occupancy - b.occupancy).max() < 1e-6
    np.testing.assert_allclose(b.objective_weights, a.objective_weights / c, rtol=1e-5)


def test_large_beta_returns_the_behaviour_policy(rm_data):
    rm, D = rm_data
    r = exact(D, welfare="nsw", divergence="softchi", beta=1e4, gamma=rm.gamma, data_distribution="occupancy")
    np.testing.assert_allclose(rm.returns(r.policy), rm.returns(behaviour_cloning(D)), rtol=2e-3)


def test_report_fields_are_consistent(rm_data):
    "density_ratios, values and the policy agree with the occupancy they come from."
    rm, D = rm_data
    r = exact(D, welfare="nsw", divergence="softchi", beta=0.1, gamma=rm.gamma)
    support = r.data_distribution > 0
    np.testing.assert_allclose((r.density_ratios * r.data_distribution)[support], r.occupancy[support], atol=1e-15)
    np.testing.assert_allclose(r.occupancy[~support.any(1)].sum(), 1 - r.occupancy[support].sum(), atol=1e-9)  # the rest ends in terminal states
    live = r.occupancy.sum(1) > 1e-12
    np.testing.assert_allclose(r.policy[live], r.occupancy[live] / r.occupancy[live].sum(1, keepdims=True))
    np.testing.assert_allclose((r.occupancy[..., None] * r.model.R).sum((0, 1)), r.returns, atol=1e-12)
    assert r.values.shape == (rm.n_states,) and r.values[r.model.absorbing].max() == 0
    assert list(r.to_frame().columns) == ["objective", "return", "objective_weight", "demanded_return"]
    # independent of how the report was assembled: the policy evaluated in the solved model by a linear solve has these
    # returns and this occupancy (off the absorbing states), and values and weights give the ratios w* = max(0, (f')^-1(e / beta))
    m, ab = r.model, r.model.absorbing
    np.testing.assert_allclose(m.returns(r.policy), r.returns, rtol=1e-9)
    np.testing.assert_allclose(m.occupancy(r.policy), r.occupancy, atol=1e-12)          # terminal states included: it sums to 1
    e = m.R @ r.objective_weights + m.gamma * m.T @ r.values - r.values[:, None]
    support = r.data_distribution > 0
    np.testing.assert_allclose(Divergence("softchi").wstar(e / r.beta)[support], r.density_ratios[support], atol=1e-9)


# ---------------------------------------------------------------- counterexample (App. B, C.1)
def test_counterexample_unregularised_exact_numbers():
    un = solve_unregularised(counterexample_momdp(), "nsw")
    np.testing.assert_allclose(un.occupancy[0], [7 / 12, 5 / 12], atol=1e-4)
    np.testing.assert_allclose(un.returns, [11 / 6, 11 / 4], atol=1e-4)
    np.testing.assert_allclose(un.objective_weights, [6 / 11, 4 / 11], atol=1e-4)
    assert abs(un.objective - 1.61774) < 1e-4
    # linear MORL with mu* is degenerate: both actions score 2
    np.testing.assert_allclose(counterexample_momdp().R[0] @ np.array([6 / 11, 4 / 11]), [2.0, 2.0], atol=1e-9)
    mm = solve_unregularised(counterexample_momdp(), "maxmin")      # 3 - 2p = 1 + 3p at p = 2/5
    np.testing.assert_allclose(mm.returns, [2.2, 2.2], atol=1e-6)
    assert np.isfinite(mm.objective_weights).all()


def test_counterexample_regularised_and_beta_table():
    cx = counterexample_momdp()
    for solver in ("dual", "primal"):
        r = exact(cx, CX_DD, welfare="nsw", divergence="chi2", beta=1.0, solver=solver)
        np.testing.assert_allclose(r.occupancy[0], [0.6609, 0.3391], atol=1e-4)
        np.testing.assert_allclose(r.objective_weights, [0.5959, 0.3353], atol=1e-4)
    fx = exact(cx, CX_DD, divergence="chi2", beta=1.0, objective_weights=[0.5959, 0.3353])
    assert abs(fx.occupancy[0, 0] - 0.6609) < 1e-4                          # Proposition 1
    table = {0.01: 0.5856, 0.05: 0.5939, 0.1: 0.6028, 0.2: 0.6166, 0.5: 0.6416, 1.0: 0.6609}
    for b, d1 in table.items():
        assert abs(exact(cx, CX_DD, divergence="chi2", beta=b).occupancy[0, 0] - d1) < 1e-4


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
    assert get_welfare(np.inf).kind == "maxmin"


def test_metrics():
    assert jain_index([1, 1, 1]) == pytest.approx(1.0) and jain_index([1, 0, 0]) == pytest.approx(1 / 3)
    m = policy_metrics(counterexample_momdp(), {"NSW optimum": [[7 / 12, 5 / 12], [1, 0]], "always a1": [[1, 0], [1, 0]]})
    assert list(m.policy) == ["NSW optimum", "always a1"]
    assert m.nash_welfare[0] == pytest.approx(1.61774, abs=1e-5) and m.nash_welfare[1] == pytest.approx(np.log(4))
    assert m.utilitarian_welfare[1] == pytest.approx(5.0) and m.min_return[1] == pytest.approx(1.0)
    assert m.jain_index[1] == pytest.approx(jain_index([1, 4]))


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
    mh, dD = empirical_mdp(D, rd.gamma)
    np.testing.assert_allclose(mh.T[dD > 0], rd.T[dD > 0])
    np.testing.assert_allclose(dD.sum(), 1.0)
    short = collect_dataset(rd, uniform_policy(rd), 5, 2, seed=0)       # cut by the horizon: states without outgoing data
    with pytest.warns(NumericalWarning, match="only as next states"):    # the warning stays visible
        empirical_mdp(short, rd.gamma)
    r = exact(short, gamma=rd.gamma, welfare="utilitarian")              # the estimator records the same fact in its notes
    assert any("only as next states" in n for n in r.notes)


def test_four_room_and_mo_gymnasium_adapters():
    fr = four_room()
    assert (fr.n_states, fr.n_actions, fr.n_objectives) == (105, 4, 3)
    with warnings.catch_warnings(record=True) as caught:                 # gymnasium's float32 notes are filtered by name
        ft = from_mo_gymnasium("fruit-tree-v0", depth=5, gamma=0.9)
    assert not [w for w in caught if "precision lowered" in str(w.message)]
    assert (ft.n_states, ft.n_objectives) == (32, 6)
    rg = from_mo_gymnasium("resource-gathering-v0")
    np.testing.assert_allclose(rg.T.sum(2), 1.0)
    dst = from_mo_gymnasium("deep-sea-treasure-v0", reward_shift=[0, 1])
    J = dst.returns(optimal_policy(dst, [1, 0])[0])
    assert J[0] > 0 and J[1] == pytest.approx(0.0, abs=1e-12)
    assert from_mo_gymnasium("fruit-tree-v0", depth=5, keep_objectives=[4, 1]).objectives == ("obj4", "obj1")


# ---------------------------------------------------------------- clear errors (the issue-12 findings and the old checks)
def test_negative_fixed_weights_are_an_error_not_a_nan_dual_value():
    "Issue 12, finding 4: fairdice_dual(..., mu=-np.ones(2)) reported dual_value nan beside plausible-looking numbers."
    cx = counterexample_momdp()
    for bad in (-np.ones(2), [0.0, 1.0], [np.nan, 1.0], [np.inf, 1.0]):
        for solver in ("dual", "primal"):
            with pytest.raises(ValueError, match="objective_weights"):
                FairDICE(divergence="chi2", beta=1.0, objective_weights=bad, solver=solver).fit(cx, state_action_distribution=CX_DD)
    with pytest.raises(ValueError, match="objective_weights"):
        NeuralFairDICE(gamma=0.9, objective_weights=-np.ones(2), steps=2).fit(collect_dataset(cx, [[0.5, 0.5], [1, 0]], 5, 1))


def test_unknown_solver_names_never_reach_cvxpy():
    "Issue 12: unknown solver= names reached cvxpy (or scipy) and failed deep inside them."
    cx = counterexample_momdp()
    with pytest.raises(ValueError, match="solver must be one of 'dual', 'primal'"):
        FairDICE(solver="ECOS").fit(cx, state_action_distribution=CX_DD)
    with pytest.raises(ValueError, match="cvxpy_solver must be one of"):
        FairDICE(solver="primal", cvxpy_solver="NO_SUCH_SOLVER").fit(cx, state_action_distribution=CX_DD)
    with pytest.raises(ValueError, match="cvxpy_solver must be one of"):
        solve_unregularised(cx, cvxpy_solver="clarabel")
    with pytest.raises(ValueError, match="method must be one of"):
        FairDICE(method="bfgs").fit(cx, state_action_distribution=CX_DD)


@pytest.mark.parametrize("name,value", [("lr", 0.0), ("lr", -0.1), ("lr", np.nan), ("lr", np.inf), ("policy_lr", 0.0),
                                        ("policy_lr", np.nan), ("batch_size", 0), ("steps", 0), ("seed", -1)])
def test_torch_trainer_refuses_bad_learning_settings(name, value):
    "Issue 12: lr <= 0 or NaN in the torch trainer (and batch_size=0, which silently meant the full batch)."
    rd = random_momdp(n_states=8, n_actions=2, deterministic=True, seed=0)
    D = collect_dataset(rd, uniform_policy(rd), 20, 10, seed=0)
    with pytest.raises(ValueError, match=name):
        NeuralFairDICE(gamma=rd.gamma, **{"steps": 2, name: value}).fit(D)


def test_bad_inputs_give_clear_errors(rm_data):
    rm, D = rm_data
    no_obj2 = OfflineDataset(D.states, D.actions, D.rewards * [1, 1, 0], D.next_states, D.dones, D.traj, D.n_states, D.n_actions)
    for solver in ("dual", "primal"):
        with pytest.raises(ValueError, match="non-positive returns under log welfare"):
            FairDICE(welfare="nsw", gamma=rm.gamma, solver=solver).fit(no_obj2)
    with pytest.raises(ValueError, match="non-positive returns under log welfare"):
        NeuralFairDICE(gamma=rm.gamma, steps=2).fit(no_obj2)
    with pytest.raises(ValueError, match="Nash welfare needs strictly positive returns"):
        get_welfare("nsw")([0.3, 0.0])
    with pytest.raises(ValueError, match="dataset is empty"):
        OfflineDataset([], [], np.zeros((0, 2)), [], [], [], 3, 2)
    with pytest.raises(ValueError, match="state_action_distribution .d_D. is all zero"):
        FairDICE().fit(counterexample_momdp(), state_action_distribution=np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"states must be indices in \[0, 2\], found 3"):
        OfflineDataset([0, 3], [0, 1], np.zeros((2, 2)), [1, 2], [False, True], [0, 0], 3, 2)
    with pytest.raises(ValueError, match=r"next_states must be indices in \[0, 2\], found 7"):
        OfflineDataset([0, 1], [0, 1], np.zeros((2, 2)), [1, 7], [False, True], [0, 0], 3, 2)
    with pytest.raises(ValueError, match=r"actions must be indices in \[0, 1\], found 2"):
        OfflineDataset([0, 1], [0, 2], np.zeros((2, 2)), [1, 2], [False, True], [0, 0], 3, 2)
    for b in (0.0, -1.0):
        for solver in ("dual", "primal"):
            with pytest.raises(ValueError, match="beta must be in"):
                FairDICE(beta=b, gamma=rm.gamma, solver=solver).fit(D)
        with pytest.raises(ValueError, match="beta must be in"):
            NeuralFairDICE(beta=b, gamma=rm.gamma, steps=2).fit(D)
    with pytest.raises(ValueError, match="gamma is required"):
        FairDICE().fit(D)
    with pytest.raises(ValueError, match="divergence must be one of"):
        FairDICE(gamma=0.9, divergence="tv").fit(D)


def test_warnings_that_matter_stay_visible(rm_data):
    "Positivity is an error; a spurious dual point and a stalled solver are NumericalWarnings, recorded in the notes too."
    rm, D = rm_data
    with pytest.warns(NumericalWarning) as caught:
        r = exact(D, welfare=5.0, divergence="softchi", beta=0.1, gamma=rm.gamma)
    said = " ".join(str(w.message) for w in caught)
    for what in ("spurious", "stopped with gradient"):
        assert what in said and any(what in n for n in r.notes)
    assert r.status == "not converged"


# ---------------------------------------------------------------- the estimator contract
def test_summarised_warnings_point_at_the_users_line():
    "The summary a sweep re-issues (core's one helper, no local copy) is warned at the caller's line, with its count of fits."
    import trustml_nb.fairdice as fairdice
    from trustml_nb.core import summarised_warnings
    assert fairdice.summarised_warnings is summarised_warnings and not hasattr(fairdice, "_summarised_warnings")
    with pytest.warns(NumericalWarning) as caught:
        with summarised_warnings("sweep"):
            for _ in range(3): warnings.warn("stalled", NumericalWarning)
    assert [str(w.message) for w in caught] == ["sweep: stalled (3 fits)"] and caught[0].filename == __file__


def test_fairdice_estimator_contract(rm_data):
    rm, D = rm_data
    for solver in ("dual", "primal"):
        check_estimator_contract(FairDICE(gamma=rm.gamma, solver=solver), fit=lambda est: est.fit(D),
                                 output=lambda est: est.policy_)
    cx = counterexample_momdp()
    check_estimator_contract(FairDICE(divergence="chi2", beta=1.0, objective_weights=(0.6, 0.3)),
                             fit=lambda est: est.fit(cx, state_action_distribution=CX_DD), output=lambda est: est.occupancy_)
    assert isinstance(FairDICE(gamma=rm.gamma).fit(D).report_, FairDICEReport)


def test_neural_fairdice_estimator_contract():
    rd = random_momdp(n_states=8, n_actions=2, deterministic=True, seed=0)
    D = collect_dataset(rd, uniform_policy(rd), 60, 20, seed=0)
    check_estimator_contract(NeuralFairDICE(gamma=rd.gamma, steps=30, seed=5, refit_steps=5, show_progress=False),
                             fit=lambda e: e.fit(D), output=lambda e: e.policy_)
    assert isinstance(NeuralFairDICE(gamma=rd.gamma, steps=3).fit(D).report_, NeuralFairDICEReport)


def test_set_params_cannot_bypass_validation(rm_data):
    rm, D = rm_data
    est = FairDICE(gamma=rm.gamma).set_params(beta=-1.0)
    with pytest.raises(ValueError, match="beta"):
        est.fit(D)
    assert not hasattr(est, "report_")


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
    assert weighted_bc_loss(w, logp, torch.zeros(8)).item() == 0.0     # an all-masked batch: 0, not NaN


def test_official_switches_make_documented_differences():
    sc = Divergence("softchi")
    e = torch.tensor([-0.2, 0.0, 0.3, 0.5])
    code = sc.wstar((e - e.max()) / 0.1)
    assert torch.allclose(code / code.sum(), torch.softmax(e / 0.1, 0), atol=1e-6)
    m = FairDICENetwork(4, 2, 2, beta=0.1, gamma=0.9, terminal="official")
    s, s2 = torch.tensor([0, 1]), torch.tensor([1, 3]); r = torch.ones(2, 2); done = torch.tensor([0.0, 1.0])
    e_off = m.advantage(s, r, s2, done); m.terminal = "mask"; e_mask = m.advantage(s, r, s2, done)
    assert torch.allclose(e_off[0], e_mask[0]) and not torch.allclose(e_off[1], e_mask[1]) or m.nu(s2[1:]).abs().item() == 0
    rd = random_momdp(n_states=10, n_actions=3, deterministic=True, seed=4)
    D = collect_dataset(rd, uniform_policy(rd), 100, 20, seed=0)
    settings = dict(beta=0.05, gamma=rd.gamma, steps=150, lr=3.0, seed=0, refit_steps=0)
    with warnings.catch_warnings(record=True) as caught:
        raw = NeuralFairDICE(weight_parametrisation="raw", **settings).fit(D).report_
        ok = NeuralFairDICE(**settings).fit(D)
    weights = raw.history[["weight_0", "weight_1", "weight_2"]]
    assert weights.min().min() <= 0 or not np.isfinite(raw.history.loss).all()
    assert (ok.objective_weights_ > 0).all()
    if raw.completed_steps < 150:                       # stopped at a non-finite loss: warned, noted, the policy kept finite
        assert any(issubclass(w.category, NumericalWarning) for w in caught) and raw.notes
    assert np.isfinite(raw.policy).all() and np.isfinite(raw.final_loss)


def test_training_is_seeded():
    rd = random_momdp(n_states=8, n_actions=2, deterministic=True, seed=0)
    D = collect_dataset(rd, uniform_policy(rd), 60, 20, seed=0)
    a = NeuralFairDICE(gamma=rd.gamma, steps=30, seed=5, refit_steps=5).fit(D)
    b = clone(a).fit(D)
    np.testing.assert_array_equal(a.policy_, b.policy_)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).policy_, a.policy_)


def _neural_vs_exact(seed, steps=3000, **settings):
    "(Nash-welfare gap, largest relative error of mu) of neural FairDICE against the exact solution of the same problem."
    det = random_momdp(n_states=15, n_actions=3, n_objectives=3, gamma=0.9, deterministic=True, seed=seed)
    D = collect_dataset(det, spibb_policy(det, 0.5, seed=seed), 300, 40, seed=seed)
    ex = FairDICE(welfare="nsw", divergence="softchi", beta=0.05, gamma=det.gamma).fit(D)
    nn_ = NeuralFairDICE(welfare="nsw", divergence="softchi", beta=0.05, gamma=det.gamma, steps=steps, seed=0, **settings).fit(D)
    w_ex, w_nn = nsw_of(det, ex.policy_), nsw_of(det, nn_.policy_)
    return (w_ex - w_nn) / abs(w_ex), float(np.abs(nn_.objective_weights_ / ex.objective_weights_ - 1).max())


def test_neural_fairdice_within_2pct_of_exact_on_a_deterministic_momdp():
    gap, mu_err = _neural_vs_exact(2)
    assert gap < 0.02 and mu_err < 0.05, (gap, mu_err)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 5, 7])
def test_neural_fairdice_within_2pct_on_three_momdps(seed):
    gap, mu_err = _neural_vs_exact(seed)
    assert gap < 0.02 and mu_err < 0.05, (gap, mu_err)


@pytest.mark.slow
def test_tabular_nu_reaches_a_1pct_nash_welfare_gap():
    "The tabular nu, started at the behaviour policy's values (the issue: -0.139 in NSW after 1,500 steps from nu = 0)."
    gap, _ = _neural_vs_exact(2, value_model="tabular")
    assert abs(gap) < 0.01, gap


# ---------------------------------------------------------------- states without data: the standard support convention
def _cut_short_data():
    "A random deterministic MOMDP whose data are cut at 6 steps: three reachable states the data never leave."
    m = random_momdp(n_states=30, n_actions=3, n_objectives=3, gamma=0.9, deterministic=True, seed=2)
    return m, collect_dataset(m, spibb_policy(m, 0.5, seed=2), 100, 6, seed=2)


def _support_polytope(data, gamma):
    """Independent of the package's solver: the standard constrained formulation written from the raw counts.

    Variables d(s, a) for every pair; d = 0 off the data's pairs; the Bellman flow constraint at every state that is not a
    terminal one (a next state of a `done` transition), so at a state without data sum_a d(s, a) = 0 forces its inflow to 0.
    Returns (A_eq, b_eq, support mask, d_D, R, p0) with d flattened in (s, a) order."""
    S, A, I = data.n_states, data.n_actions, data.n_objectives
    N = np.zeros((S, A)); np.add.at(N, (data.states, data.actions), 1)
    Nsas = np.zeros((S, A, S)); np.add.at(Nsas, (data.states, data.actions, data.next_states), 1)
    Rsum = np.zeros((S, A, I)); np.add.at(Rsum, (data.states, data.actions), data.rewards)
    T = np.divide(Nsas, N[..., None], out=np.zeros_like(Nsas), where=N[..., None] > 0)
    R = np.divide(Rsum, N[..., None], out=np.zeros_like(Rsum), where=N[..., None] > 0)
    _, first = np.unique(data.traj, return_index=True)
    p0 = np.bincount(data.states[first], minlength=S) / len(first)
    terminal = np.zeros(S, bool); terminal[data.next_states[data.dones]] = True
    rows = np.flatnonzero(~terminal)
    A_eq = np.zeros((len(rows), S * A))
    for j, s in enumerate(rows):
        A_eq[j] = (np.arange(S * A) // A == s).astype(float) - gamma * T[:, :, s].ravel()
    return A_eq, (1 - gamma) * p0[rows], (N > 0).ravel(), (N / N.sum()).ravel(), R.reshape(S * A, I), p0


@pytest.mark.parametrize("case,div,beta", [("unmapped room", "chi2", 10.0), ("cut short", "chi2", 100.0),
                                           ("cut short", "softchi", 10.0)])
def test_standard_convention_matches_an_independent_convex_program(case, div, beta):
    "FairDICE's default against the standard problem written plainly in cvxpy (all pairs, flow at every non-terminal state)."
    import cvxpy as cp
    world, D = unmapped_room() if case == "unmapped room" else _cut_short_data()
    # beta is large enough that the absorbing convention lets mass leak (so the two conventions' optima differ; checked below)
    A_eq, b_eq, support, dD, R, _ = _support_polytope(D, world.gamma)
    d = cp.Variable(len(dD), nonneg=True)
    k = R.T @ d
    m = support
    ratio = d[np.flatnonzero(m)] / dD[m]
    pen = (0.5 * dD[m] @ cp.square(ratio - 1) if div == "chi2"
           else dD[m] @ cp.maximum(cp.kl_div(ratio, 1), 0.5 * cp.square(ratio - 1)))
    prob = cp.Problem(cp.Maximize(cp.sum(cp.log(k)) - beta * pen), [A_eq @ d == b_eq, d[np.flatnonzero(~m)] == 0])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=500)
    assert prob.status == "optimal"
    r = exact(D, divergence=div, beta=beta, gamma=world.gamma)
    assert r.states_without_data == "no_flow" and r.occupancy_without_data == 0
    assert abs(r.objective - prob.value) < 1e-6 and abs(r.dual_value - prob.value) < 1e-6
    S, A = D.n_states, D.n_actions
    d_ref = d.value.reshape(S, A)
    on = dD.reshape(S, A) > 0
    np.testing.assert_allclose(r.occupancy[on], d_ref[on], atol=1e-5)
    np.testing.assert_allclose(r.returns, R.T @ d.value, atol=1e-6)
    assert abs(r.total_occupancy - 1) < 1e-9 and abs(r.occupancy.sum() - 1) < 1e-9
    # the default really differs from the absorbing convention's problem here: pairs into the states without data are used there
    assert any("no occupancy flows through them" in n for n in r.notes)
    with pytest.warns(NumericalWarning, match="states without data"):
        ab = exact(D, divergence=div, beta=beta, gamma=world.gamma, states_without_data="absorbing")
    assert ab.objective > prob.value + 1e-3 and ab.occupancy_without_data > 1e-3


def test_linear_fairdice_fixed_approaches_the_lp_over_the_support_polytope():
    "An exact LP (scipy HiGHS) over the same support-constrained occupancies: the value FairDICE-fixed approaches as beta -> 0."
    from scipy.optimize import linprog
    world, D = _cut_short_data()
    A_eq, b_eq, support, _, R, _ = _support_polytope(D, world.gamma)
    w = np.array([0.2, 0.3, 0.5])
    bounds = [(0, None) if s else (0, 0) for s in support]
    lp = linprog(-(R @ w), A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    assert lp.status == 0
    values = []
    for beta in (1e-2, 1e-3, 1e-4):
        with warnings.catch_warnings(record=True):   # tiny beta may leave a NumericalWarning; the value is what is checked
            warnings.simplefilter("always")
            r = exact(D, divergence="chi2", beta=beta, gamma=world.gamma, objective_weights=w, solver="primal")
        values.append(w @ r.returns)
        assert w @ r.returns <= -lp.fun + 1e-7                     # a feasible point of the LP: never above its optimum
    assert values[-1] > -lp.fun - 1e-3 * abs(lp.fun)                # and within 0.1% of it at beta = 1e-4
    assert values[0] <= values[1] + 1e-9 <= values[2] + 2e-9       # monotone as beta shrinks


def test_absorbing_convention_is_kept_and_labelled():
    "'absorbing': mass flows into the unmapped room and stays; the returns count it as earning 0, unlike the true world."
    world, D = unmapped_room()
    std = exact(D, beta=100.0, gamma=world.gamma)
    with pytest.warns(NumericalWarning, match="states without data"):
        ab = exact(D, beta=100.0, gamma=world.gamma, states_without_data="absorbing")
    assert ab.states_without_data == "absorbing" and ab.occupancy_without_data > 0.2
    assert abs(ab.total_occupancy + ab.occupancy_without_data - 1) < 1e-9 and abs(ab.occupancy.sum() - 1) < 1e-9
    assert ab.occupancy[2].sum() == pytest.approx(ab.occupancy_without_data)
    assert (ab.returns < world.returns(ab.policy) - 0.05).all()              # the model's value 0 in the room is wrong here
    np.testing.assert_allclose(std.returns, world.returns(std.policy), atol=1e-9)   # deterministic and inside the data: exact
    assert std.occupancy[2].sum() == 0 and std.policy[1, 1] == 0
    # the absorbing variant's problem, written independently: same polytope without the flow rows at states without data
    m_hat, _ = empirical_mdp(D, world.gamma, warn=False)
    np.testing.assert_allclose(m_hat.occupancy(ab.policy), ab.occupancy, atol=1e-9)


def test_no_occupancy_fits_the_data_is_an_error():
    "A single trajectory cut by the horizon: every path from the start leads into a state the data never leave."
    one = OfflineDataset([0, 1], [0, 0], [[1.0, 1.0], [1.0, 1.0]], [1, 2], [False, False], [0, 0], 4, 1)
    with pytest.raises(ValueError, match="no occupancy stays inside the data"):
        FairDICE(gamma=0.9).fit(one)
    with pytest.warns(NumericalWarning, match="states without data"):
        r = FairDICE(gamma=0.9, states_without_data="absorbing").fit(one).report_
    assert r.occupancy_without_data > 0.8 and abs(r.occupancy.sum() - 1) < 1e-9


def test_neural_values_start_at_the_behaviour_policys_exact_values(rm_data):
    "value_init='behaviour': nu starts at V of the data's behaviour policy, checked by an independent linear solve on the empirical MDP."
    rm, D = rm_data
    w = np.array([1.0, 2.0, 0.5])
    nn_ = NeuralFairDICE(gamma=rm.gamma, steps=1, refit_steps=0, objective_weights=w, value_model="tabular").fit(D)
    m_hat, _ = empirical_mdp(D, rm.gamma, warn=False)
    V = m_hat.state_values(behaviour_cloning(D)) @ (w * nn_.report_.reward_scale)
    seen = np.zeros(rm.n_states, bool); seen[D.states] = True
    np.testing.assert_allclose(nn_.network_.nu_start.numpy()[seen], V[seen], rtol=1e-5, atol=1e-5)
    zero = NeuralFairDICE(gamma=rm.gamma, steps=1, refit_steps=0, objective_weights=w, value_init="zero").fit(D)
    assert zero.network_.nu_start.abs().max() == 0


def test_neural_rows_without_usable_pairs_get_no_weight():
    "With 'no_flow' a transition into a state without data contributes the constant -beta f(0) and BC weight 0."
    net = FairDICENetwork(3, 2, 2, beta=0.5, gamma=0.9, value_model="tabular")
    s, r, s2 = torch.tensor([0, 1]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([1, 2])
    done, s0 = torch.zeros(2), torch.tensor([0])
    with torch.no_grad(): net.nu_table.copy_(torch.tensor([0.3, -0.2, 5.0]))
    usable = torch.tensor([1.0, 0.0])
    loss, _ = net.nu_mu_loss(s, r, s2, done, s0, torch.ones(1), usable)
    with torch.no_grad():
        full = net.nu_mu_loss(s[:1], r[:1], s2[:1], done[:1], s0, torch.ones(1))[0].item()
        L3, L1 = net.welfare.conj(net.mu()).item(), 0.1 * net.nu(s0).item()
    f0 = Divergence("softchi").f(torch.zeros(())).item()
    # mean over the two rows: the usable row's term and the constant -beta f(0) for the other one
    assert loss.item() == pytest.approx(L1 + (full - L1 - L3 - 0.5 * f0) / 2 + L3, rel=1e-6)
    loss.backward()
    assert net.nu_table.grad[2] == 0                                  # the state without data gets no gradient
    assert net.policy_weights(s, r, s2, done, usable)[1] == 0


# ---------------------------------------------------------------- widget
def test_explorer_responds_to_its_controls():
    ex = fairdice_explorer()
    assert ex.error is None and ex.report.quality == 0.0 and ex.report.welfare == "Nash"
    check_report(ex.report)
    ex.controls["welfare"].value = "utilitarian"
    assert ex.report.welfare == "utilitarian" and ex.report.fit.welfare == "utilitarian"
    ex.controls["beta"].value = 1.0
    assert ex.report.beta == pytest.approx(1.0) and ex.error is None
    ex.controls["quality"].value = ex.controls["quality"].max            # what the browser test does (End on the first slider)
    assert ex.report.quality == 0.0 and "press Run" in ex.status.value   # a new dataset takes seconds: it waits for Run
    ex.on_run()
    assert ex.report.quality == 1.0 and ex.error is None


def test_render_returns_a_report_with_exact_numbers():
    rep, fig = render_fairdice(0.0, "nsw", 0.01)
    fr = four_room()
    np.testing.assert_allclose(rep.returns, fr.returns(rep.fit.policy))
    # the same returns by an independent route: Bellman iteration in the true environment, not the linear solve behind both
    np.testing.assert_allclose(rep.returns, _returns_by_iteration(fr, rep.fit.policy), rtol=1e-9)
    np.testing.assert_allclose(rep.behaviour_returns, _returns_by_iteration(fr, behaviour_cloning(four_room_data(0.0))), rtol=1e-9)
    assert rep.jain_index == pytest.approx(jain_index(rep.returns)) and rep.total_return == pytest.approx(rep.returns.sum())
    assert rep.jain_index > 0.95 and fig is not None


@pytest.mark.parametrize("welfare,div", [(0.5, "softchi"), ("utilitarian", "chi2"),
                                         pytest.param("nsw", "softchi", marks=pytest.mark.slow)])
def test_lbfgs_dual_agrees_with_primal(rm_data, welfare, div):
    "The dual by L-BFGS (preconditioned; thousands of iterations for Nash, hence slow) against the cvxpy primal."
    rm, D = rm_data
    a = exact(D, welfare=welfare, divergence=div, beta=0.1, gamma=rm.gamma, method="lbfgs", newton_polish=False)
    pr = exact(D, welfare=welfare, divergence=div, beta=0.1, gamma=rm.gamma, solver="primal")
    assert a.lbfgs_iterations > 0 and np.abs(a.occupancy - pr.occupancy).max() < 1e-6


# ---------------------------------------------------------------- dual derivatives, against finite differences
from trustml_nb.fairdice import Welfare  # noqa: E402


@pytest.mark.parametrize("div", ["chi2", "kl", "softchi"])
@pytest.mark.parametrize("welfare", ["nsw", "weighted_nsw", 0.5])
def test_dual_hessian_is_the_derivative_of_the_dual_gradient(rm_data, welfare, div):
    "Newton's exact Hessian against central differences of the dual gradient, for every divergence and exp-parameterised welfare."
    from trustml_nb.fairdice import _Problem, _dual_fg, _dual_hess, _dual_init, _prepare
    rm, D = rm_data
    mdp, dD, notes, without = _prepare(D, None, rm.gamma, 'empirical')
    W = Welfare('weighted_nsw', weights=np.linspace(0.5, 1.5, mdp.n_objectives)) if welfare == "weighted_nsw" else get_welfare(welfare)
    P = _Problem(mdp, dD, notes=notes, without_data=without)
    Dv, beta = Divergence(div), 0.3
    x = _dual_init(P, W, None) + np.random.default_rng(0).normal(0, 0.05, len(P.live_idx) + mdp.n_objectives)
    H = _dual_hess(x, P, W, Dv, beta, None)
    h = 1e-6
    fd = np.column_stack([(_dual_fg(x + h * e, P, W, Dv, beta, None)[1] - _dual_fg(x - h * e, P, W, Dv, beta, None)[1]) / (2 * h)
                          for e in np.eye(len(x))])
    assert np.abs(H - fd).max() < 1e-5 * max(1.0, np.abs(fd).max())
    assert np.abs(fd - fd.T).max() < 1e-5 * max(1.0, np.abs(fd).max())   # the finite differences themselves are a Hessian
    # the gradient, in turn, against central differences of the dual value
    g = _dual_fg(x, P, W, Dv, beta, None)[1]
    fdg = np.array([(_dual_fg(x + h * e, P, W, Dv, beta, None)[0] - _dual_fg(x - h * e, P, W, Dv, beta, None)[0]) / (2 * h) for e in np.eye(len(x))])
    assert np.abs(g - fdg).max() < 1e-6 * max(1.0, np.abs(g).max())


def test_weighted_nsw_kstar_and_conjugate_by_grid_search():
    "k*(mu) = argmax_k w log k - mu k and c(mu) = its maximum, for weighted Nash welfare (brute force over a grid)."
    w = np.array([0.5, 2.0])
    W = Welfare('weighted_nsw', weights=w)
    ks = np.linspace(1e-4, 40, 400001)
    mu = np.array([0.2, 1.5])
    gain = [wi * np.log(ks) - m * ks for wi, m in zip(w, mu)]
    assert np.abs(W.kstar(mu) - [ks[g.argmax()] for g in gain]).max() < 1e-3
    assert abs(float(W.conj(mu)) - sum(g.max() for g in gain)) < 1e-4
    assert np.allclose(W.marginal(np.array([1.0, 4.0])), w / [1.0, 4.0])


def test_softmax_weights_do_not_overflow():
    "Max-min's dual weights are a softmax of the logits: large logits must not overflow to NaN."
    from trustml_nb.fairdice import _mu_of
    mu = _mu_of(np.array([800.0, 800.0 - np.log(3)]), get_welfare('maxmin'), None)
    assert np.allclose(mu, [0.75, 0.25])


@pytest.mark.parametrize("kind", ["chi2", "kl", "softchi"])
def test_divergence_weights_on_torch_tensors_match_numpy(kind):
    "NeuralFairDICE evaluates w*(y) and f0*(y) on torch tensors: they must stay tensors with the numpy values."
    D = Divergence(kind)
    y = np.linspace(-3, 2, 11)
    for fn in (D.wstar, D.f0star, D.finv):
        t = fn(torch.tensor(y, dtype=torch.float64))
        assert isinstance(t, torch.Tensor) and np.allclose(t.numpy(), fn(y))


def _global_states():
    import random
    return random.getstate(), np.random.get_state(), torch.random.get_rng_state()


def _same_states(a, b):
    return (a[0] == b[0] and all(np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v for u, v in zip(a[1], b[1]))
            and torch.equal(a[2], b[2]))


def test_fit_leaves_the_callers_global_generators_alone():
    "Issue 33: fit once reset Python's, numpy's and torch's global generators to its seed; now it seeds a private block."
    import random
    rd = random_momdp(n_states=8, n_actions=2, deterministic=True, seed=0)
    D = collect_dataset(rd, uniform_policy(rd), 60, 20, seed=0)
    random.seed(7); np.random.seed(7); torch.manual_seed(7)
    before = _global_states()
    a = NeuralFairDICE(gamma=rd.gamma, steps=20, seed=3, refit_steps=2, batch_size=16, show_progress=False).fit(D)
    assert _same_states(before, _global_states())
    np.random.seed(0); after_seed_0 = np.random.rand(); np.random.set_state(before[1])
    assert np.random.rand() != after_seed_0
    random.seed(1); np.random.seed(1); torch.manual_seed(1)        # the fit's result does not depend on the caller's states
    b = clone(a).fit(D)
    np.testing.assert_array_equal(a.policy_, b.policy_)
