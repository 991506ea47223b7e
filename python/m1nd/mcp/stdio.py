"""The stdio transport of ``m1nd serve``: newline-delimited JSON-RPC on stdin/stdout (spec mcp.md §1).

stdout hygiene: :func:`serve_stdio` moves the protocol stream to a private duplicate of fd 1 and points fd 1 at
stderr *before* anything else runs, so neither a stray ``print`` nor native code (cmake rebuild chatter, ONNX
warnings, child processes) can ever corrupt the protocol stream. The tool runs on the thread that read its request
(no thread hop on the hot path); a watchdog answers ``timeout`` past the limit and hands the queue to a fresh
worker (:class:`StdioTransport`).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from m1nd.mcp.jsonrpc import MAX_MESSAGE_BYTES, DecodeError, Message, decode, oversized_error, valid_id
from m1nd.mcp.lifecycle import SHUTDOWN_GRACE_S, Shutdown, finish, start_failed, start_workspace
from m1nd.mcp.server import McpServer, Session, id_key, timeout_result, tool_result_response
from m1nd.tools.profiles import DEFAULT_PROFILE

log = logging.getLogger(__name__)


# -- stdio ----------------------------------------------------------------------------------------------------------
class _Output:
    """The protocol stream: a private duplicate of the original fd 1, written whole lines at a time under a lock."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.broken = False

    def send(self, data: bytes) -> bool:
        with self.lock:
            if self.broken:
                return False
            mv = memoryview(data + b"\n")
            try:
                while mv:
                    n = os.write(self.fd, mv)
                    mv = mv[n:]
            except OSError as e:  # EPIPE: the client went away
                log.info("stdout closed by the client: %s", e)
                self.broken = True
                return False
            return True


def claim_stdout() -> int:
    """Reserve fd 1 for the protocol: returns a private duplicate of it and points fd 1 (and ``sys.stdout``) at
    stderr so nothing else can ever write protocol-breaking bytes."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    proto = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


TOO_LONG = object()


def read_lines(fd: int, limit: int = MAX_MESSAGE_BYTES) -> Any:
    """Yield the lines of ``fd`` (without the newline; ``\\r`` stripped), or :data:`TOO_LONG` for a line over
    ``limit`` bytes (the rest of that line is skipped without buffering it). Raw ``os.read``: no buffered-reader
    lock is held, so a daemon reader never blocks interpreter exit."""
    buf = bytearray()
    skipping = False
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except OSError as e:
            log.info("stdin read failed: %s", e)
            chunk = b""
        if not chunk:
            if skipping:
                yield TOO_LONG
            elif buf.strip():
                yield bytes(buf)
            return
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            end = len(chunk) if nl < 0 else nl
            if not skipping:
                buf += chunk[start:end]
                if len(buf) > limit + 1:
                    skipping = True
                    buf.clear()
            if nl < 0:
                break
            if skipping:
                skipping = False
                yield TOO_LONG
            else:
                line = bytes(buf[:-1] if buf.endswith(b"\r") else buf)
                buf.clear()
                yield TOO_LONG if len(line) > limit else line
            start = nl + 1


@dataclass
class _Running:
    """The request being answered on stdio."""

    msg: Message
    started: float = field(default_factory=time.monotonic)
    abandoned: bool = False

    @property
    def tool(self) -> str | None:
        p = self.msg.params
        if self.msg.method == "tools/call" and isinstance(p, dict) and isinstance(p.get("name"), str):
            return p["name"]
        return None


class StdioTransport:
    """Newline-delimited JSON-RPC on stdin/stdout with no thread hop on the hot path.

    Two roles move between daemon threads: the *reader* (the only thread reading stdin) and the *executor* (the
    only thread answering requests, in order). A thread that reads a request while nothing is executing or queued
    executes it itself and then takes the reader role back, so a sequential client is served by one thread end to
    end. Otherwise the message is queued for the executor. A watchdog thread, polling:

    - starts a new reader when a call has run for :data:`READ_HANDOVER_S` with nobody reading, so a
      ``notifications/cancelled`` sent during a long call is seen (requests that arrive meanwhile are queued);
    - abandons a tool call that runs past the time limit, answering ``timeout``.

    Abandoning a call (timeout or cancellation) hands the executor role to a fresh thread; the old one drops its
    late result and exits.
    """

    READ_HANDOVER_S = 0.05

    def __init__(self, server: McpServer, out: _Output, in_fd: int, shutdown: Shutdown) -> None:
        self.server = server
        self.out = out
        self.shutdown = shutdown
        self.session = Session(send=out.send)
        self.lines = read_lines(in_fd)
        self.pending: deque[Message | bytes] = deque()
        self.stopping = threading.Event()  # set at shutdown: stop reading and stop taking new requests
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.reading = False  # a thread holds the reader role
        self.executing = False  # a thread holds the executor role
        self.current: _Running | None = None
        self.eof = False

    def start(self) -> None:
        threading.Thread(target=self._watch, name="m1nd-watchdog", daemon=True).start()
        with self.lock:
            self.reading = True
            self._spawn(self._read_loop)

    @staticmethod
    def _spawn(target: Callable[[], None]) -> None:
        threading.Thread(target=target, name="m1nd-stdio", daemon=True).start()

    # -- reader role --------------------------------------------------------------------------------------------------
    def _read_loop(self) -> None:
        """Runs holding the reader role."""
        while True:
            line = next(self.lines, None)
            if line is None or self.stopping.is_set():
                with self.lock:
                    self.reading = False
                    self.eof = self.eof or line is None
                    idle = not self.executing and not self.pending
                    self.changed.notify_all()
                if line is None and idle:
                    self.shutdown.trigger("EOF")
                return
            item = self._decode(line)
            if item is None:
                continue
            with self.lock:
                if self.executing or self.pending:
                    self.pending.append(item)
                    continue
                self.executing = True
                self.reading = False
            if not self._execute_loop(item):
                return

    def _decode(self, line: Any) -> Message | bytes | None:
        if line is TOO_LONG:
            return oversized_error()
        if not line.strip():
            return None
        try:
            msg = decode(line)
        except DecodeError as e:
            return e.response
        if msg.kind == "notification" and msg.method == "notifications/cancelled":
            self._cancel(msg.params.get("requestId") if isinstance(msg.params, dict) else None)
            return None
        if msg.kind == "ignored":
            return None
        if msg.kind == "response":  # the client's answer to roots/list: handled here, never queued behind a call
            self.server.handle_response(msg, self.session)
            return None
        return msg

    def _cancel(self, req_id: Any) -> None:
        if not valid_id(req_id):
            return
        with self.lock:
            run = self.current
            if run is not None and run.tool is not None and id_key(run.msg.id) == id_key(req_id):
                log.info("tool call %s (id %r) cancelled by the client", run.tool, req_id)
                self._abandon(run)
                return
        self.session.cancel(req_id)  # still queued: dropped when its turn comes

    # -- executor role ------------------------------------------------------------------------------------------------
    def _execute_loop(self, item: Message | bytes) -> bool:
        """Runs holding the executor role: answer ``item``, then everything queued. Returns True when the thread took
        the reader role back (the caller keeps reading), False when it must end."""
        while True:
            if not self._execute(item):
                return False  # abandoned: another thread holds the executor role now
            with self.lock:
                if self.pending and not self.stopping.is_set():
                    item = self.pending.popleft()
                    continue
                self.executing = False
                self.changed.notify_all()
                if self.eof:
                    eof = True
                elif self.reading or self.stopping.is_set():
                    return False
                else:
                    self.reading = True
                    return True
            if eof:
                self.shutdown.trigger("EOF")
                return False

    def _resume(self) -> None:
        """A fresh thread taking over the executor role (after an abandoned call) with requests queued."""
        with self.lock:
            item = self.pending.popleft() if self.pending else None
            if item is None:
                self.executing = False
                self.changed.notify_all()
                return
        if self._execute_loop(item):
            self._read_loop()

    def _execute(self, item: Message | bytes) -> bool:
        """Answer one message. False when the call was abandoned meanwhile (its result is dropped)."""
        if isinstance(item, bytes):
            reply: bytes | None = item
        elif item.is_request and self.session.take_cancelled(item.id):
            return True
        else:
            run = _Running(item)
            with self.lock:
                self.current = run
            reply = self.server.handle(item, self.session)
            with self.lock:
                if run.abandoned:
                    return False
                self.current = None
            if log.isEnabledFor(logging.DEBUG):
                log.debug("%s %r answered in %.3f ms", item.method, item.id, (time.monotonic() - run.started) * 1e3)
        if reply is not None and not self.out.send(reply):
            self.shutdown.trigger("stdout closed")
        return True

    def _abandon(self, run: _Running) -> None:  # caller holds self.lock
        run.abandoned = True
        self.current = None
        if self.pending and not self.stopping.is_set():
            self._spawn(self._resume)  # the executor role passes on
        else:
            self.executing = False
            if self.eof:
                self.shutdown.trigger("EOF")
            elif not self.reading and not self.stopping.is_set():
                self.reading = True
                self._spawn(self._read_loop)
        self.changed.notify_all()

    # -- watchdog -----------------------------------------------------------------------------------------------------
    def _watch(self) -> None:
        limit = self.server.tool_timeout
        poll = min(self.READ_HANDOVER_S, max(0.005, limit / 4))
        while not self.stopping.wait(poll):
            with self.lock:
                run = self.current
                if run is None:
                    continue
                elapsed = time.monotonic() - run.started
                if run.tool is not None and elapsed >= limit:
                    log.warning("tool %s exceeded %.0f s and was abandoned", run.tool, limit)
                    # Sent under the lock, before the next executor starts: replies stay in request order.
                    self.out.send(tool_result_response(run.msg.id, timeout_result(run.tool, limit)))
                    self._abandon(run)
                elif elapsed >= self.READ_HANDOVER_S and not self.reading and not self.eof:
                    self.reading = True
                    self._spawn(self._read_loop)

    def wait_done(self, timeout: float) -> bool:
        """Wait until no request is being answered (abandoned calls aside)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.executing:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True


def serve_stdio(settings: Any, *, profile: str = DEFAULT_PROFILE, agent: str | None = None) -> int:
    """Run ``m1nd serve`` over stdio until EOF or a signal; returns the exit code."""
    proto_fd = claim_stdout()
    shutdown = Shutdown()
    shutdown.install()
    try:
        ws = start_workspace(settings, "stdio")
    except Exception as e:  # noqa: BLE001 — report on stderr, never a traceback on the protocol stream
        return start_failed(e)
    server = McpServer(ws, inline_tools=True, profile=profile, agent=agent)
    transport = StdioTransport(server, _Output(proto_fd), 0, shutdown)
    if shutdown.event.is_set():  # a signal arrived while the graph was loading
        return finish(ws, shutdown)
    transport.start()
    log.info("serving MCP on stdio (%d tools, profile %s)", len(server.tools), profile)
    shutdown.wait()
    transport.stopping.set()
    # On a signal: let the call in progress finish (≤ 5 s). On EOF / closed stdout the queue is drained already.
    if not transport.wait_done(SHUTDOWN_GRACE_S):
        log.warning("the call in progress did not finish within %.0f s", SHUTDOWN_GRACE_S)
    return finish(server.all_workspaces(), shutdown)
