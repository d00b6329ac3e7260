"""A fix for the idle-kernel stall of headless notebook runs (issue 16): a kernel's reply that nbclient never sees.

The symptom: `make tour`, the site build (myst-nb), nbgrader's autograde and Voila each stopped now and then for the
whole cell timeout, with the kernel idle and the client idle. The kernel's debug log (`--debug`) shows that it sent
the `execute_reply` at once; the client found it only when its poll timed out (then `poll(0)` sees the message, so the
cell "succeeds" late, or never with no timeout).

The cause: jupyter_client's `Session.send` sends on an asyncio socket through a blocking shadow of it
(`zmq.Socket.shadow(socket.underlying)`), which bypasses pyzmq's asyncio bookkeeping. A ZeroMQ socket signals
"something changed" through an edge-triggered file descriptor, and a send processes the socket's pending commands,
which clears that signal. So if a reply arrives while a poll waits on the shell socket and, before the event loop looks,
the client sends on the same socket, the poll is never woken. nbclient does exactly that: when a cell writes into an
ipywidgets `Output` widget, nbclient syncs the widget's state back to the kernel with a `comm_msg` on the shell
channel while it waits for that cell's reply. Headless runs of lesson 90 hit it in 8 of 40 runs (each stall costs a
full cell timeout); with the fix, 0 of 40 (benchmarks/results/kernel_wakeup.md, benchmarks/bench_kernel_wakeup.py).

The fix: after each send on an asyncio channel, ask pyzmq to re-check the socket's events (what pyzmq's own asyncio
`send` does), so a pending poll wakes for a message that is already there. `install()` applies it to
`jupyter_client.channels.AsyncZMQSocketChannel.send`; every headless runner here calls it first (tools/run_tour.py,
tools/nbgrader_course.py, tools/serve_apps.py, docs/conf.py, benchmarks/bench_lesson_times.py).
"""
from jupyter_client.channels import AsyncZMQSocketChannel

_plain_send = AsyncZMQSocketChannel.send


def send_and_recheck(self, msg):
    "Send `msg` on the channel, then let pyzmq re-check the socket so a waiting poll sees a reply the send hid."
    _plain_send(self, msg)
    recheck = getattr(self.socket, '_schedule_remaining_events', None)  # pyzmq's asyncio socket; absent on plain sockets
    if recheck is not None and not self.socket.closed: recheck()


def install() -> bool:
    "Patch `AsyncZMQSocketChannel.send` (idempotent); True when the fix is in place."
    AsyncZMQSocketChannel.send = send_and_recheck
    return AsyncZMQSocketChannel.send is send_and_recheck


def uninstall():
    "Restore jupyter_client's own `send` (for tests that show the stall)."
    AsyncZMQSocketChannel.send = _plain_send
