"""Issue 34 for FedFACT: plain-word budgets. `global_budget` / `local_budget` replace the paper's `xi_g` / `xi_l` in every public
signature, and `cost_matrices` replaces the protocols' `M_k` / `Mbar_k`; the old names keep working for one release, with a
FutureWarning that names the new one, and give the identical result.
"""
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from trustml_nb.core import NumericalWarning, quiet
from trustml_nb.fedfact import (FedAvg, FedFactIn, FedFactInProtocol, FedFactPost, FedFactPostProtocol, explore_fedfact, fair_optimum,
                                synthetic_conflict)

QUIET = dict(show_progress=False)


@pytest.fixture(scope="module")
def fed():
    fd = synthetic_conflict(n=600, sizes=(0.6, 0.4), group_share=(0.7, 0.3), bias=(1.0, -1.0), seed=0)
    with quiet(NumericalWarning): avg = FedAvg(n_rounds=2, local_steps=5, seed=0, **QUIET).fit(fd)
    return fd, avg


def _no_future_warning(fn):
    "Run fn with every FutureWarning an error: the new names warn nothing."
    with warnings.catch_warnings():
        warnings.simplefilter('error', FutureWarning)
        with quiet(NumericalWarning): return fn()


def _renamed_warns(fn, *new_names):
    "Run fn, which passes old keywords: one FutureWarning per old keyword, each naming its new keyword."
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        out = fn()
    msgs = [str(x.message) for x in w if issubclass(x.category, FutureWarning)]
    assert len(msgs) == len(new_names), msgs
    for m, name in zip(msgs, new_names): assert 'deprecated' in m and f"use {name}" in m, m
    return out


@pytest.mark.parametrize('cls,kw', [(FedFactPost, dict(n_rounds=4)), (FedFactIn, dict(n_rounds=2, local_steps=3, n_history=2))])
@pytest.mark.parametrize('g,l', [(0.02, 0.03), (None, 0.02), (0.02, None)])
def test_old_budget_keywords_warn_and_give_the_identical_fit(fed, cls, kw, g, l):
    fd, avg = fed
    new = _no_future_warning(lambda: cls(global_budget=g, local_budget=l, base_model=avg, seed=0, **kw, **QUIET).fit(fd))
    old = _renamed_warns(lambda: cls(xi_g=g, xi_l=l, base_model=avg, seed=0, **kw, **QUIET).fit(fd), 'global_budget', 'local_budget')
    assert (old.report_.global_budget, old.report_.local_budget) == (g, l) == (new.report_.global_budget, new.report_.local_budget)
    np.testing.assert_array_equal(old.report_.test_counts, new.report_.test_counts)
    assert old.report_.accuracy == new.report_.accuracy and old.report_.constraints_met == new.report_.constraints_met
    args = dict(sensitive=fd.a_test, clients=fd.k_test)
    np.testing.assert_array_equal(old.decision_distribution(fd.X_test, **args), new.decision_distribution(fd.X_test, **args))
    np.testing.assert_array_equal(old.predict(fd.X_test, **args), new.predict(fd.X_test, **args))


def test_old_keyword_alone_overrides_the_default_and_survives_clone(fed):
    fd, avg = fed
    est = FedFactPost(xi_g=0.05, base_model=avg, n_rounds=3, seed=0, **QUIET)
    assert est.get_params()['xi_g'] == 0.05 and est.get_params()['global_budget'] == 0.01   # stored unchanged, under its own name
    c = clone(est).set_params(base_model=avg)                  # clone un-fits the base model: give the fitted one back
    assert c.get_params(deep=False) == est.get_params(deep=False)
    r = _renamed_warns(lambda: c.fit(fd), 'global_budget').report_
    assert r.global_budget == 0.05 and r.local_budget == 0.01


def test_bad_old_keyword_is_named_as_passed(fed):
    fd, _ = fed
    with pytest.warns(FutureWarning, match='use global_budget'), pytest.raises(ValueError, match=r'xi_g must be in \[0, inf\]'):
        FedFactPost(xi_g=-1.0).fit(fd)
    with pytest.warns(FutureWarning, match='use local_budget'), pytest.raises(ValueError, match=r'xi_l must be in \[0, inf\]'):
        explore_fedfact(xi_l=-1.0)


def test_fair_optimum_old_keywords():
    rng = np.random.default_rng(0)
    eta, a, k = rng.uniform(size=60).round(1), rng.integers(0, 2, 60), rng.integers(0, 3, 60)
    new = _no_future_warning(lambda: fair_optimum(eta, a, k, global_budget=0.02, local_budget=0.05))
    old = _renamed_warns(lambda: fair_optimum(eta, a, k, xi_g=0.02, xi_l=0.05), 'global_budget', 'local_budget')
    np.testing.assert_array_equal(old.decision, new.decision)
    assert (old.accuracy, old.global_budget, old.local_budget) == (new.accuracy, 0.02, 0.05)


def test_protocols_old_keywords_and_cost_matrices(fed):
    fd, avg = fed
    rng = np.random.default_rng(1)
    post_new = _no_future_warning(lambda: FedFactPostProtocol(avg.protocol_.model, fd.counts, 'dp', global_budget=0.02, local_budget=0.03))
    post_old = _renamed_warns(lambda: FedFactPostProtocol(avg.protocol_.model, fd.counts, 'dp', xi_g=0.02, xi_l=0.03), 'global_budget', 'local_budget')
    in_new = _no_future_warning(lambda: FedFactInProtocol(fd.X.shape[1], 2, fd.counts, 'dp', 0.02, 0.03))
    in_old = _renamed_warns(lambda: FedFactInProtocol(fd.X.shape[1], 2, fd.counts, 'dp', xi_g=0.02, xi_l=0.03), 'global_budget', 'local_budget')
    for new, old, alias in ((post_new, post_old, 'M_k'), (in_new, in_old, 'Mbar_k')):
        assert (old.global_budget, old.local_budget) == (new.global_budget, new.local_budget) == (0.02, 0.03)
        lam, mu = rng.uniform(0, .5, (2, new.Ug)), rng.uniform(0, .5, (2, new.Ul))
        M = new.cost_matrices(0, lam, mu)
        # independent: I - (sum of the duals' constraint matrices) / p(a, k), as in the paper's M_k
        B = np.einsum('u,uaij->aij', lam[0] - lam[1], new.Dg[:, 0]) + np.einsum('u,uaij->aij', mu[0] - mu[1], new.Dl[0])
        if alias == 'M_k': np.testing.assert_allclose(M, np.eye(new.m) - B / new.p_ak[0][:, None, None])
        else: assert (M >= new.kappa_eps - 1e-12).all()     # bar M_k: shifted to positive costs
        np.testing.assert_array_equal(_renamed_warns(lambda: getattr(old, alias)(0, lam, mu), 'cost_matrices'), M)


# ---------------------------------------------------------------- one seed: `init_seed` is the old name of `seed`
def test_init_seed_is_renamed_seed(fed):
    "FedAvg's initial weights come from `seed` (today's default runs unchanged: both defaulted to 0); `init_seed` still works for one "
    "release, with a FutureWarning naming seed, and gives what seed gives."
    fd, _ = fed
    new = _no_future_warning(lambda: FedAvg(n_rounds=1, local_steps=3, seed=4, **QUIET).fit(fd))
    old = _renamed_warns(lambda: FedAvg(n_rounds=1, local_steps=3, init_seed=4, **QUIET).fit(fd), 'seed')
    for k, v in new.weights_.items(): np.testing.assert_array_equal(old.weights_[k], v)
    assert 'init_seed' not in FedAvg().get_params() or FedAvg().get_params()['init_seed'] == 'deprecated'
    other = _no_future_warning(lambda: FedAvg(n_rounds=1, local_steps=3, seed=5, **QUIET).fit(fd))
    assert not np.array_equal(other.weights_['w.weight'], new.weights_['w.weight'])      # the seed does reach the initial weights
    with pytest.warns(FutureWarning, match='use seed'), pytest.raises(ValueError, match=r'init_seed must be in \[0, 4294967295\]'):
        FedAvg(init_seed=-1).fit(fd)


def test_protocols_take_seed_for_their_initial_weights(fed):
    fd, _ = fed
    from trustml_nb.fedfact_protocols import FedAvgProtocol, get_weights
    a = _no_future_warning(lambda: FedAvgProtocol(fd.X.shape[1], 2, seed=7))
    b = _renamed_warns(lambda: FedAvgProtocol(fd.X.shape[1], 2, init_seed=7), 'seed')
    for k, v in get_weights(a.model()).items(): np.testing.assert_array_equal(get_weights(b.model())[k], v)
    i_new = _no_future_warning(lambda: FedFactInProtocol(fd.X.shape[1], 2, fd.counts, 'dp', seed=3))
    i_old = _renamed_warns(lambda: FedFactInProtocol(fd.X.shape[1], 2, fd.counts, 'dp', init_seed=3), 'seed')
    assert i_new.seed == i_old.seed == 3
    for k, v in get_weights(i_new.model()).items(): np.testing.assert_array_equal(get_weights(i_old.model())[k], v)
