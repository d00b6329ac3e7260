"""Bad-input sweep of every public entry point of trustml_nb.momdp and trustml_nb.fairdice (issue 12).

Every call ends in a clear trustml_nb ValueError/TypeError naming the argument (`expect_error`), or in a correct result
checked against something the code did not produce (`expect_ok`). Tiny data and few steps: the sweep runs in seconds.
Run: .venv/bin/python -m pytest tests/test_bad_input_fairdice.py -q
"""
import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings, strategies as st

from badinput import expect_error, expect_ok, finite, with_inf, with_nan
from trustml_nb.core import NumericalWarning
from trustml_nb.fairdice import (Divergence, FairDICE, FairDICENetwork, NeuralFairDICE, Welfare, behaviour_cloning,
                                 buggy_weighted_bc_loss, fairdice_explorer, four_room_data, get_welfare, jain_index,
                                 linear_scalarisation_sweep, policy_metrics, render_fairdice, simplex_grid, solve_unregularised,
                                 weighted_bc_loss, welfare_beta_sweep)
from trustml_nb.momdp import (OfflineDataset, TabularMOMDP, collect_dataset, counterexample_momdp, empirical_mdp, four_room,
                              from_mo_gymnasium, optimal_policy, plot_grid_policy, preference_dataset, random_momdp,
                              spibb_policy, uniform_policy, unmapped_room)

CX = counterexample_momdp()
CX_DD = np.array([[0.7, 0.3], [0.0, 0.0]])
RD = random_momdp(n_states=8, n_actions=2, n_objectives=2, deterministic=True, seed=0)
D = collect_dataset(RD, uniform_policy(RD), 20, 10, seed=0)
G = RD.gamma


def dataset(**change):
    "A copy of the tiny dataset D with some fields replaced (constructed, so its checks run)."
    f = dict(states=D.states, actions=D.actions, rewards=D.rewards, next_states=D.next_states, dones=D.dones, traj=D.traj,
             n_states=D.n_states, n_actions=D.n_actions)
    f.update(change)
    return OfflineDataset(**f)


def mdp(**change):
    "A copy of the counterexample with some fields replaced."
    f = dict(T=CX.T, R=CX.R, p0=CX.p0, gamma=0.0, absorbing=CX.absorbing, objectives=CX.objectives)
    f.update(change)
    return TabularMOMDP(**f)


def is_policy(pi, S, A):
    return isinstance(pi, np.ndarray) and pi.shape == (S, A) and finite(pi) and np.allclose(pi.sum(1), 1) and (pi >= 0).all()


def good_fit(est):
    "A fitted exact FairDICE whose occupancy is a valid one: finite, non-negative, satisfying the flow constraints."
    r = est.report_
    return (finite(r.occupancy) and (r.occupancy >= 0).all() and r.flow_residual < 1e-6 and np.isfinite(r.objective)
            and is_policy(est.policy_, *r.occupancy.shape))


# ---------------------------------------------------------------- momdp: the model and the dataset
T_bad_rows = CX.T.copy(); T_bad_rows[0, 0] = [0.5, 0.6]
MOMDP_ERRORS = [
    ("T NaN", lambda: mdp(T=with_nan(CX.T)), "T"),
    ("T rows not summing to 1", lambda: mdp(T=T_bad_rows), "T"),
    ("T 2-D", lambda: mdp(T=CX.T[0]), "T"),
    ("T as text", lambda: mdp(T=CX.T.astype(str)), "T"),
    ("R wrong shape", lambda: mdp(R=CX.R[:1]), "R"),
    ("R inf", lambda: mdp(R=with_inf(CX.R)), "R"),
    ("p0 not summing to 1", lambda: mdp(p0=[0.5, 0.2]), "p0"),
    ("p0 wrong length", lambda: mdp(p0=[1.0]), "p0"),
    ("gamma 1", lambda: mdp(gamma=1.0), "gamma"),
    ("gamma negative", lambda: mdp(gamma=-0.1), "gamma"),
    ("gamma NaN", lambda: mdp(gamma=np.nan), "gamma"),
    ("gamma text", lambda: mdp(gamma="0.9"), "gamma"),
    ("absorbing not 0/1", lambda: mdp(absorbing=[0, 0.5]), "absorbing"),
    ("objectives wrong count", lambda: mdp(objectives=("a",)), "objectives"),
    ("objectives duplicate", lambda: mdp(objectives=("a", "a")), "objectives"),
    ("objectives a string", lambda: mdp(objectives="ab"), "objectives"),
    ("objectives a number", lambda: mdp(objectives=3), "objectives"),
    ("returns: policy rows", lambda: CX.returns([[0.5, 0.6], [1, 0]]), "pi"),
    ("returns: policy shape", lambda: CX.returns([[0.5, 0.5]]), "pi"),
    ("occupancy: policy NaN", lambda: CX.occupancy(with_nan([[0.5, 0.5], [1, 0]])), "pi"),
    ("dataset empty", lambda: OfflineDataset([], [], np.zeros((0, 2)), [], [], [], 3, 2), "states"),
    ("states out of range", lambda: dataset(states=np.full(len(D), 8)), "states"),
    ("states fractional", lambda: dataset(states=D.states + 0.5), "states"),
    ("states text", lambda: dataset(states=D.states.astype(str)), "states"),
    ("states bool", lambda: dataset(states=D.states > 3), "states"),
    ("actions length mismatch", lambda: dataset(actions=D.actions[:-1]), "actions"),
    ("actions negative", lambda: dataset(actions=-np.ones(len(D), int)), "actions"),
    ("next_states out of range", lambda: dataset(next_states=D.next_states + 8), "next_states"),
    ("rewards NaN", lambda: dataset(rewards=with_nan(D.rewards)), "rewards"),
    ("rewards inf", lambda: dataset(rewards=with_inf(D.rewards)), "rewards"),
    ("rewards 1-D", lambda: dataset(rewards=D.rewards[:, 0]), "rewards"),
    ("rewards no objective", lambda: dataset(rewards=D.rewards[:, :0]), "rewards"),
    ("rewards categorical", lambda: dataset(rewards=pd.DataFrame({"a": pd.Categorical(D.rewards[:, 0]), "b": D.rewards[:, 1]})), "rewards"),
    ("rewards duplicate columns", lambda: dataset(rewards=pd.DataFrame(D.rewards, columns=["r", "r"])), "rewards"),
    ("dones not 0/1", lambda: dataset(dones=np.full(len(D), 2)), "dones"),
    ("traj fractional", lambda: dataset(traj=D.traj + 0.5), "traj"),
    ("n_states zero", lambda: dataset(n_states=0), "n_states"),
    ("n_states fractional", lambda: dataset(n_states=8.5), "n_states"),
    ("n_actions text", lambda: dataset(n_actions="2"), "n_actions"),
    ("timeouts length", lambda: dataset(timeouts=np.zeros(3, bool)), "timeouts"),
    ("preferences shape", lambda: dataset(preferences=np.ones((len(D), 3))), "preferences"),
    ("subset mask length", lambda: D.subset(np.ones(3, bool)), "mask"),
]


@pytest.mark.parametrize("case,fn,arg", MOMDP_ERRORS, ids=[c[0] for c in MOMDP_ERRORS])
def test_model_and_dataset_errors(case, fn, arg):
    expect_error(fn, arg=arg, module="momdp", case=case)


# ---------------------------------------------------------------- momdp: generators, policies, data collection
GEN_ERRORS = [
    ("collect_dataset: mdp", lambda: collect_dataset("cx", [[0.5, 0.5]]), "mdp"),
    ("collect_dataset: policy shape", lambda: collect_dataset(CX, [[0.5, 0.5]]), "policy"),
    ("collect_dataset: empty policy list", lambda: collect_dataset(CX, []), "policy"),
    ("collect_dataset: bad policy in list", lambda: collect_dataset(CX, [uniform_policy(CX), [[0.9, 0.9], [1, 0]]]), "policy[1]"),
    ("collect_dataset: n_trajectories 0", lambda: collect_dataset(CX, uniform_policy(CX), 0), "n_trajectories"),
    ("collect_dataset: n_trajectories fractional", lambda: collect_dataset(CX, uniform_policy(CX), 2.5), "n_trajectories"),
    ("collect_dataset: max_steps 0", lambda: collect_dataset(CX, uniform_policy(CX), 2, 0), "max_steps"),
    ("collect_dataset: seed -1", lambda: collect_dataset(CX, uniform_policy(CX), 2, seed=-1), "seed"),
    ("collect_dataset: preferences shape", lambda: collect_dataset(CX, uniform_policy(CX), 2, preferences=[[1, 2, 3]]), "preferences"),
    ("preference_dataset: epsilon 1.5", lambda: preference_dataset(RD, 3, epsilon=1.5), "epsilon"),
    ("preference_dataset: concentration 0", lambda: preference_dataset(RD, 3, concentration=0.0), "concentration"),
    ("preference_dataset: concentration NaN", lambda: preference_dataset(RD, 3, concentration=np.nan), "concentration"),
    ("preference_dataset: n_preferences 0", lambda: preference_dataset(RD, 3, n_preferences=0), "n_preferences"),
    ("preference_dataset: filtered text", lambda: preference_dataset(RD, 3, filtered="yes"), "filtered"),
    ("empirical_mdp: data", lambda: empirical_mdp(D.to_frame(), 0.9), "data"),
    ("empirical_mdp: gamma 1", lambda: empirical_mdp(D, 1.0), "gamma"),
    ("empirical_mdp: warn text", lambda: empirical_mdp(D, 0.9, warn="no"), "warn"),
    ("optimal_policy: w length", lambda: optimal_policy(RD, [1, 2, 3]), "w"),
    ("optimal_policy: w NaN", lambda: optimal_policy(RD, [np.nan, 1]), "w"),
    ("optimal_policy: max_iter 0", lambda: optimal_policy(RD, max_iter=0), "max_iter"),
    ("spibb_policy: optimality 2", lambda: spibb_policy(RD, 2.0), "optimality"),
    ("spibb_policy: w length", lambda: spibb_policy(RD, 0.5, w=[1]), "w"),
    ("spibb_policy: seed -1", lambda: spibb_policy(RD, 0.5, seed=-1), "seed"),
    ("uniform_policy: mdp", lambda: uniform_policy(None), "mdp"),
    ("random_momdp: n_states too small", lambda: random_momdp(n_states=4, n_objectives=3), "n_states"),
    ("random_momdp: n_objectives 0", lambda: random_momdp(n_objectives=0), "n_objectives"),
    ("random_momdp: n_next too large", lambda: random_momdp(n_states=8, n_next=8), "n_next"),
    ("random_momdp: gamma 1", lambda: random_momdp(gamma=1.0), "gamma"),
    ("random_momdp: deterministic text", lambda: random_momdp(deterministic="yes"), "deterministic"),
    ("four_room: slip 1", lambda: four_room(slip=1.0), "slip"),
    ("four_room: gamma NaN", lambda: four_room(gamma=np.nan), "gamma"),
    ("four_room: goal on a wall", lambda: four_room(goals=((5, 0), (9, 8))), "goals"),
    ("four_room: duplicate goals", lambda: four_room(goals=((2, 1), (2, 1))), "goals"),
    ("four_room: goals 1-D", lambda: four_room(goals=(2, 1)), "goals"),
    ("four_room: fractional goal", lambda: four_room(goals=((2.5, 1),)), "goals"),
    ("four_room: start off the grid", lambda: four_room(start=(11, 0)), "start"),
    ("four_room: start on a goal", lambda: four_room(start=(2, 1)), "start"),
    ("plot_grid_policy: no layout", lambda: plot_grid_policy(CX, uniform_policy(CX)), "mdp"),
    ("plot_grid_policy: policy shape", lambda: plot_grid_policy(four_room(), np.ones((3, 4)) / 4), "pi"),
    ("from_mo_gymnasium: env_id", lambda: from_mo_gymnasium("cart-pole-v0"), "env_id"),
    ("from_mo_gymnasium: gamma 1", lambda: from_mo_gymnasium("fruit-tree-v0", gamma=1.0), "gamma"),
    ("from_mo_gymnasium: env_kwargs", lambda: from_mo_gymnasium("fruit-tree-v0", depth=4), "env_kwargs"),
    ("from_mo_gymnasium: keep_objectives range", lambda: from_mo_gymnasium("fruit-tree-v0", depth=5, keep_objectives=[0, 6]), "keep_objectives"),
    ("from_mo_gymnasium: keep_objectives duplicate", lambda: from_mo_gymnasium("fruit-tree-v0", depth=5, keep_objectives=[1, 1]), "keep_objectives"),
    ("from_mo_gymnasium: reward_shift length", lambda: from_mo_gymnasium("deep-sea-treasure-v0", reward_shift=[1.0]), "reward_shift"),
]


@pytest.mark.parametrize("case,fn,arg", GEN_ERRORS, ids=[c[0] for c in GEN_ERRORS])
def test_generator_and_data_errors(case, fn, arg):
    expect_error(fn, arg=arg, module="momdp", case=case)


def test_momdp_correct_results():
    "Edge cases that have a right answer, checked against it."
    pis = [uniform_policy(CX), np.array([[1.0, 0.0], [1.0, 0.0]])]
    two = expect_ok(collect_dataset, CX, pis, 4, 1, seed=0, module="momdp", case="collect_dataset: cycles a list of policies",
                    check=lambda d: len(d) == 4 and (d.actions[1::2] == 0).all())
    expect_ok(lambda: two.subset(np.arange(len(two)) == 0), module="momdp", case="subset: one row", check=lambda d: len(d) == 1)
    expect_ok(empirical_mdp, dataset(states=D.states), G, warn=False, module="momdp", case="empirical_mdp: deterministic model",
              check=lambda r: np.allclose(r[0].T[r[1] > 0], RD.T[r[1] > 0]) and np.isclose(r[1].sum(), 1))
    expect_ok(preference_dataset, RD, 3, module="momdp", case="preference_dataset: tiny",
              check=lambda d: np.allclose(d.preferences.sum(1), 1) and d.n_trajectories == 3)
    expect_ok(four_room, goals=((2, 1), (9, 8)), module="momdp", case="four_room: two goals",
              check=lambda m: m.n_objectives == 2 and m.objectives == ("obj0", "obj1"))
    expect_ok(lambda: mdp(T=CX.T.astype(np.float32)), module="momdp", case="TabularMOMDP: float32 transitions",
              check=lambda m: np.allclose(m.returns([[7 / 12, 5 / 12], [1, 0]]), [11 / 6, 11 / 4]))
    expect_ok(optimal_policy, CX, [1, 0], module="momdp", case="optimal_policy: one objective's weight",
              check=lambda r: (r[0][0] == [0, 1]).all())


# ---------------------------------------------------------------- fairdice: welfare, metrics, divergences
FUNC_ERRORS = [
    ("Welfare: kind", lambda: Welfare("nash-ish"), "kind"),
    ("Welfare: alpha 0", lambda: Welfare("alpha", alpha=0.0), "alpha"),
    ("Welfare: alpha with nsw", lambda: Welfare("nsw", alpha=2.0), "alpha"),
    ("Welfare: weights with nsw", lambda: Welfare("nsw", weights=[1, 2]), "weights"),
    ("Welfare: negative weights", lambda: Welfare("weighted_nsw", weights=[1, -2]), "weights"),
    ("Welfare: weights NaN", lambda: Welfare("weighted_nsw", weights=[1, np.nan]), "weights"),
    ("Welfare(): zero return", lambda: get_welfare("nsw")([0.3, 0.0]), "returns"),
    ("Welfare(): NaN return", lambda: get_welfare("nsw")([0.3, np.nan]), "returns"),
    ("get_welfare: unknown name", lambda: get_welfare("NSW "), "welfare"),
    ("Welfare.marginal: max-min", lambda: get_welfare("maxmin").marginal(np.array([0.3, 0.5])), "max-min welfare is not differentiable"),
    ("Welfare.kstar: utilitarian", lambda: get_welfare("utilitarian").kstar(np.array([0.3, 0.5])), "utilitarian welfare has no k*"),
    ("get_welfare: negative alpha", lambda: get_welfare(-1), "welfare"),
    ("get_welfare: NaN", lambda: get_welfare(np.nan), "welfare"),
    ("get_welfare: list", lambda: get_welfare([1, 2]), "welfare"),
    ("get_welfare: bool", lambda: get_welfare(True), "welfare"),
    ("jain_index: negative", lambda: jain_index([1, -1]), "returns"),
    ("jain_index: all zero", lambda: jain_index([0, 0]), "returns"),
    ("jain_index: NaN", lambda: jain_index([1, np.nan]), "returns"),
    ("jain_index: empty", lambda: jain_index([]), "returns"),
    ("jain_index: text", lambda: jain_index(["a", "b"]), "returns"),
    ("policy_metrics: mdp", lambda: policy_metrics(None, uniform_policy(CX)), "mdp"),
    ("policy_metrics: policy shape", lambda: policy_metrics(CX, [[0.5, 0.5]]), "policies"),
    ("policy_metrics: empty dict", lambda: policy_metrics(CX, {}), "policies"),
    ("policy_metrics: bad policy in dict", lambda: policy_metrics(CX, {"a": uniform_policy(CX), "b": [[2, -1], [1, 0]]}), "policies"),
    ("Divergence: unknown", lambda: Divergence("tv"), "divergence"),
    ("behaviour_cloning: data", lambda: behaviour_cloning(np.zeros((3, 2))), "data"),
    ("weighted_bc_loss: numpy weights", lambda: weighted_bc_loss(np.ones(3), torch.zeros(3)), "weights"),
    ("weighted_bc_loss: (B, 1) weights", lambda: weighted_bc_loss(torch.ones(3, 1), torch.zeros(3)), "weights"),
    ("weighted_bc_loss: mask shape", lambda: weighted_bc_loss(torch.ones(3), torch.zeros(3), torch.ones(2)), "mask"),
    ("buggy_weighted_bc_loss: list", lambda: buggy_weighted_bc_loss([1.0, 2.0], torch.zeros(2)), "weights"),
    ("simplex_grid: step 0.3", lambda: simplex_grid(3, 0.3), "step"),
    ("simplex_grid: step 0", lambda: simplex_grid(3, 0.0), "step"),
    ("simplex_grid: n_objectives 0", lambda: simplex_grid(0), "n_objectives"),
    ("four_room_data: quality 1.5", lambda: four_room_data(1.5), "quality"),
    ("four_room_data: n_trajectories 0", lambda: four_room_data(0.0, 0), "n_trajectories"),
    ("four_room_data: seed -1", lambda: four_room_data(0.0, 5, seed=-1), "seed"),
    ("render_fairdice: welfare", lambda: render_fairdice(0.0, "fair", 0.01, 5), "welfare"),
    ("render_fairdice: beta 0", lambda: render_fairdice(0.0, "nsw", 0.0, 5), "beta"),
    ("fairdice_explorer: n_trajectories 0", lambda: fairdice_explorer(0), "n_trajectories"),
    ("FairDICENetwork: n_states 0", lambda: FairDICENetwork(0, 2, 2), "n_states"),
    ("FairDICENetwork: beta 0", lambda: FairDICENetwork(4, 2, 2, beta=0.0), "beta"),
    ("FairDICENetwork: objective_weights", lambda: FairDICENetwork(4, 2, 2, objective_weights=[1, -1]), "objective_weights"),
    ("solve_unregularised: mdp", lambda: solve_unregularised("cx"), "mdp"),
    ("solve_unregularised: objective_weights length", lambda: solve_unregularised(CX, objective_weights=[1, 2, 3]), "objective_weights"),
    ("solve_unregularised: objective_weights NaN", lambda: solve_unregularised(CX, objective_weights=[1, np.nan]), "objective_weights"),
    ("solve_unregularised: cvxpy_solver", lambda: solve_unregularised(CX, cvxpy_solver="clarabel"), "cvxpy_solver"),
    ("solve_unregularised: welfare weights", lambda: solve_unregularised(CX, Welfare("weighted_nsw", weights=[1, 1, 1])), "welfare"),
    ("solve_unregularised: non-positive objective", lambda: solve_unregularised(mdp(R=CX.R * [1, 0])), "welfare"),
]


@pytest.mark.parametrize("case,fn,arg", FUNC_ERRORS, ids=[c[0] for c in FUNC_ERRORS])
def test_function_errors(case, fn, arg):
    expect_error(fn, arg=arg, module="fairdice", case=case)


# ---------------------------------------------------------------- fairdice: the exact estimator
CUT = OfflineDataset([0, 1], [0, 0], [[1.0, 1.0], [1.0, 1.0]], [1, 2], [False, False], [0, 0], 4, 1)   # cut by the horizon


def fit(data=D, dD=None, **settings):
    return lambda: FairDICE(**({"gamma": G} if isinstance(data, OfflineDataset) else {}) | settings).fit(data, state_action_distribution=dD)


def fit_cx(dD=CX_DD, **settings):
    return lambda: FairDICE(divergence="chi2", beta=1.0, **settings).fit(CX, state_action_distribution=dD)


D_nan = dataset(); D_nan.rewards[0, 0] = np.nan               # edited after construction: fit checks again
EXACT_ERRORS = [
    ("welfare unknown", fit(welfare="fair"), "welfare"),
    ("welfare weights length", fit(welfare=Welfare("weighted_nsw", weights=[1, 2, 3])), "welfare"),
    ("divergence unknown", fit(divergence="tv"), "divergence"),
    ("beta 0", fit(beta=0.0), "beta"),
    ("beta negative", fit(beta=-1.0), "beta"),
    ("beta NaN", fit(beta=np.nan), "beta"),
    ("beta inf", fit(beta=np.inf), "beta"),
    ("beta huge", fit(beta=1e300), "beta"),
    ("beta text", fit(beta="0.1"), "beta"),
    ("beta too small for double precision", fit(beta=1e-300), "beta"),
    ("gamma missing", lambda: FairDICE().fit(D), "gamma"),
    ("gamma 1", fit(gamma=1.0), "gamma"),
    ("gamma NaN", fit(gamma=np.nan), "gamma"),
    ("gamma differs from the model's", fit_cx(gamma=0.5), "gamma"),
    ("solver unknown", fit(solver="ECOS"), "solver"),
    ("method unknown", fit(method="bfgs"), "method"),
    ("data_distribution unknown", fit(data_distribution="counts"), "data_distribution"),
    ("states_without_data unknown", fit(states_without_data="drop"), "states_without_data"),
    ("states_without_data not text", fit(states_without_data=0), "states_without_data"),
    ("data: no occupancy stays inside it (one cut trajectory)", fit(CUT), "data"),
    ("objective_weights negative (finding 4)", fit_cx(objective_weights=-np.ones(2)), "objective_weights"),
    ("objective_weights negative, primal", fit_cx(objective_weights=-np.ones(2), solver="primal"), "objective_weights"),
    ("objective_weights zero", fit_cx(objective_weights=[0.0, 1.0]), "objective_weights"),
    ("objective_weights NaN", fit_cx(objective_weights=[np.nan, 1.0]), "objective_weights"),
    ("objective_weights inf", fit_cx(objective_weights=[np.inf, 1.0]), "objective_weights"),
    ("objective_weights length", fit_cx(objective_weights=[1.0, 1.0, 1.0]), "objective_weights"),
    ("objective_weights text", fit_cx(objective_weights=["a", "b"]), "objective_weights"),
    ("objective_weights 2-D", fit_cx(objective_weights=[[1.0, 1.0]]), "objective_weights"),
    ("tol 0", fit(tol=0.0), "tol"),
    ("tol NaN", fit(tol=np.nan), "tol"),
    ("max_iter 0", fit(max_iter=0), "max_iter"),
    ("max_iter fractional", fit(max_iter=2.5), "max_iter"),
    ("newton_polish text", fit(newton_polish="yes"), "newton_polish"),
    ("cvxpy_solver unknown (primal)", fit(solver="primal", cvxpy_solver="NOPE"), "cvxpy_solver"),
    ("cvxpy_solver not text", fit(cvxpy_solver=5), "cvxpy_solver"),
    ("data a DataFrame", lambda: FairDICE(gamma=G).fit(D.to_frame()), "data"),
    ("data rewards edited to NaN", fit(D_nan), "rewards"),
    ("state_action_distribution with a dataset", fit(D, dD=np.ones((8, 2))), "state_action_distribution"),
    ("state_action_distribution missing", fit_cx(dD=None), "state_action_distribution"),
    ("state_action_distribution shape", fit_cx(dD=np.ones((3, 2))), "state_action_distribution"),
    ("state_action_distribution negative", fit_cx(dD=[[0.7, -0.3], [0, 0]]), "state_action_distribution"),
    ("state_action_distribution NaN", fit_cx(dD=with_nan(CX_DD)), "state_action_distribution"),
    ("state_action_distribution zero", fit_cx(dD=np.zeros((2, 2))), "state_action_distribution"),
    ("state_action_distribution only absorbing", fit_cx(dD=[[0, 0], [1, 1]]), "state_action_distribution"),
    ("state_action_distribution text", fit_cx(dD=CX_DD.astype(str)), "state_action_distribution"),
    ("log welfare, objective never rewarded", fit(dataset(rewards=D.rewards * [1, 0])), "welfare"),
    ("log welfare, objective never rewarded (primal)", fit(dataset(rewards=D.rewards * [1, 0]), solver="primal"), "welfare"),
]


@pytest.mark.parametrize("case,fn,arg", EXACT_ERRORS, ids=[c[0] for c in EXACT_ERRORS])
def test_exact_fairdice_errors(case, fn, arg):
    expect_error(fn, arg=arg, module="fairdice", case=case)


def test_state_action_distribution_without_mass_at_the_start():
    rd3 = random_momdp(n_states=8, n_actions=2, n_objectives=2, seed=1)
    dD = np.ones((8, 2)); dD[0] = 0                              # no data at the start state 0
    expect_error(lambda: FairDICE().fit(rd3, state_action_distribution=dD), arg="state_action_distribution",
                 module="fairdice", case="state_action_distribution: no mass on the start")


def test_exact_fairdice_correct_results():
    "Degenerate but legitimate inputs solve correctly: one transition, one objective, one action, a 0/1 d_D, reordered rows."
    one = OfflineDataset([0], [1], [[1.0, 2.0]], [3], [True], [0], 4, 2)
    for solver in ("dual", "primal"):                       # one transition: the only feasible policy takes it; J = (1 - g) r
        expect_ok(fit(one, gamma=0.9, solver=solver), module="fairdice", case=f"one transition ({solver})",
                  check=lambda e: good_fit(e) and np.allclose(e.returns_, [0.1, 0.2]) and e.policy_[0, 1] == 1)
    one_obj = dataset(rewards=D.rewards.sum(1, keepdims=True))
    du = expect_ok(fit(one_obj, welfare="nsw"), module="fairdice", case="one objective", check=good_fit)
    expect_ok(fit(one_obj, welfare="nsw", solver="primal"), module="fairdice", case="one objective (primal)",
              check=lambda e: good_fit(e) and np.allclose(e.occupancy_, du.occupancy_, atol=1e-6))
    ra = random_momdp(n_states=8, n_actions=1, n_objectives=2, seed=0)
    Da = collect_dataset(ra, uniform_policy(ra), 20, 10, seed=0)
    expect_ok(lambda: FairDICE(gamma=ra.gamma).fit(Da), module="fairdice", case="one action: the data's own policy",
              check=lambda e: good_fit(e) and np.allclose(e.policy_, 1.0))
    expect_ok(fit_cx(dD=CX_DD > 0), module="fairdice", case="0/1 (boolean) d_D is normalised",
              check=lambda e: good_fit(e) and np.allclose(e.report_.data_distribution[0], [0.5, 0.5]))
    step = np.concatenate([np.arange(n) for n in np.bincount(D.traj)])
    by_step = np.lexsort((D.traj, step))                  # trajectories interleaved, each still in time order
    interleaved = OfflineDataset(*(x[by_step] for x in (D.states, D.actions, D.rewards, D.next_states, D.dones, D.traj)),
                                 D.n_states, D.n_actions)
    ref = FairDICE(gamma=G).fit(D)
    expect_ok(fit(interleaved), module="fairdice", case="interleaved trajectories: same solution",
              check=lambda e: np.allclose(e.occupancy_, ref.occupancy_, atol=1e-9))
    shuffled = np.random.default_rng(0).permutation(len(D))
    expect_error(lambda: OfflineDataset(*(x[shuffled] for x in (D.states, D.actions, D.rewards, D.next_states, D.dones, D.traj)),
                                        D.n_states, D.n_actions), arg="traj", module="momdp", case="rows out of time order")
    expect_ok(fit(welfare=Welfare("weighted_nsw", weights=[1, 2])), module="fairdice", case="weighted Nash",
              check=lambda e: good_fit(e) and np.allclose(e.objective_weights_ * e.returns_, [1, 2], rtol=1e-6))
    expect_ok(fit(welfare="maxmin", objective_weights=(1, 2)), module="fairdice", case="max-min with fixed weights is linear",
              check=lambda e: good_fit(e) and e.report_.welfare == "linear (fixed weights)")
    expect_ok(fit(beta=1e8, data_distribution="occupancy"), module="fairdice", case="beta at its limit: the behaviour policy",
              check=lambda e: np.allclose(RD.returns(e.policy_), RD.returns(behaviour_cloning(D)), rtol=1e-3))


@settings(max_examples=12, deadline=None)
@given(w=st.lists(st.one_of(st.floats(max_value=0.0), st.just(np.nan), st.just(np.inf)), min_size=1, max_size=2))
def test_fixed_weights_with_a_bad_entry_are_refused(w):
    weights = (w + [1.0])[:2] if len(w) < 2 else w
    expect_error(fit_cx(objective_weights=weights), arg="objective_weights", module="fairdice", case="objective_weights (hypothesis)")


@settings(max_examples=8, deadline=None)
@given(w=st.lists(st.floats(0.05, 20.0), min_size=2, max_size=2))
def test_fixed_positive_weights_solve_exactly(w):
    "FairDICE-fixed on the counterexample against its closed form (chi2, beta = 1, one state, gamma = 0)."
    e = expect_ok(fit_cx(objective_weights=w), module="fairdice", case="objective_weights positive (hypothesis)", check=good_fit)
    # maximise mu . (d1 r1 + d2 r2) - (d1 - .7)^2 / (2 .7) - (d2 - .3)^2 / (2 .3) over d1 + d2 = 1, d >= 0:
    # the first-order condition mu . (r1 - r2) = (d1 - .7) (1 / .7 + 1 / .3) gives d1 = .7 + .21 mu . (r1 - r2), clipped to [0, 1]
    g = np.dot(w, [1 - 3, 4 - 1])
    d1 = np.clip(0.7 + 0.21 * g, 0, 1)
    assert abs(e.occupancy_[0, 0] - d1) < 1e-6


# ---------------------------------------------------------------- fairdice: the neural estimator
def train(data=D, **settings):
    return lambda: NeuralFairDICE(**({"gamma": G, "steps": 3, "refit_steps": 1} | settings)).fit(data)


NEURAL_ERRORS = [
    ("lr 0", train(lr=0.0), "lr"),
    ("lr negative", train(lr=-0.1), "lr"),
    ("lr NaN", train(lr=np.nan), "lr"),
    ("lr inf", train(lr=np.inf), "lr"),
    ("lr text", train(lr="0.1"), "lr"),
    ("policy_lr 0", train(policy_lr=0.0), "policy_lr"),
    ("policy_lr NaN", train(policy_lr=np.nan), "policy_lr"),
    ("steps 0", train(steps=0), "steps"),
    ("steps fractional", train(steps=2.5), "steps"),
    ("batch_size 0", train(batch_size=0), "batch_size"),
    ("batch_size fractional", train(batch_size=1.5), "batch_size"),
    ("hidden 0", train(hidden=0), "hidden"),
    ("value_model unknown", train(value_model="cnn"), "value_model"),
    ("weight_parametrisation unknown", train(weight_parametrisation="log"), "weight_parametrisation"),
    ("weight_parametrisation softmax with Nash", train(weight_parametrisation="softmax"), "weight_parametrisation"),
    ("weight_parametrisation raw with max-min", train(welfare="maxmin", weight_parametrisation="raw"), "weight_parametrisation"),
    ("weight_parametrisation with fixed weights", train(weight_parametrisation="raw", objective_weights=[1, 1]), "weight_parametrisation"),
    ("objective_weights negative", train(objective_weights=[-1.0, 1.0]), "objective_weights"),
    ("objective_weights length", train(objective_weights=[1.0]), "objective_weights"),
    ("terminal unknown", train(terminal="drop"), "terminal"),
    ("bc_weights unknown", train(bc_weights="awr"), "bc_weights"),
    ("initial_states unknown", train(initial_states="first"), "initial_states"),
    ("states_without_data unknown", train(states_without_data="drop"), "states_without_data"),
    ("value_init unknown", train(value_init="random"), "value_init"),
    ("value_init not text", train(value_init=None), "value_init"),
    ("data: no occupancy stays inside it (one cut trajectory)", train(CUT), "data"),
    ("gradient_penalty negative", train(gradient_penalty=-1.0), "gradient_penalty"),
    ("gradient_penalty with a tabular nu", train(gradient_penalty=1e-4, value_model="tabular"), "gradient_penalty"),
    ("seed negative", train(seed=-1), "seed"),
    ("seed fractional", train(seed=1.5), "seed"),
    ("log_every 0", train(log_every=0), "log_every"),
    ("refit_steps negative", train(refit_steps=-1), "refit_steps"),
    ("show_progress text", train(show_progress="yes"), "show_progress"),
    ("gamma missing", train(gamma=None), "gamma"),
    ("gamma 1", train(gamma=1.0), "gamma"),
    ("beta 0", train(beta=0.0), "beta"),
    ("beta too small for float32", train(beta=1e-300), "beta"),
    ("welfare unknown", train(welfare="fair"), "welfare"),
    ("divergence unknown", train(divergence="tv"), "divergence"),
    ("data a model", train(CX), "data"),
    ("data rewards edited to NaN", train(D_nan), "rewards"),
    ("log welfare, objective never rewarded", train(dataset(rewards=D.rewards * [1, 0])), "welfare"),
]


@pytest.mark.parametrize("case,fn,arg", NEURAL_ERRORS, ids=[c[0] for c in NEURAL_ERRORS])
def test_neural_fairdice_errors(case, fn, arg):
    expect_error(fn, arg=arg, module="fairdice", case=case)


def test_neural_fairdice_correct_results():
    ok = lambda e: is_policy(e.policy_, D.n_states, D.n_actions) and finite(e.objective_weights_) and np.isfinite(e.report_.final_loss)
    expect_ok(train(), module="fairdice", case="three steps", check=ok)
    expect_ok(train(batch_size=1, terminal="official"), module="fairdice", case="batch of one row, official terminal mask", check=ok)
    expect_ok(train(welfare="maxmin"), module="fairdice", case="max-min: weights on the simplex",
              check=lambda e: ok(e) and np.isclose(e.objective_weights_.sum(), 1, atol=1e-5))
    expect_ok(train(objective_weights=[2.0, 0.5]), module="fairdice", case="fixed weights stay fixed",
              check=lambda e: ok(e) and np.allclose(e.objective_weights_, [2.0, 0.5]))


# ---------------------------------------------------------------- fairdice: the sweeps, the unregularised solver, the widget
SWEEP_ERRORS = [
    ("welfare_beta_sweep: alpha 2", lambda: welfare_beta_sweep(alphas=(2.0,)), "alphas"),
    ("welfare_beta_sweep: alphas text", lambda: welfare_beta_sweep(alphas="ab"), "alphas"),
    ("welfare_beta_sweep: betas empty", lambda: welfare_beta_sweep(betas=()), "betas"),
    ("welfare_beta_sweep: beta 0", lambda: welfare_beta_sweep(betas=(0.0, 1.0)), "betas"),
    ("welfare_beta_sweep: seed -1", lambda: welfare_beta_sweep(seeds=[-1]), "seeds"),
    ("welfare_beta_sweep: divergence", lambda: welfare_beta_sweep(divergence="tv"), "divergence"),
    ("welfare_beta_sweep: data_distribution", lambda: welfare_beta_sweep(data_distribution="counts"), "data_distribution"),
    ("welfare_beta_sweep: n_trajectories 0", lambda: welfare_beta_sweep(n_trajectories=0), "n_trajectories"),
    ("welfare_beta_sweep: optimality 2", lambda: welfare_beta_sweep(optimality=2.0), "optimality"),
    ("welfare_beta_sweep: show_progress text", lambda: welfare_beta_sweep(show_progress="no"), "show_progress"),
    ("linear_scalarisation_sweep: data", lambda: linear_scalarisation_sweep(CX, CX), "data"),
    ("linear_scalarisation_sweep: mdp_true sizes", lambda: linear_scalarisation_sweep(D, CX), "mdp_true"),
    ("linear_scalarisation_sweep: negative weights", lambda: linear_scalarisation_sweep(D, RD, weights=[[1, -1]]), "weights"),
    ("linear_scalarisation_sweep: zero row", lambda: linear_scalarisation_sweep(D, RD, weights=[[0, 0]]), "weights"),
    ("linear_scalarisation_sweep: weights columns", lambda: linear_scalarisation_sweep(D, RD, weights=[[1, 0, 0]]), "weights"),
    ("linear_scalarisation_sweep: weights NaN", lambda: linear_scalarisation_sweep(D, RD, weights=[[np.nan, 1]]), "weights"),
    ("linear_scalarisation_sweep: beta 0", lambda: linear_scalarisation_sweep(D, RD, beta=0.0), "beta"),
    ("linear_scalarisation_sweep: mu_scale 0", lambda: linear_scalarisation_sweep(D, RD, mu_scale=0.0), "mu_scale"),
    ("linear_scalarisation_sweep: show_progress text", lambda: linear_scalarisation_sweep(D, RD, show_progress=1), "show_progress"),
]


@pytest.mark.parametrize("case,fn,arg", SWEEP_ERRORS, ids=[c[0] for c in SWEEP_ERRORS])
def test_sweep_errors(case, fn, arg):
    expect_error(fn, arg=arg, module="fairdice", case=case)


def test_sweeps_and_unregularised_correct_results():
    metrics = ["nash_welfare", "utilitarian_welfare", "jain_index", "min_return"]
    expect_ok(welfare_beta_sweep, seeds=[0], alphas=[1.0], betas=[0.1], n_states=8, n_trajectories=10, module="fairdice",
              case="welfare_beta_sweep: tiny", check=lambda f: len(f) == 2 and finite(f[metrics]) and list(f.policy) == ["behaviour", "alpha=1"])
    lin = expect_ok(linear_scalarisation_sweep, D, RD, weights=[[1, 0], [0.5, 0.5]], module="fairdice", case="linear sweep: two weights",
                    check=lambda f: len(f) == 4 and np.isfinite(f.utilitarian_welfare).all())
    assert list(lin.kind[:2]) == ["linear, unregularised", "linear, regularised"] and lin.weights[2] == [0.5, 0.5]
    expect_ok(solve_unregularised, CX, "maxmin", module="fairdice", case="solve_unregularised: max-min equalises (p = 2/5)",
              check=lambda r: np.allclose(r.returns, [2.2, 2.2], atol=1e-6) and finite(r.objective_weights))
    expect_ok(solve_unregularised, CX, objective_weights=[1, 0], module="fairdice", case="solve_unregularised: linear",
              check=lambda r: np.isclose(r.objective, 3.0, atol=1e-6))
    expect_ok(policy_metrics, CX, {"never a1": [[0, 1], [1, 0]]}, module="fairdice", case="policy_metrics: a deterministic policy",
              check=lambda f: np.isclose(f.nash_welfare[0], np.log(3)) and np.isclose(f.jain_index[0], 16 / 20))
    expect_ok(weighted_bc_loss, torch.ones(3), torch.zeros(3) - 1, torch.zeros(3), module="fairdice",
              case="weighted_bc_loss: all rows masked gives 0", check=lambda v: v.item() == 0.0)
    expect_ok(simplex_grid, 2, 0.5, module="fairdice", case="simplex_grid: 3 points", check=lambda g: len(g) == 3 and np.allclose(g.sum(1), 1))


def test_states_without_data_correct_results():
    "Both conventions on a log with a reachable state it never leaves: the default keeps the occupancy on the data; 'absorbing' solves too."
    world, logged = unmapped_room()
    for solver in ("dual", "primal"):
        e = expect_ok(fit(logged, gamma=world.gamma, beta=10.0, solver=solver), module="fairdice", case=f"no_flow ({solver})",
                      check=lambda e: good_fit(e) and abs(e.report_.total_occupancy - 1) < 1e-9 and e.report_.occupancy_without_data == 0)
    with pytest.warns(NumericalWarning, match="states without data"):
        expect_ok(fit(logged, gamma=world.gamma, beta=10.0, states_without_data="absorbing"), module="fairdice", case="absorbing",
                  check=lambda e: good_fit(e) and e.report_.occupancy_without_data > 0.1
                  and abs(e.report_.occupancy.sum() - 1) < 1e-9)
    with pytest.warns(NumericalWarning, match="states without data"):
        expect_ok(train(CUT, states_without_data="absorbing"), module="fairdice", case="neural, absorbing, one cut trajectory",
                  check=lambda e: np.isfinite(e.objective_weights_).all())
    expect_ok(train(logged, gamma=world.gamma, value_model="tabular"), module="fairdice", case="neural, no_flow, tabular nu",
              check=lambda e: np.isfinite(e.objective_weights_).all() and np.isfinite(e.network_.nu_start.numpy()).all())
