"""tools/kernel_wakeup.py: a reply that arrives while nbclient polls the shell socket, followed by a send on that socket
(nbclient syncing an Output widget), must wake the poll at once. Without the fix jupyter_client misses it until the
poll's timeout: the idle-kernel stall of issue 16, reproduced here deterministically with a real ZeroMQ pair."""
import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tools'))
import kernel_wakeup  # noqa: E402

TIMEOUT = 2.0   # the poll's timeout (the cell timeout in a real run)
SETTLE = 0.2    # the event loop is busy this long while the reply arrives (e.g. handling a burst of IOPub output)


def _kernel_stub(port: list, stop: threading.Event, ready: threading.Event):
    "A ROUTER that answers each execute_request with an execute_reply and ignores comm messages, like a kernel's shell."
    sock = zmq.Context.instance().socket(zmq.ROUTER)
    port.append(sock.bind_to_random_port('tcp://127.0.0.1')); ready.set()
    session = Session(key=b'')
    while not stop.is_set():
        if sock.poll(20):
            idents, frames = session.feed_identities(sock.recv_multipart())
            msg = session.deserialize(frames)
            if msg['header']['msg_type'] == 'execute_request':
                session.send(sock, 'execute_reply', {'status': 'ok'}, parent=msg, ident=idents)
    sock.close(0)


async def _reply_delays(trials: int) -> list:
    "Seconds from the loop's return to the reply being seen, for each trial of: request, poll, reply arrives, send, wait."
    port, stop, ready = [], threading.Event(), threading.Event()
    threading.Thread(target=_kernel_stub, args=(port, stop, ready), daemon=True).start(); ready.wait(5)
    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.DEALER); sock.connect(f'tcp://127.0.0.1:{port[0]}')
    session = Session(key=b'')
    shell = AsyncZMQSocketChannel(sock, session)
    await asyncio.sleep(0.3)   # connected
    delays = []
    try:
        for _ in range(trials):
            shell.send(session.msg('execute_request', {'code': '', 'silent': False}))
            reply = asyncio.ensure_future(shell.get_msg(timeout=TIMEOUT))
            await asyncio.sleep(0)                         # the poll is registered on the shell socket
            time.sleep(SETTLE)                             # the reply arrives while the loop is busy
            shell.send(session.msg('comm_msg', {'comm_id': 'x', 'data': {}}))   # Output widget state sync
            t0 = time.monotonic()
            msg = await reply
            delays.append(time.monotonic() - t0)
            assert msg['msg_type'] == 'execute_reply'
    finally:
        stop.set(); sock.close(0); ctx.term()
    return delays


@pytest.fixture
def plain_send():
    "jupyter_client's own send for the test, whatever another test installed; restored afterwards."
    saved = AsyncZMQSocketChannel.send
    kernel_wakeup.uninstall()
    yield
    AsyncZMQSocketChannel.send = saved


def test_plain_jupyter_client_misses_the_reply_until_the_timeout(plain_send):
    "The bug the fix is for: without it, the waiting poll sleeps through a reply that is already there."
    delays = asyncio.run(_reply_delays(3))
    assert all(d > 0.8 * (TIMEOUT - SETTLE) for d in delays), delays


def test_fix_wakes_the_poll_at_once(plain_send):
    assert kernel_wakeup.install() and kernel_wakeup.install()   # idempotent
    delays = asyncio.run(_reply_delays(10))
    assert max(delays) < 0.25, delays


def test_runners_install_the_fix():
    "Every headless runner of lessons installs it before it starts a kernel client."
    root = Path(__file__).resolve().parents[1]
    for path in ['tools/run_tour.py', 'tools/course.py', 'tools/serve_apps.py', 'docs/conf.py', 'benchmarks/bench_lesson_times.py']:
        assert 'kernel_wakeup.install()' in (root / path).read_text(), path
