"""trustml_nb.oath, issue 33 item 2: the HTTP provider against an attacker, as real HTTP on 127.0.0.1 (bounded loops, short timeouts).

Each test is one finding of the issue: no endpoint that returns client data answers without the server's bearer token; a
client that sends its body one byte at a time cannot delay another client's request by 1 s; clients cannot choose (or exhaust)
the log's query ids; malformed bodies, ids (1e30, 2**70, 1.7, true, -1) and Content-Length headers get a 4xx JSON error, never
a 500 or exception text; an error never describes the model."""
import http.client
import json
import socket
import threading
import time

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from trustml_nb.oath import (SCALE, Auditor, Client, InferenceOracle, Provider, ProviderServer, RemoteProvider, ServiceRequest, audit)

rng = np.random.default_rng(0)
X = rng.normal(size=(200, 4)); S = (rng.uniform(size=200) < 0.5).astype(int)
MODEL = LogisticRegression().fit(X, (X[:, 0] + X[:, 1] > 0).astype(int))
LEAKS = ('Traceback', 'Error:', 'LogisticRegression', 'expecting', 'X has', 'sklearn', 'numpy', 'int64', 'Python')


def token(server): return getattr(server, 'token', None)        # None on a provider without tokens (the code before issue 33)


def remote(server, timeout=5.0):
    return server.remote(timeout) if hasattr(server, 'remote') else RemoteProvider(server.url, timeout=timeout)


def call(server, method, path, body=None, auth=True, headers=(), timeout=5.0):
    "One HTTP request; returns (status, parsed JSON body or None, raw text, content type, seconds)."
    conn = http.client.HTTPConnection('127.0.0.1', int(server.url.rsplit(':', 1)[1]), timeout=timeout)
    h = dict(headers)
    if auth is True and token(server): h['Authorization'] = f'Bearer {token(server)}'
    elif isinstance(auth, str): h['Authorization'] = auth
    t0 = time.perf_counter()
    try:
        conn.request(method, path, body=None if body is None else (body if isinstance(body, bytes) else body.encode()), headers=h)
        r = conn.getresponse(); raw = r.read().decode('utf-8', 'replace')
    finally: conn.close()
    try: parsed = json.loads(raw)
    except ValueError: parsed = None
    return r.status, parsed, raw, r.getheader('Content-Type'), time.perf_counter() - t0


def assert_clean_4xx(status, parsed, raw, ctype, codes=None):
    assert 400 <= status < 500, (status, raw[:200])
    if codes: assert status in codes, (status, raw[:200])
    assert ctype == 'application/json' and isinstance(parsed, dict) and isinstance(parsed.get('error'), str), raw[:200]
    assert not any(w in raw for w in LEAKS), raw[:300]


def served(server, n=20):
    "n honest clients through the server; returns the auditor."
    rp = remote(server); aud = Auditor(rp.public_key)
    for i in range(n):
        c = Client(X[i], int(S[i])); aud.record(c.receipt(rp.serve(c.request(i)), rp.public_key))
    return aud


def test_client_data_needs_the_token():
    with ProviderServer(Provider(MODEL), timeout=5) as server:
        served(server)
        req = Client(X[30], int(S[30])).request(0).to_json()
        for method, path, body in [('GET', '/claims', None), ('POST', '/open', '{"query_ids": [0, 1]}'), ('POST', '/serve', req)]:
            for auth in (None, 'Bearer wrong-token', 'Basic abc', 'Bearer '):
                st = call(server, method, path, body, auth=auth)
                assert_clean_4xx(*st[:4], codes=(401, 403))
                assert 'outcomes' not in st[2] and 'queries' not in st[2]
            assert call(server, method, path, body)[0] == 200                 # with the server's token
        assert call(server, 'GET', '/public_key', auth=None)[0] == 200         # public: the key anyone verifies signatures with
        assert len(token(server)) >= 40 and token(server) not in repr(server) and token(server) not in repr(server.remote())


def test_a_slow_body_does_not_delay_another_client():
    with ProviderServer(Provider(MODEL), timeout=3) as server:
        served(server, 5)
        port, stop, slow_reply = int(server.url.rsplit(':', 1)[1]), threading.Event(), {}

        def slow_client():           # declares 100 bytes, sends one every 0.25 s (at most 24 of them), never finishes
            s = socket.create_connection(('127.0.0.1', port), timeout=8)
            try:
                s.sendall((f"POST /serve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token(server)}\r\nContent-Length: 100\r\n\r\n").encode())
                t0 = time.perf_counter()
                for _ in range(24):
                    if stop.is_set(): break
                    try: s.sendall(b'{')
                    except OSError: break
                    time.sleep(0.25)
                    s.settimeout(0.01)
                    try:
                        got = s.recv(4096)
                        if got: slow_reply['raw'], slow_reply['after'] = got.decode('utf-8', 'replace'), time.perf_counter() - t0; break
                    except (socket.timeout, BlockingIOError): pass
                    except OSError: break
            finally: s.close()

        th = threading.Thread(target=slow_client, daemon=True); th.start()
        time.sleep(0.6)                                                  # the slow client is inside its body now
        lat = []
        for i in range(3):
            for method, path, body in [('GET', '/public_key', None), ('GET', '/claims', None),
                                       ('POST', '/serve', Client(X[40 + i], int(S[40 + i])).request(0).to_json())]:
                st = call(server, method, path, body, timeout=5); lat.append(st[4])
                assert st[0] == 200, st[2][:200]
        th.join(10)                                                      # the slow client runs on until the server cuts it off
        print(f"other clients' latency while a client sends its body one byte at a time: max {max(lat) * 1e3:.0f} ms over {len(lat)} requests")
        assert max(lat) < 1.0, lat
        assert slow_reply.get('raw', '').startswith('HTTP/1.0 408') and slow_reply['after'] < 5, slow_reply   # cut off at the 3 s timeout


def test_clients_cannot_choose_or_exhaust_query_ids():
    with ProviderServer(Provider(MODEL), timeout=5) as server:
        rp = remote(server); aud = Auditor(rp.public_key)
        for i, qid in enumerate([2**63 - 1, 5, 0, 7]):                    # a hostile id first, then ordinary ones
            c = Client(X[i], int(S[i])); resp = rp.serve(c.request(qid))
            assert resp.query_id == i                                     # the provider assigns the next id
            aud.record(c.receipt(resp, rp.public_key))
        rep = audit(aud, rp, InferenceOracle(MODEL), sample_per_group=10, theta=SCALE)
        assert not rep.cheating_detected and rep.n_logged == 4


BAD_OPEN = ['null', '[]', '[1, 2]', '"x"', '{}', '{"query_ids": null}', '{"query_ids": "1"}', '{"query_ids": [1e30]}',
            '{"query_ids": [1180591620717411303424]}', '{"query_ids": [1.7]}', '{"query_ids": [true]}', '{"query_ids": [-1]}',
            '{"query_ids": [999]}', '{"query_ids": [[1]]}', '{"query_ids": [0], "x": 1}', 'not json', '{"query_ids": [NaN]}', '\xff\xfe']


def test_malformed_open_bodies_get_400_json():
    with ProviderServer(Provider(MODEL), timeout=5) as server:
        served(server, 10)
        for body in BAD_OPEN: assert_clean_4xx(*call(server, 'POST', '/open', body)[:4], codes=(400,))
        assert call(server, 'POST', '/open', '{"query_ids": [1, 2]}')[0] == 200


def test_malformed_serve_bodies_get_400_json_and_no_model_details():
    with ProviderServer(Provider(MODEL), timeout=5) as server:
        served(server, 5)
        good = json.loads(Client(X[50], int(S[50])).request(3).to_json())
        bad = ['null', '[]', '{}', 'not json', json.dumps({**good, 'query_id': 2**70}), json.dumps({**good, 'query_id': 1e30}),
               json.dumps({**good, 'query_id': 1.7}), json.dumps({**good, 'query_id': True}), json.dumps({**good, 'query_id': -1}),
               json.dumps({**good, 'group': 7}), json.dumps({**good, 'group': 300}), json.dumps({**good, 'query': {'bytes': 'AAA='}}),
               json.dumps({**good, 'alpha': 'text'}), json.dumps({**good, 'client_key': {'bytes': 'AA=='}}),
               json.dumps({**good, 'query_id': {'array': 'AAAAAAAAAAA=', 'dtype': '<i8', 'shape': [1]}}), json.dumps({**good, 'extra': 1})]
        for body in bad: assert_clean_4xx(*call(server, 'POST', '/serve', body)[:4], codes=(400,))
        three = Client(X[60, :3], int(S[60])).request(0).to_json()           # a signed query with 3 features; the model expects 4
        st = call(server, 'POST', '/serve', three); assert_clean_4xx(*st[:4], codes=(400,))
        forged = ServiceRequest(**{**Client(X[61], 0).request(0).__dict__, 'group': 1}).to_json()
        st = call(server, 'POST', '/serve', forged); assert_clean_4xx(*st[:4], codes=(400,)); assert "signature" in st[1]['error']


def raw_request(server, head:bytes, wait:float=2.0):
    "Send raw bytes; return (reply text, seconds until the reply) or ('', wait) if nothing came in time."
    s = socket.create_connection(('127.0.0.1', int(server.url.rsplit(':', 1)[1])), timeout=wait)
    t0 = time.perf_counter()
    try:
        s.sendall(head); out = b''
        while True:
            try: b = s.recv(65536)
            except (socket.timeout, TimeoutError): break
            if not b: break
            out += b
    finally: s.close()
    return out.decode('utf-8', 'replace'), time.perf_counter() - t0


def test_bad_content_length_is_refused_at_once():
    with ProviderServer(Provider(MODEL), timeout=5, **({'max_body': 4096} if hasattr(ProviderServer(Provider(MODEL)), 'token') else {})) as server:
        served(server, 4)
        auth = f"Authorization: Bearer {token(server)}\r\n".encode() if token(server) else b''
        for length, codes in [(b'Content-Length: -1\r\n', ('400', '411')), (b'Content-Length: abc\r\n', ('400',)),
                              (b'Content-Length: 1e3\r\n', ('400',)), (b'', ('411',)), (b'Content-Length: 99999999\r\n', ('413',)),
                              (b'Content-Length: 5\r\nContent-Length: 6\r\n', ('400',)), (b'Transfer-Encoding: chunked\r\n', ('411', '400'))]:
            reply, secs = raw_request(server, b'POST /open HTTP/1.1\r\nHost: x\r\n' + auth + length + b'\r\n', wait=2.0)
            status = reply[9:12]
            assert status in codes and secs < 1.0, (length, reply[:120], secs)
            body = reply.split('\r\n\r\n', 1)[1]
            assert 'error' in json.loads(body) and not any(w in body for w in LEAKS), body


def test_every_bad_request_is_a_4xx_json_error():
    with ProviderServer(Provider(MODEL), timeout=5) as server:
        assert_clean_4xx(*call(server, 'GET', '/claims')[:4], codes=(409,))                  # nothing logged yet
        assert_clean_4xx(*call(server, 'POST', '/open', '{"query_ids": [0]}')[:4], codes=(409,))
        served(server, 3)
        for method, path in [('GET', '/nope'), ('GET', '/claims?x=1'), ('PUT', '/claims'), ('DELETE', '/open'), ('POST', '/public_key'), ('GET', '/serve')]:
            assert_clean_4xx(*call(server, method, path, '{}' if method in ('POST', 'PUT') else None)[:4], codes=(404, 405))
        for line in (b'GET /claims HTTP/9.9\r\n\r\n', b'GET /claims HTTP/1.1\r\nHost: x\r\n' + b'X: ' + b'a' * 70000 + b'\r\n\r\n',
                     b'GARBAGE\r\n\r\n', b'GET /claims HTTP/1.1 extra\r\n\r\n'):
            reply, _ = raw_request(server, line)                           # refused by http.server itself: still 4xx JSON
            if reply.startswith('HTTP/'):
                assert reply[9:10] == '4' and 'application/json' in reply, reply[:200]; reply = reply.split('\r\n\r\n', 1)[1]
            assert json.loads(reply)['error'] and not any(w in reply for w in LEAKS), reply[:200]   # (an HTTP/0.9-style answer is the body alone)
