"""The server's handle on the bulk-embedding child (``python -m m1nd.embed_worker``, issue 13): start it, follow
its progress lines, stop it. Why a child and what it says on its stdout: :mod:`m1nd.embed_worker`, the child's
program, which builds a Workspace of its own; this module never imports it (the code-graph services start the child,
the child stands on them)."""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

STOP_WAIT_S = 0.5  # SIGTERM ends the child at once; SIGKILL after this as a backstop


class Worker:
    """The server's handle on one embedding child: start, follow its progress, stop it."""

    def __init__(self, settings: Any, on_progress: Callable[[dict[str, Any]], None],
                 on_exit: Callable[[int | None], None]) -> None:
        self.settings = settings
        self._on_progress = on_progress
        self._on_exit = on_exit
        self.proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        s = self.settings
        cmd = [sys.executable, "-m", "m1nd.embed_worker", "--home", str(s.home), "--workspace-key",
               str(s.workspace_key), "--busy-timeout-ms", str(s.busy_timeout_ms)]
        # start_new_session: a Ctrl-C in the server's terminal reaches the server only; the server stops the child.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._read, args=(self.proc,), name="m1nd-embed-worker",
                                        daemon=True)
        self._reader.start()

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if isinstance(msg, dict):
                try:
                    self._on_progress(msg)
                except Exception:  # noqa: BLE001 — a progress callback must not kill the reader
                    log.exception("embedding progress handler failed")
        rc = proc.wait()
        self._on_exit(rc)

    def wait(self, timeout: float | None = None) -> bool:
        """Until the child has exited and its last message was handled; False on timeout."""
        r = self._reader
        if r is None:
            return True
        r.join(timeout)
        return not r.is_alive()

    def stop(self) -> None:
        """End the child now (committed vectors stay; the rest is embedded next time)."""
        p = self.proc
        if p is None or p.poll() is not None:
            return
        with contextlib.suppress(OSError):
            p.terminate()
        try:
            p.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                p.kill()
            p.wait()
        with contextlib.suppress(OSError):
            if p.stdin is not None:
                p.stdin.close()
