"""trustml_nb.oath (issue 18): the paper's bound, the exact escape probability (against brute-force enumeration), detection
over 2,000 audits per cheating strategy (against the exact value), the three named rejections, the integer fairness test
(against exact rationals), an honest run over HTTP with a server that is stopped even on failure, and the widget."""
import copy
import urllib.request
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from trustml_nb.oath import (CATCHING_CHECK, COIN_BYTES, SCALE, STRATEGIES, AuditClaims, AuditFailure, Auditor, CheatingProvider, Client,
                             InferenceOracle, Openings, ProtocolError, Provider, ProviderServer, Receipt, RemoteProvider, ServiceRequest,
                             ServiceResponse, SigningKey, audit, chain_link, chain_start, commit, detection_study, escape_bound,
                             escape_probability, fairness_test, fresh_bytes, oath_explorer, query_bytes, simulate_service, verify_log,
                             verify_signature, worst_case_escape)


def synthetic(n=3000, d=4, seed=0):
    "A small feature table, two groups, and a logistic regression fitted on it (group 1 leans positive)."
    rng = np.random.default_rng(seed)
    s = (rng.uniform(size=n) < 0.4).astype(int)
    X = rng.normal(size=(n, d)); X[:, 0] += 0.6 * s
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.5, n) > 0.3).astype(int)
    model = LogisticRegression().fit(X, y)
    return X, s, model


X, S, MODEL = synthetic()


class Shifted:
    "An unfair alternative: the same model with a lower threshold."
    def __init__(self, model, t=0.3): self.model, self.t = model, t
    def predict(self, X): return (self.model.predict_proba(X)[:, 1] > self.t).astype(int)


class Flipped:
    "An alternative that answers the opposite of the model: every cheated query is wrong."
    def __init__(self, model): self.model = model
    def predict(self, X): return 1 - self.model.predict(X)


def per_query_log(n=120, provider=None, seed=0):
    rng = np.random.default_rng(seed)
    prov = provider if provider is not None else Provider(MODEL)
    aud = Auditor(prov.public_key)
    for i, r in enumerate(rng.choice(len(X), n, replace=False)):
        c = Client(X[r], int(S[r]))
        aud.record(c.receipt(prov.serve(c.request(i)), prov.public_key))
    return prov, aud


# ---------------------------------------------------------------- the paper's bound and the exact escape probability
def test_bound_reproduces_the_paper_to_4_significant_digits():
    assert f"{escape_bound(0.01, 1000):.4g}" == '0.006654'
    assert f"{escape_bound(0.01, 3800):.4g}" == '5.342e-09'


@settings(max_examples=60, deadline=None)
@given(n0=st.integers(1, 7), n1=st.integers(1, 6), data=st.data())
def test_exact_escape_equals_brute_force_enumeration(n0, n1, data):
    b0, b1 = data.draw(st.integers(0, n0)), data.draw(st.integers(0, n1)); nu = data.draw(st.integers(1, 8))
    bad0, bad1 = np.arange(n0) < b0, np.arange(n1) < b1
    k0, k1 = min(nu, n0), min(nu, n1)
    brute = (np.mean([not bad0[list(c)].any() for c in combinations(range(n0), k0)])
             * np.mean([not bad1[list(c)].any() for c in combinations(range(n1), k1)]))
    assert escape_probability((n0, n1), (b0, b1), nu) == pytest.approx(brute, abs=1e-12)


def test_worst_case_escape_is_the_max_over_splits_and_below_the_bound():
    for n, eps, nu, share in [(50, 0.1, 5, 0.5), (40, 0.2, 3, 0.3)]:
        bad = int(np.ceil(eps * n)); n0 = round(share * n); n1 = n - n0
        brute = max(escape_probability((n0, n1), (b0, bad - b0), nu) for b0 in range(max(0, bad - n1), min(bad, n0) + 1))
        assert worst_case_escape(n, eps, nu, share) == pytest.approx(brute, rel=1e-10)
    grid = [(e, v, s) for e in (0.001, 0.01, 0.05, 0.2, 0.5) for v in (1, 10, 100, 1000, 3800) for s in (0.5, 0.1, 0.9)]
    for e, v, s in grid: assert worst_case_escape(10_000, e, v, s) <= escape_bound(e, v) * (1 + 1e-12), (e, v, s)


# ---------------------------------------------------------------- the integer fairness test
@settings(max_examples=300, deadline=None)
@given(n0=st.integers(1, 10**9), n1=st.integers(1, 10**9), f0=st.floats(0, 1), f1=st.floats(0, 1), theta=st.integers(0, SCALE))
def test_fairness_test_equals_exact_rational_comparison(n0, n1, f0, f1, theta):
    c0, c1 = int(f0 * n0), int(f1 * n1)
    assert fairness_test(n0, n1, c0, c1, theta) == (abs(Fraction(c0, n0) - Fraction(c1, n1)) <= Fraction(theta, SCALE))


# ---------------------------------------------------------------- cryptography
def test_ed25519_rfc8032_vector_and_forgery():
    k = SigningKey(bytes.fromhex('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb'))   # RFC 8032 7.1 test 2
    assert k.public.hex() == '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c'
    sig = k.sign(bytes([0x72]))
    assert sig.hex() == ('92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da'
                         '085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00')
    assert verify_signature(k.public, sig, b'\x72') and not verify_signature(k.public, sig, b'\x73')
    assert not verify_signature(SigningKey().public, sig, b'\x72')


def test_commitment_is_the_hash_of_the_concatenation():
    import hashlib
    q, a, r = query_bytes([1.5, -2.0]), fresh_bytes(16), fresh_bytes(COIN_BYTES)
    assert commit(q, a, 1, r) == hashlib.sha256(q + a + b'\x01' + r).digest()
    assert commit(q, a, 0, r) != commit(q, a, 1, r)


def test_messages_round_trip_through_json():
    prov, aud = per_query_log(5)
    c = Client(X[0], int(S[0])); req = c.request(5); resp = prov.serve(req); rec = c.receipt(resp, prov.public_key)
    for m in (req, resp, rec, prov.claims(), prov.open(np.array([1, 3]))):
        back = type(m).from_json(m.to_json())
        for k, v in m.__dict__.items():
            w = back.__dict__[k]
            assert (np.array_equal(v, w) and np.asarray(v).dtype == np.asarray(w).dtype) if isinstance(v, np.ndarray) else v == w, k
    with pytest.raises(ValueError, match='not a Receipt'): Receipt.from_json(req.to_json())


# ---------------------------------------------------------------- honest runs and the named rejections
def test_honest_run_always_passes_and_counts_match_an_independent_recount():
    for seed in range(3):
        prov = Provider(MODEL); aud = Auditor(prov.public_key)
        rows = simulate_service(prov, aud, X, S, 1500, block_size=64, seed=seed, show_progress=False)
        rep = audit(aud, prov, InferenceOracle(MODEL), sample_per_group=10**4, theta=SCALE, seed=seed)   # nu > n: every commitment is opened
        assert rep.certified and not rep.cheating_detected and rep.n_sampled == 1500
        pred, s = MODEL.predict(X[rows]), S[rows]
        assert rep.parity_gap == pytest.approx(abs(pred[s == 0].mean() - pred[s == 1].mean()), abs=1e-12)
        assert list(rep.table['queries']) == [int((s == 0).sum()), int((s == 1).sum())]
    prov, aud = per_query_log(150)
    assert audit(aud, prov, InferenceOracle(MODEL), sample_per_group=200, theta=SCALE).certified


def test_tampered_entry_forged_signature_and_wrong_opening_are_rejected_by_name():
    prov, aud = per_query_log(120)
    oracle = InferenceOracle(MODEL)
    t = copy.deepcopy(aud); t.log['commitments'][17, 3] ^= 0xFF
    with pytest.raises(AuditFailure, match=r"'log' failed: log entry 17 \(query 17\) was altered") as e: audit(t, prov, oracle, sample_per_group=50, theta=SCALE)
    assert e.value.check == 'log' and e.value.query_ids[0] == 17
    f = copy.deepcopy(aud); f.log['provider_signatures'][40] = np.frombuffer(SigningKey().sign(b'x'), np.uint8)
    with pytest.raises(AuditFailure, match="'signature' failed: the provider's signature on the chain link of query 40") as e:
        audit(f, prov, oracle, sample_per_group=50, theta=SCALE)
    assert e.value.check == 'signature'
    a = copy.deepcopy(aud); a.log['alphas'][9, 0, 0] ^= 1       # the chain does not cover alphas: the client's signature does
    with pytest.raises(AuditFailure, match="the client's signature on the receipt"): audit(a, prov, oracle, sample_per_group=50, theta=SCALE)

    class WrongOpening(Provider):
        def _opened(self, st, pos):
            r = st['coins'][pos].copy(); r[0, 0] ^= 1
            return st['outcomes'][pos], r
    p2, a2 = per_query_log(120, provider=WrongOpening(MODEL))
    with pytest.raises(AuditFailure, match="'opening' failed: .*differs from the commitment logged") as e: audit(a2, p2, oracle, sample_per_group=50, theta=SCALE)
    assert e.value.check == 'opening'
    rep = audit(a2, p2, oracle, sample_per_group=50, theta=SCALE, raise_on_failure=False)
    assert rep.cheating_detected and not rep.certified and rep.failed_check == 'opening'
    assert rep.checks.set_index('check').loc['opening', 'status'] == 'FAILED'


def test_receipts_with_a_bad_link_or_signature_are_refused_at_recording():
    prov = Provider(MODEL); aud = Auditor(prov.public_key)
    c = Client(X[0], int(S[0])); rec = c.receipt(prov.serve(c.request(0)), prov.public_key)
    with pytest.raises(ProtocolError, match="does not extend the provider's chain"):
        aud.record(Receipt(**{**rec.__dict__, 'commitment': fresh_bytes(32)}))
    with pytest.raises(ProtocolError, match="client's signature"):
        aud.record(Receipt(**{**rec.__dict__, 'alpha0': fresh_bytes(16)}))
    aud.record(rec); assert len(aud) == 1
    c2 = Client(X[1], int(S[1])); resp = prov.serve(c2.request(1))
    with pytest.raises(ProtocolError, match='does not open'): c2.receipt(ServiceResponse(**{**resp.__dict__, 'outcome': 1 - resp.outcome}), prov.public_key)
    with pytest.raises(ProtocolError, match="provider's signature"): c2.receipt(resp, SigningKey().public)


def test_chain_links_are_the_documented_hash():
    import hashlib
    k = SigningKey(); c = fresh_bytes(32)
    start = chain_start(k.public)
    assert start == hashlib.sha256(b'OATH log v1|' + k.public).digest()
    assert chain_link(start, 7, c) == hashlib.sha256(start + (7).to_bytes(8, 'little') + c).digest()


# ---------------------------------------------------------------- cheating providers: detection against the exact value
def test_detection_over_2000_audits_is_within_3_standard_errors_of_exact():
    det = detection_study(MODEL, X, S, cheat_rate=0.05, sample_per_group=12, n_audits=2000, n_queries=1500, alternative_model=Flipped(MODEL), seed=3,
                          show_progress=False)
    tab = det.table.set_index('strategy')
    assert list(tab.index) == list(STRATEGIES) and (tab['audits'] == 2000).all()
    assert (tab['z_score'].abs() < 3).all(), tab[['empirical_escape', 'exact_escape', 'z_score']]
    assert (tab['exact_escape'] <= tab['bound'] + 1e-12).all()
    assert tab.loc['honest', 'caught'] == 0 and tab.loc['honest', 'exact_escape'] == 1.0
    assert tab.loc['drop', 'escaped'] == 0 and tab.loc['drop', 'exact_escape'] == 0.0
    for strat, check in CATCHING_CHECK.items():
        assert 0.0 < tab.loc[strat, 'exact_escape'] < 0.9 or strat == 'drop', strat        # informative: neither always nor never caught
        assert tab.loc[strat, 'caught_by'] == f"{check} {tab.loc[strat, 'caught']}", strat
    again = detection_study(MODEL, X, S, cheat_rate=0.05, sample_per_group=12, n_audits=50, n_queries=1500, alternative_model=Shifted(MODEL, 0.2), seed=3,
                            strategies=('alter',), show_progress=False)
    once = detection_study(MODEL, X, S, cheat_rate=0.05, sample_per_group=12, n_audits=50, n_queries=1500, alternative_model=Shifted(MODEL, 0.2), seed=3,
                           strategies=('alter',), show_progress=False)
    assert again.table.equals(once.table)                                                  # same seed, same result


def test_detection_standard_error_and_exact_value_match_an_independent_recomputation():
    "Kills a mis-scaled standard error (e.g. x 0.85): recomputed from the table's own counts with scipy's hypergeometric law."
    from scipy.stats import hypergeom
    det = detection_study(MODEL, X, S, strategies=('alter', 'late_commit', 'honest'), cheat_rate=0.05, sample_per_group=12, n_audits=300, n_queries=1500,
                          seed=5, show_progress=False)
    zs = []
    for _, row in det.table.iterrows():
        exact = float(np.prod([hypergeom.pmf(0, row[f'declared_{g}'], row[f'bad_{g}'], min(12, row[f'declared_{g}'])) for g in (0, 1)]))
        se = np.sqrt(exact * (1 - exact) / row['audits'])                    # the binomial standard error of an escape rate over the audits
        emp = row['escaped'] / row['audits']
        z = (emp - exact) / se if se > 0 else (0.0 if emp == exact else np.inf)
        assert row['exact_escape'] == pytest.approx(exact, rel=1e-9, abs=1e-15) and row['empirical_escape'] == pytest.approx(emp, abs=1e-14), row['strategy']
        assert row['standard_error'] == pytest.approx(se, rel=1e-9, abs=1e-15) and row['z_score'] == pytest.approx(z, rel=1e-9, abs=1e-9)
        zs.append(abs(z))
    assert det.table.loc[det.table['strategy'] == 'alter', 'standard_error'].item() > 0 and det.worst_z == pytest.approx(max(zs), rel=1e-9)


def test_cheating_provider_truth_matches_its_behaviour():
    prov = CheatingProvider(MODEL, 'unfair_model', 0.3, alternative_model=Shifted(MODEL, 0.2), seed=0)
    aud = Auditor(prov.public_key); rows = simulate_service(prov, aud, X, S, 800, seed=0, show_progress=False)
    served = prov.state['outcomes']
    assert np.array_equal(prov.cheated_, served != MODEL.predict(X[rows]))
    drop = CheatingProvider(MODEL, 'drop', 0.1, seed=0); simulate_service(drop, Auditor(drop.public_key), X, S, 500, seed=0, show_progress=False)
    assert len(drop.claims().query_ids) == 500 - drop.cheated_.sum()


# ---------------------------------------------------------------- HTTP
def test_http_provider_serves_clients_and_is_audited():
    prov = Provider(MODEL)
    with ProviderServer(prov, timeout=5) as server:
        remote = server.remote(timeout=10)                 # carries the server's bearer token
        aud = Auditor(remote.public_key)
        for i in range(40):
            c = Client(X[i], int(S[i]))
            aud.record(c.receipt(remote.serve(c.request(i)), remote.public_key))
        rep = audit(aud, remote, InferenceOracle(MODEL), sample_per_group=100, theta=SCALE)
        bad = ServiceRequest(**{**Client(X[50], 0).request(40).__dict__, 'group': 1})   # signature no longer matches
        with pytest.raises(ProtocolError, match="client's signature"): remote.serve(bad)
    assert rep.certified and rep.n_sampled == 40 and not server.running


def test_http_server_is_stopped_even_when_the_block_fails():
    server = ProviderServer(Provider(MODEL), timeout=5)
    with pytest.raises(RuntimeError, match='boom'):
        with server:
            url = server.url
            assert server.running
            with urllib.request.urlopen(url + '/public_key', timeout=5) as r: assert r.status == 200
            raise RuntimeError('boom')
    assert not server.running
    with pytest.raises(ConnectionError, match='did not answer'): RemoteProvider(url, timeout=2).claims()


# ---------------------------------------------------------------- widget
def test_explorer_responds_to_its_controls():
    ex = oath_explorer(MODEL, X, S, alternative_model=Shifted(MODEL, 0.2), n_audits=60, n_queries=600)
    assert ex.report.setting.startswith('eps=0.020') and ex.report.table.iloc[0]['strategy'] == 'late_commit'
    ex.controls['strategy'].value = 'alter'; first = ex.report.table.iloc[0]
    ex.controls['cheat_rate'].value = 0.1
    second = ex.report.table.iloc[0]
    assert first['strategy'] == second['strategy'] == 'alter' and second['bad_fraction'] > first['bad_fraction']
    assert ex.report.setting.startswith('eps=0.100')


# ---------------------------------------------------------------- renamed keywords (issue 34)
def test_paper_symbols_keep_working_for_one_release():
    "nu is `sample_per_group`, eps `cheat_rate` (a provider's rate) or `bad_fraction` (the log's share of wrong entries); the old keywords warn."
    from trustml_nb.oath import challenge_sample, worst_case_escape
    g = np.array([0, 1] * 20)
    cases = [(escape_bound, (), dict(eps=0.1, nu=20), dict(bad_fraction=0.1, sample_per_group=20)),
             (worst_case_escape, (100,), dict(eps=0.1, nu=5), dict(bad_fraction=0.1, sample_per_group=5)),
             (escape_probability, ((10, 10), (1, 0)), dict(nu=5), dict(sample_per_group=5)),
             (challenge_sample, (g,), dict(nu=3, seed=1), dict(sample_per_group=3, seed=1))]
    for fn, args, old, new in cases:
        with pytest.warns(FutureWarning, match="is renamed"): before = fn(*args, **old)
        assert np.array_equal(before, fn(*args, **new)), fn.__name__
    with pytest.warns(FutureWarning, match="'eps' is renamed 'cheat_rate'"): assert CheatingProvider(MODEL, 'alter', eps=0.1).cheat_rate == 0.1
    det = detection_study(MODEL, X, S, strategies=('honest',), sample_per_group=7, n_audits=5, n_queries=100, show_progress=False)
    with pytest.warns(FutureWarning, match="DetectionReport.nu is renamed 'sample_per_group'"): assert det.nu == det.sample_per_group == 7
