"""Bad-input sweep of trustml_nb.oath (issue 18): every public entry point with NaN and inf, empty input, length
mismatch, wrong types and dtypes, a single group, out-of-range settings and unknown option strings. Each call ends in a
clear trustml_nb error naming the argument, or in a result checked against something exact."""
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from badinput import expect_error, expect_ok, with_inf, with_nan
from trustml_nb.oath import (ALPHA_BYTES, COIN_BYTES, SCALE, AuditClaims, Auditor, CheatingProvider, Client, InferenceOracle, Provider,
                             ProviderServer, Receipt, RemoteProvider, ServiceRequest, SigningKey, audit, commit, detection_study,
                             escape_bound, escape_probability, explore_detection, fairness_test, fresh_bytes, oath_explorer, query_bytes,
                             query_features, simulate_service, verify_signature, worst_case_escape)

M = 'oath'
rng = np.random.default_rng(0)
N = 300
X = rng.normal(size=(N, 3))
S = (rng.uniform(size=N) < 0.5).astype(int)
MODEL = LogisticRegression().fit(X, (X[:, 0] > 0).astype(int))
Q, A, R = query_bytes([1.0, 2.0]), fresh_bytes(ALPHA_BYTES), fresh_bytes(COIN_BYTES)


def err(fn, *args, arg, **kw): return expect_error(fn, *args, arg=arg, module=M, **kw)
def ok(fn, *args, check, **kw): return expect_ok(fn, *args, check=check, module=M, **kw)


def logged(n=60):
    prov = Provider(MODEL); aud = Auditor(prov.public_key)
    simulate_service(prov, aud, X, S, n, block_size=16, seed=0, show_progress=False)
    return prov, aud


PROV, AUD = logged()
ORACLE = InferenceOracle(MODEL)


def test_commit():
    ok(commit, Q, A, 1, R, check=lambda c: isinstance(c, bytes) and len(c) == 32, case='commit ok')
    err(commit, 'text', A, 1, R, arg='query', case='commit query str')
    err(commit, Q, A[:5], 1, R, arg='alpha', case='commit short alpha')
    err(commit, Q, A, 1, R + b'x', arg='coins', case='commit long coins')
    for o in (2, -1, True, 0.5, '1', None): err(commit, Q, A, o, R, arg='outcome', case=f'commit outcome {o!r}')
    err(fresh_bytes, -1, arg='n', case='fresh_bytes negative'); err(fresh_bytes, 2.5, arg='n', case='fresh_bytes float')


def test_signatures():
    k = SigningKey()
    err(SigningKey, b'short', arg='private_bytes', case='SigningKey short key')
    err(k.sign, 'text', arg='message', case='sign str')
    err(verify_signature, b'x' * 31, b'y' * 64, b'm', arg='public', case='verify short public')
    ok(verify_signature, k.public, b'y' * 10, b'm', check=lambda v: v is False, case='verify short signature is False')


def test_fairness_test():
    ok(fairness_test, 10, 10, 5, 5, 0, check=lambda v: v is True, case='fairness equal rates')
    for args, arg in [((0, 10, 0, 5, 1), 'n0'), ((10, 0, 5, 0, 1), 'n1'), ((10, 10, 11, 5, 1), 'c0'), ((10, 10, 5, -1, 1), 'c1'),
                      ((10, 10, 5, 5, -1), 'theta'), ((10.5, 10, 5, 5, 1), 'n0'), ((10, 10, 5, 5, np.nan), 'theta'),
                      ((10, 10, 5, 5, True), 'theta'), (('10', 10, 5, 5, 1), 'n0')]:
        err(fairness_test, *args, arg=arg, case=f'fairness_test {args}')
    err(fairness_test, 10, 10, 5, 5, 1, scale=0, arg='scale', case='fairness_test scale 0')


def test_escape_probabilities():
    ok(escape_probability, (10, 10), (0, 0), 5, check=lambda p: p == 1.0, case='escape no bad entries')
    err(escape_probability, (10, 10), (0,), 5, arg='bad_counts', case='escape length mismatch')
    err(escape_probability, (10, 10), (11, 0), 5, arg='bad_counts', case='escape bad > n')
    err(escape_probability, (10, np.nan), (1, 0), 5, arg='group_sizes', case='escape NaN size')
    err(escape_probability, (10, 10), (1, 0), 0, arg='sample_per_group', case='escape nu 0')
    err(escape_probability, 'ab', (1, 0), 3, arg='group_sizes', case='escape str sizes')
    err(escape_probability, (), (), 3, arg='group_sizes', case='escape empty')
    for eps, nu, arg in [(1.5, 10, 'bad_fraction'), (np.nan, 10, 'bad_fraction'), (-0.1, 10, 'bad_fraction'), (0.1, 0, 'sample_per_group'), (0.1, 2.5, 'sample_per_group'), ('0.1', 10, 'bad_fraction')]:
        err(escape_bound, eps, nu, arg=arg, case=f'escape_bound {eps!r} {nu!r}')
    err(worst_case_escape, 1, 0.1, 5, arg='n_queries', case='worst_case n 1')
    err(worst_case_escape, 100, 0.1, 5, group0_share=1.0, arg='group0_share', case='worst_case share 1')
    err(worst_case_escape, 100, np.inf, 5, arg='bad_fraction', case='worst_case eps inf')


def test_client_and_messages():
    err(Client, with_nan([1.0, 2.0]), 0, arg='features', case='Client NaN features')
    err(Client, with_inf([1.0, 2.0]), 0, arg='features', case='Client inf features')
    err(Client, [], 0, arg='features', case='Client empty features')
    err(Client, ['a', 'b'], 0, arg='features', case='Client str features')
    err(Client, [[1.0, 2.0]], 0, arg='features', case='Client 2-d features')
    err(Client, [1.0, 2.0], 2, arg='group', case='Client group 2')
    err(Client([1.0], 0).request, -1, arg='query_id', case='request negative id')
    err(Receipt.from_json, '{not json', arg='text', case='from_json bad JSON')
    err(Receipt.from_json, '{"type": "Receipt"}', arg='text', case='from_json missing fields')
    err(Receipt.from_json, 42, arg='text', case='from_json int')
    err(ServiceRequest.from_json, PROV.claims().to_json(), arg='text', case='from_json wrong message type')
    err(query_features, np.zeros((2, 7), np.uint8), arg='queries', case='query_features ragged bytes')


def test_provider_and_auditor():
    err(Provider, object(), arg='model', case='Provider model without predict')
    err(Auditor, b'short', arg='provider_key', case='Auditor short key')
    err(InferenceOracle, 'model', arg='model', case='InferenceOracle str')
    err(PROV.open, ['a'], arg='query_ids', case='open str ids')
    err(PROV.open, [10**6], arg='query_ids', case='open unknown id')
    err(PROV.serve, 'request', arg='request', case='serve str')
    err(AUD.record, 'receipt', arg='receipt', case='record str')
    class Bad:      # predicts probabilities, not 0/1
        def predict(self, X): return np.full(len(X), 0.5)
    p = Provider(Bad())
    err(simulate_service, p, Auditor(p.public_key), X, S, 10, arg='model.predict', case='model returning 0.5')


@pytest.mark.parametrize('kw, arg', [(dict(strategy='bribe'), 'strategy'), (dict(cheat_rate=1.5), 'cheat_rate'), (dict(cheat_rate=np.nan), 'cheat_rate'),
                                     (dict(strategy='unfair_model'), 'alternative_model'), (dict(strategy='alter', alternative_model=MODEL), 'alternative_model'),
                                     (dict(strategy='alter', seed=-1), 'seed'), (dict(strategy='alter', cheat_rate='0.1'), 'cheat_rate')])
def test_cheating_provider_settings(kw, arg):
    err(CheatingProvider, MODEL, **kw, arg=arg, case=f'CheatingProvider {kw}')


def test_simulate_service():
    def fresh():
        p = Provider(MODEL); return p, Auditor(p.public_key)
    err(simulate_service, *fresh(), with_nan(X), S, 10, arg='features', case='simulate NaN features')
    err(simulate_service, *fresh(), with_inf(X), S, 10, arg='features', case='simulate inf features')
    err(simulate_service, *fresh(), X[:0], S[:0], 10, arg='features', case='simulate empty')
    err(simulate_service, *fresh(), X.astype(str), S, 10, arg='features', case='simulate str features')
    err(simulate_service, *fresh(), X, S[:-1], 10, arg='sensitive', case='simulate length mismatch')
    err(simulate_service, *fresh(), X, np.zeros(N, int), 10, arg='sensitive', case='simulate single group')
    err(simulate_service, *fresh(), X, np.arange(N) % 3, 10, arg='sensitive', case='simulate three groups')
    err(simulate_service, *fresh(), X, S, 0, arg='n_queries', case='simulate n_queries 0')
    err(simulate_service, *fresh(), X, S, 10, block_size=0, arg='block_size', case='simulate block_size 0')
    err(simulate_service, *fresh(), X, S, 10, show_progress='yes', arg='show_progress', case='simulate show_progress str')
    p = Provider(MODEL)
    err(simulate_service, p, Auditor(SigningKey().public), X, S, 10, arg='auditor', case='simulate auditor with another key')
    err(simulate_service, 'p', Auditor(p.public_key), X, S, 10, arg='provider', case='simulate provider str')
    p, a = fresh()
    ok(simulate_service, p, a, pd.DataFrame(X), pd.Series(np.where(S == 1, 'm', 'f')), 20, show_progress=False,
       check=lambda rows: len(rows) == 20 and len(a) == 20, case='simulate DataFrame and text labels')


def test_audit_settings():
    for kw, arg in [(dict(sample_per_group=0), 'sample_per_group'), (dict(sample_per_group=2.5), 'sample_per_group'), (dict(theta=-1), 'theta'), (dict(theta=0.2), 'theta'), (dict(scale=0), 'scale'),
                    (dict(raise_on_failure='yes'), 'raise_on_failure'), (dict(check_log=1), 'check_log'), (dict(seed=-3), 'seed')]:
        err(audit, AUD, PROV, ORACLE, **kw, arg=arg, case=f'audit {kw}')
    err(audit, 'auditor', PROV, ORACLE, arg='auditor', case='audit auditor str')
    err(audit, AUD, 'provider', ORACLE, arg='provider', case='audit provider str')
    err(audit, AUD, PROV, MODEL, arg='oracle', case='audit model as oracle')
    err(audit, Auditor(PROV.public_key), PROV, ORACLE, arg='auditor', case='audit empty log')
    ok(audit, AUD, PROV, ORACLE, sample_per_group=1000, theta=SCALE, check=lambda r: r.certified and r.n_sampled == 60, case='audit nu above the log size')


def test_detection_and_widget_settings():
    for kw, arg in [(dict(strategies=()), 'strategies'), (dict(strategies=('bribe',)), 'strategies'), (dict(cheat_rate=np.nan), 'cheat_rate'),
                    (dict(n_audits=0), 'n_audits'), (dict(sample_per_group=-1), 'sample_per_group'), (dict(n_queries=1), 'n_queries'), (dict(seed=1.5), 'seed'),
                    (dict(strategies=('unfair_model',)), 'alternative_model')]:
        err(detection_study, MODEL, X, S, **kw, arg=arg, case=f'detection_study {kw}')
    err(explore_detection, MODEL, X, S, strategy='bribe', arg='strategies', case='explore unknown strategy')
    err(oath_explorer, 'model', X, S, arg='model', case='oath_explorer str model')
    err(oath_explorer, MODEL, X, S, n_audits=0, arg='n_audits', case='oath_explorer n_audits 0')


def test_http_settings():
    p = Provider(MODEL)
    err(ProviderServer, p, port=-1, arg='port', case='server port -1')
    err(ProviderServer, p, port=70000, arg='port', case='server port 70000')
    err(ProviderServer, p, timeout=0, arg='timeout', case='server timeout 0')
    err(ProviderServer, 'p', arg='provider', case='server provider str')
    err(RemoteProvider, 'ftp://127.0.0.1:1', arg='url', case='remote ftp url')
    err(RemoteProvider, 'http://127.0.0.1:1', timeout=-1, arg='timeout', case='remote negative timeout')
    with ProviderServer(p, timeout=5) as server:
        remote = RemoteProvider(server.url, timeout=5)
        err(remote.open, ['x'], arg='query_ids', case='remote open str ids')
        err(remote.serve, 'req', arg='request', case='remote serve str')
