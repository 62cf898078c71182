"""Executes a notebook with the Deno kernel for `deno task report`, without losing outputs.

An nbconvert preprocessor (used by src/report.ts in place of `nbconvert --execute`):

    PYTHONPATH=src jupyter nbconvert --to notebook \
      --Exporter.preprocessors=_fenced_execute.FencedExecutePreprocessor NOTEBOOK

Why not nbclient: the Deno kernel can publish a cell's last outputs (display_data, execute_result,
stream) on IOPub after the cell's `idle` status. nbclient stops reading a cell's outputs at
`idle` and drops later ones, so an executed notebook now and then missed a table (measured with
Deno 2.9.6: 2 of 60 runs of a cell with two awaited displays lost them, 9 of 60 lost the
execute_result; more often on a cold, busy machine).

Here every code cell is followed by a silent fence cell that broadcasts a marker display and
prints a marker line. The kernel sends displays in order on one path and printed lines in order
on another, so once both markers (and the fence's `idle`) have arrived, everything the cell
produced has arrived too. An output the kernel parents to the fence (it reads the current request
when it sends) belongs to the cell before it. No sleeps, no timing assumptions.
"""

import datetime
import queue
import secrets
import time

from jupyter_client.manager import start_new_kernel
from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import output_from_msg
from traitlets import Integer, Unicode

OUTPUTS = ("stream", "display_data", "execute_result", "error")


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


class CellTimeout(RuntimeError):
    """A cell ran longer than the timeout."""


class FencedExecutePreprocessor(Preprocessor):
    """Runs every code cell in one kernel, each followed by a fence; keeps errors as outputs."""

    kernel_name = Unicode("deno", help="kernel to run").tag(config=True)
    timeout = Integer(180, help="seconds per cell").tag(config=True)
    startup_timeout = Integer(60, help="seconds for the kernel to start").tag(config=True)

    def preprocess(self, nb, resources):
        path = resources.get("metadata", {}).get("path") or None
        km, kc = start_new_kernel(
            kernel_name=self.kernel_name, cwd=path, startup_timeout=self.startup_timeout
        )
        try:
            kc.allow_stdin = False
            info = kc.kernel_info(reply=True, timeout=self.startup_timeout)
            nb.metadata["language_info"] = info["content"]["language_info"]
            self._km, self._kc = km, kc
            self._tag = secrets.token_hex(6)
            self._displays = {}  # display_id → the outputs an update_display_data replaces
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    self._run_cell(cell, index)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
        return nb, resources

    def _run_cell(self, cell, index):
        cell.outputs = []
        cell.execution_count = None
        if not cell.source.strip():
            return
        deadline = time.monotonic() + self.timeout
        # when the cell was sent and answered, as nbclient records them (Jupyter shows them; the
        # report's timing of its notebooks reads them)
        sent = _now()
        cell_id = self._kc.execute(cell.source, stop_on_error=False, allow_stdin=False)
        reply = self._shell_reply(cell_id, deadline, index)
        cell.metadata["execution"] = {"shell.execute_request": sent, "shell.execute_reply": _now()}
        cell.execution_count = reply["content"].get("execution_count")
        marker = "kvlab-fence-%s-%d" % (self._tag, index)
        fence_id = self._kc.execute(
            'await Deno.jupyter.broadcast("display_data", '
            '{ data: { "text/plain": "%s" }, metadata: {}, transient: {} });\n'
            'console.log("%s");' % (marker, marker),
            silent=True,
            store_history=False,
            allow_stdin=False,
        )
        self._shell_reply(fence_id, deadline, index)
        waiting = {"cell idle", "fence idle", "fence display", "fence line"}
        while waiting:
            msg = self._iopub(deadline, index)
            parent = msg["parent_header"].get("msg_id")
            if parent not in (cell_id, fence_id):
                continue
            kind = msg["msg_type"]
            content = msg["content"]
            if kind == "status":
                if content["execution_state"] == "idle":
                    waiting.discard("cell idle" if parent == cell_id else "fence idle")
                continue
            if parent == fence_id and kind == "display_data":
                if content.get("data", {}).get("text/plain") == marker:
                    waiting.discard("fence display")
                    continue
            if parent == fence_id and kind == "stream" and marker in content.get("text", ""):
                waiting.discard("fence line")
                text = content["text"].replace(marker + "\n", "").replace(marker, "")
                if not text:
                    continue
                msg = {**msg, "content": {**content, "text": text}}
            self._add_output(cell, msg)

    def _add_output(self, cell, msg):
        kind = msg["msg_type"]
        content = msg["content"]
        if kind == "clear_output":
            cell.outputs = []
            return
        display_id = (content.get("transient") or {}).get("display_id")
        if kind == "update_display_data":
            for out in self._displays.get(display_id, []):
                out.data = content.get("data", {})
                out.metadata = content.get("metadata", {})
            return
        if kind not in OUTPUTS:
            return
        out = output_from_msg(msg)
        if display_id and kind == "display_data":
            self._displays.setdefault(display_id, []).append(out)
        last = cell.outputs[-1] if cell.outputs else None
        if (
            kind == "stream"
            and last is not None
            and last.output_type == "stream"
            and last.name == out.name
        ):
            last.text += out.text
        else:
            cell.outputs.append(out)

    def _shell_reply(self, msg_id, deadline, index):
        while True:
            try:
                msg = self._kc.get_shell_msg(timeout=self._wait(deadline, index))
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def _iopub(self, deadline, index):
        while True:
            try:
                return self._kc.get_iopub_msg(timeout=self._wait(deadline, index))
            except queue.Empty:
                continue

    def _wait(self, deadline, index):
        if not self._km.is_alive():
            raise RuntimeError("cell %d: the kernel died" % (index + 1))
        left = deadline - time.monotonic()
        if left <= 0:
            raise CellTimeout("cell %d: no result after %d s" % (index + 1, self.timeout))
        return min(left, 1.0)
