"""Issue 33 for FedFACT and Flower: labelled input matched by name, records that round-trip or refuse, no hidden global
state (os.environ at import, global generators at fit/predict), and a Flower simulation that starts on a busy machine or
falls back with a clear warning.
"""
import json
import os
import random
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from trustml_nb.core import NumericalWarning, TrustMLWarning, quiet
from trustml_nb.fedfact import FedAvg, FedFactIn, FedFactPost, InProcessRunner, make_fed_data, synthetic_conflict

QUIET = dict(show_progress=False)
COLS = ['age', 'hours', 'score', 'tenure']


@pytest.fixture(scope="module")
def named():
    "The synthetic federation with named DataFrame features, its unnamed twin, and fitted FedAvg / FedFACT-Post / FedFACT-In."
    fd = synthetic_conflict(n=600, sizes=(0.6, 0.4), group_share=(0.7, 0.3), bias=(1.0, -1.0), seed=0)
    Xtr, Xte = pd.DataFrame(fd.X, columns=COLS), pd.DataFrame(fd.X_test, columns=COLS)
    fdn = make_fed_data(Xtr, fd.y, fd.a, fd.k, Xte, fd.y_test, fd.a_test, fd.k_test)
    with quiet(NumericalWarning):
        avg = FedAvg(n_rounds=2, local_steps=5, seed=0, **QUIET).fit(fdn)
        post = FedFactPost(n_rounds=3, base_model=avg, seed=0, **QUIET).fit(fdn)
        fin = FedFactIn(n_rounds=2, local_steps=3, n_history=2, base_model=avg, seed=0, **QUIET).fit(fdn)
    return fd, fdn, Xte, avg, post, fin


# ---------------------------------------------------------------- labelled input (item 4)
def test_fedavg_predict_proba_matches_dataframe_columns_by_name(named):
    "Reordered columns give identical probabilities (on main they moved by up to 0.79 here); renamed or missing ones are an error."
    fd, fdn, Xte, avg, _, _ = named
    assert list(avg.feature_names_in_) == COLS
    p = avg.predict_proba(Xte)
    np.testing.assert_array_equal(p, avg.predict_proba(fd.X_test))                  # by position for an array
    for order in (COLS[::-1], [COLS[2], COLS[0], COLS[3], COLS[1]]):
        np.testing.assert_array_equal(avg.predict_proba(Xte[order]), p)
        np.testing.assert_array_equal(avg.predict(Xte[order]), avg.predict(Xte))
    with pytest.raises(ValueError, match=r"has column\(s\) \['skore'\] not seen at fit"):
        avg.predict_proba(Xte.rename(columns={'score': 'skore'}))
    with pytest.raises(ValueError, match=r"is missing column\(s\) \['tenure'\]"):
        avg.predict_proba(Xte.drop(columns='tenure'))


def test_fedfact_estimators_match_columns_by_name(named):
    "FedFactPost and FedFactIn: predict and decision_distribution give the same answer for reordered columns; renamed ones are refused."
    fd, fdn, Xte, _, post, fin = named
    rev = Xte[COLS[::-1]]
    kw = dict(sensitive=fd.a_test, clients=fd.k_test)
    for est in (post, fin):
        assert list(est.feature_names_in_) == COLS
        np.testing.assert_array_equal(est.predict(rev, **kw), est.predict(Xte, **kw))
        np.testing.assert_array_equal(est.decision_distribution(rev, **kw), est.decision_distribution(Xte, **kw))
        np.testing.assert_array_equal(est.decision_distribution(fd.X_test, **kw), est.decision_distribution(Xte, **kw))
        with pytest.raises(ValueError, match='not seen at fit'):
            est.predict(Xte.rename(columns={'age': 'AGE'}), **kw)


def test_unnamed_fit_takes_a_dataframe_by_position():
    "Fitted on arrays (no names), a DataFrame is taken by position with its width checked: nothing to match."
    fd = synthetic_conflict(n=400, sizes=(0.6, 0.4), group_share=(0.7, 0.3), bias=(1.0, -1.0), seed=1)
    avg = FedAvg(n_rounds=1, local_steps=3, **QUIET).fit(fd)
    assert avg.feature_names_in_ is None and not fd.named_features
    np.testing.assert_array_equal(avg.predict_proba(pd.DataFrame(fd.X_test)), avg.predict_proba(fd.X_test))
    with pytest.raises(ValueError, match=r'X must have shape \(any, 4\)'):
        avg.predict_proba(pd.DataFrame(fd.X_test[:, :3]))


def test_make_fed_data_matches_X_test_by_name(named):
    "The federated container: X_test's columns are matched to X's by name; the names are recorded; a mismatch is an error."
    fd, fdn, Xte, _, _, _ = named
    Xtr = pd.DataFrame(fd.X, columns=COLS)
    again = make_fed_data(Xtr, fd.y, fd.a, fd.k, Xte[COLS[::-1]], fd.y_test, fd.a_test, fd.k_test)
    np.testing.assert_array_equal(again.X_test, fd.X_test)
    assert again.feature_names == COLS and again.named_features
    with pytest.raises(ValueError, match=r"X_test is missing column\(s\) \['score'\]"):
        make_fed_data(Xtr, fd.y, fd.a, fd.k, Xte.rename(columns={'score': 's'}), fd.y_test, fd.a_test, fd.k_test)
    with pytest.raises(ValueError, match="feature_names .* differ from X's columns"):
        make_fed_data(Xtr, fd.y, fd.a, fd.k, Xte, fd.y_test, fd.a_test, fd.k_test, feature_names=COLS[::-1])
    # array X with feature_names: a DataFrame X_test is matched to those names
    by_names = make_fed_data(fd.X, fd.y, fd.a, fd.k, Xte[COLS[::-1]], fd.y_test, fd.a_test, fd.k_test, feature_names=COLS)
    np.testing.assert_array_equal(by_names.X_test, fd.X_test)


def test_fitted_base_model_meets_a_reordered_federation_by_name(named):
    "A fitted FedAvg re-used on a federation whose columns come in another order: same fit as on the original order."
    fd, fdn, Xte, avg, post, _ = named
    Xtr = pd.DataFrame(fd.X, columns=COLS)
    rev = make_fed_data(Xtr[COLS[::-1]], fd.y, fd.a, fd.k, Xte[COLS[::-1]], fd.y_test, fd.a_test, fd.k_test)
    with quiet(NumericalWarning):
        post_rev = FedFactPost(n_rounds=3, base_model=avg, seed=0, **QUIET).fit(rev)
    assert post_rev.report_.table.equals(post.report_.table)
    np.testing.assert_array_equal(post_rev.report_.test_counts, post.report_.test_counts)
    renamed = make_fed_data(Xtr.rename(columns={'age': 'AGE'}), fd.y, fd.a, fd.k, Xte.rename(columns={'age': 'AGE'}),
                            fd.y_test, fd.a_test, fd.k_test)
    with pytest.raises(ValueError, match='base_model was fitted on other features'):
        FedFactPost(n_rounds=1, base_model=avg, **QUIET).fit(renamed)


# ---------------------------------------------------------------- records (items 4 and 8)
def test_records_refuse_separator_keys_and_round_trip_the_rest():
    pytest.importorskip('flwr')
    from trustml_nb.fedfact_flower import from_record, to_record
    with pytest.raises(ValueError, match="key 'a/b'"): to_record({'a/b': np.ones(2)})
    with pytest.raises(TypeError, match='d must be a dict.*got list'): to_record([1, 2])
    with pytest.raises(TypeError, match="d\\['x'\\] must be numbers"): to_record({'x': 'text'})
    with pytest.raises(TypeError, match="d\\['p'\\]\\['q'\\] is a dict"): to_record({'p': {'q': {'r': 1.0}}})
    with pytest.raises(TypeError, match="keys must be strings"): to_record({1: 1.0})
    with pytest.raises(ValueError, match="empty dict"): to_record({'p': {}})
    with pytest.raises(TypeError, match='rec must be a Flower ArrayRecord'): from_record({'x': 1.0})
    d = {'lam': np.arange(6.).reshape(2, 3), 'w': 0.25, 'phi': {'w.weight': np.ones((2, 3)), 'b/c': np.arange(3)}}
    r = from_record(to_record(d))
    assert set(r) == {'lam', 'w', 'phi'} and set(r['phi']) == {'w.weight', 'b/c'}
    np.testing.assert_array_equal(r['phi']['b/c'], np.arange(3)); np.testing.assert_array_equal(r['lam'], d['lam'])


# ---------------------------------------------------------------- hidden global state (item 5)
_IMPORT_PROBE = r"""
import json, os, sys
import numpy, pandas, scipy, sklearn, torch, flwr, flwr.app, flwr.clientapp, flwr.serverapp, ray   # third-party imports first: their own effects are not ours
before = dict(os.environ)
import trustml_nb.fedfact, trustml_nb.fedfact_flower
after = dict(os.environ)
print(json.dumps({'added': sorted(set(after) - set(before)), 'removed': sorted(set(before) - set(after)),
                  'changed': sorted(k for k in before if k in after and before[k] != after[k])}))
"""


def test_importing_fedfact_modules_leaves_os_environ_alone():
    "In a fresh process, importing trustml_nb.fedfact and trustml_nb.fedfact_flower adds, removes and changes no environment variable (main: 7 added)."
    pytest.importorskip('flwr')
    out = subprocess.run([sys.executable, '-c', _IMPORT_PROBE], capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if not k.startswith(('RAY_', 'FLWR_'))})
    assert out.returncode == 0, out.stderr[-2000:]
    diff = json.loads(out.stdout.strip().splitlines()[-1])
    assert diff == {'added': [], 'removed': [], 'changed': []}, diff


def _generator_states():
    import torch
    return random.getstate(), np.random.get_state()[1].copy(), torch.random.get_rng_state().clone()


def _same_states(a, b):
    import torch
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and torch.equal(a[2], b[2])


def test_fit_and_predict_leave_the_global_generators_alone(named):
    "No fit, predict, predict_proba or decision_distribution of the FedFACT estimators moves Python's, numpy's or torch's global generators."
    fd, fdn, Xte, avg, post, fin = named
    random.seed(5); np.random.seed(5)
    import torch; torch.manual_seed(5)
    before = _generator_states()
    with quiet(NumericalWarning):
        a2 = FedAvg(n_rounds=1, local_steps=3, seed=1, hidden=4, **QUIET).fit(fdn)
        FedFactPost(n_rounds=2, base_model=a2, seed=1, **QUIET).fit(fdn)
        FedFactIn(n_rounds=1, local_steps=2, base_model=FedAvg(n_rounds=1, local_steps=2, **QUIET), seed=1, **QUIET).fit(fdn)
    a2.predict_proba(Xte); post.predict(Xte, sensitive=fd.a_test, clients=fd.k_test)
    fin.predict(Xte, clients=fd.k_test); fin.decision_distribution(Xte, clients=fd.k_test)
    assert _same_states(before, _generator_states())


# ---------------------------------------------------------------- Flower on a busy machine (item 6)
@pytest.fixture(scope="module")
def small():
    return synthetic_conflict(n=400, sizes=(0.6, 0.4), group_share=(0.7, 0.3), bias=(1.0, -1.0), seed=0)


def test_flower_falls_back_with_a_warning_when_ray_cannot_start(small, monkeypatch):
    "Ray's start-up timeout on every try: a TrustMLWarning says so, the in-process run gives identical results, the report says how it ran; fallback=None raises; os.environ is untouched."
    pytest.importorskip('flwr')
    import ray
    from trustml_nb.fedfact_flower import FlowerRunner
    calls = []
    def fail(**kw):
        calls.append(kw); raise Exception("The current node timed out during startup. This could happen because some of the raylet failed to startup or the GCS has become overloaded.")
    monkeypatch.setattr(ray, 'init', fail)
    env = dict(os.environ)
    kw = dict(n_rounds=1, local_steps=3, seed=2, **QUIET)
    ref = FedAvg(runner=InProcessRunner(), **kw).fit(small)
    with pytest.warns(TrustMLWarning, match=r"could not start Ray in 2 attempt\(s\).*timed out during startup.*identical results"):
        fl = FedAvg(runner=FlowerRunner(start_attempts=2), **kw).fit(small)
    assert len(calls) == 2 and dict(os.environ) == env and not ray.is_initialized()
    assert fl.report_.runner == 'in-process (Flower could not start)'
    assert fl.report_.table.equals(ref.report_.table)
    np.testing.assert_array_equal(fl.predict_proba(small.X_test), ref.predict_proba(small.X_test))
    with pytest.raises(RuntimeError, match=r"could not start Ray in 1 attempt\(s\).*InProcessRunner"):
        FedAvg(runner=FlowerRunner(start_attempts=1, fallback=None), **kw).fit(small)
    with pytest.raises(ValueError, match='fallback must be one of'):
        FedAvg(runner=FlowerRunner(fallback='threads'), **kw).fit(small)
    assert dict(os.environ) == env


_BUSY = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"


@pytest.mark.slow
def test_flower_starts_with_both_cores_busy(small):
    "Two busy loops occupy both cores (bounded, stopped in finally); the Flower simulation still starts and matches the in-process run."
    pytest.importorskip('flwr')
    import ray
    from trustml_nb.fedfact_flower import FlowerRunner
    kw = dict(n_rounds=1, local_steps=3, seed=2, **QUIET)
    ref = FedAvg(runner=InProcessRunner(), **kw).fit(small)
    busy = [subprocess.Popen([sys.executable, '-c', _BUSY.format(seconds=400)]) for _ in range(2)]
    try:
        t0 = time.monotonic()
        fl = FedAvg(runner=FlowerRunner(fallback=None), **kw).fit(small)
        seconds = time.monotonic() - t0
    finally:
        for p in busy: p.kill()
        for p in busy: p.wait()
    print(f"Flower simulation with both cores busy: {seconds:.1f} s")
    assert fl.report_.runner == 'Flower simulation' and not ray.is_initialized()
    assert fl.report_.table.equals(ref.report_.table)
    np.testing.assert_array_equal(fl.predict_proba(small.X_test), ref.predict_proba(small.X_test))
