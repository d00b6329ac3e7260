"tools/run_tour.py (what `make tour` runs): a cell whose execute_reply is lost after the kernel went idle is finished from IOPub."
import sys
from pathlib import Path
from queue import Empty

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError
from nbclient.util import ensure_async

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tools'))
from run_tour import WatchfulClient, _reply_from_outputs  # noqa: E402


class DropsFirstReply(WatchfulClient):
    "Loses the first execute_reply on the shell channel: the hang seen under load, made deterministic."
    def __init__(self, *a, **k):
        super().__init__(*a, **k); self.dropped = 0

    async def _async_poll_for_reply(self, msg_id, cell, *rest):
        if not getattr(self, '_wrapped', False):
            get = self.kc.shell_channel.get_msg
            async def get_msg(timeout=None):
                msg = await ensure_async(get(timeout=timeout))
                if msg['msg_type'] == 'execute_reply' and not self.dropped:
                    self.dropped += 1; raise Empty
                return msg
            self.kc.shell_channel.get_msg, self._wrapped = get_msg, True
        return await super()._async_poll_for_reply(msg_id, cell, *rest)


def _nb(*sources):
    nb = nbformat.v4.new_notebook(); nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]; return nb


def test_lost_reply_is_finished_from_iopub():
    nb = _nb("x = 41", "print(x + 1)")
    c = DropsFirstReply(nb, timeout=60, kernel_name='python3'); c.reply_grace = 1.0
    c.execute()
    assert c.dropped == 1 and c.lost_replies == [0]
    assert nb.cells[1].outputs[0]['text'] == '42\n'          # the run went on, in the same kernel


def test_lost_reply_of_a_failing_cell_still_raises():
    nb = _nb("1 / 0", "print('not reached')")
    c = DropsFirstReply(nb, timeout=60, kernel_name='python3'); c.reply_grace = 1.0
    with pytest.raises(CellExecutionError, match='ZeroDivisionError'):
        c.execute()
    assert c.lost_replies == [0] and nb.cells[1].outputs == []


def test_reply_from_outputs():
    cell = nbformat.v4.new_code_cell('')
    assert _reply_from_outputs('m', cell)['content'] == {'status': 'ok'}
    cell.outputs = [nbformat.v4.new_output('error', ename='E', evalue='v', traceback=['t'])]
    assert _reply_from_outputs('m', cell)['content'] == {'status': 'error', 'ename': 'E', 'evalue': 'v', 'traceback': ['t']}
