"""Start-up and shutdown shared by the stdio and HTTP transports of ``m1nd serve`` (learning.md §4).

The first SIGTERM/SIGINT/SIGHUP stops reading and lets the call in progress finish (the transports wait up to
:data:`SHUTDOWN_GRACE_S`); :func:`finish` then flushes learned weights and closes the databases, bounded so a
stuck tool cannot hang the exit, and the process exits 0 (130 on SIGINT). A second signal exits at once.

The exit itself is :func:`m1nd.process_exit.exit_process`: once everything is flushed and closed, the process ends
without interpreter finalisation, because finalisation is not safe while daemon threads are inside native code.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from typing import Any

from m1nd.errors import M1ndError

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 5.0


# -- shutdown -------------------------------------------------------------------------------------------------------
class Shutdown:
    """Signal handling shared by both transports (learning.md §4)."""

    SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal_name: str | None = None
        self.reason: str | None = None
        self._count = 0

    def install(self) -> None:
        for name in self.SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self._count += 1
        name = signal.Signals(signum).name
        if self._count > 1:
            try:
                os.write(2, f"m1nd: {name} again; exiting without flushing\n".encode())
            finally:
                os._exit(128 + signum)
        self.signal_name = name
        self.trigger(name)

    def trigger(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.event.set()

    def wait(self) -> None:
        # Short waits keep the main thread responsive to signal handlers on every platform.
        while not self.event.wait(0.25):
            pass

    @property
    def exit_code(self) -> int:
        return 130 if self.signal_name == "SIGINT" else 0


def finish(workspace: Any, shutdown: Shutdown, timeout: float = 15.0) -> int:
    """Flush learned weights and close the databases (bounded: a stuck tool holding the graph lock cannot hang the
    exit). Prints the shutdown line for signals; returns the exit code."""
    flushed: list[int] = []

    workspaces = workspace if isinstance(workspace, list) else [workspace]

    def work() -> None:
        for ws in workspaces:
            try:
                if "graph" in ws.__dict__:
                    flushed.append(int(ws.graph.flush() or 0))
            except Exception:
                log.exception("flushing learned weights failed")
            try:
                ws.close()
            except Exception:
                log.exception("closing the workspace failed")

    t = threading.Thread(target=work, name="m1nd-flush", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        log.error("flush did not finish within %.0f s; exiting anyway", timeout)
    n = sum(flushed)
    if shutdown.signal_name:
        sys.stderr.write(f"m1nd: shutting down ({shutdown.signal_name}); flushed {n} learned weights\n")
    else:
        log.info("m1nd: stopped (%s); flushed %d learned weights", shutdown.reason, n)
    sys.stderr.flush()
    return shutdown.exit_code


def start_workspace(settings: Any, transport: str) -> Any:
    from m1nd.workspace import Workspace

    ws = Workspace(settings, transport=transport)
    ws.on_server_start()
    return ws


def start_failed(e: Exception) -> int:
    if isinstance(e, M1ndError):
        sys.stderr.write(f"m1nd: cannot start the MCP server: {e.message} Recover: {e.recover}\n")
    else:
        log.error("start-up failed", exc_info=e)
        sys.stderr.write(f"m1nd: cannot start the MCP server: {type(e).__name__}: {e}\n")
    return 1
