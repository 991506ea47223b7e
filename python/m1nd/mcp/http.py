"""Streamable HTTP transport of the MCP server (spec mcp.md §1; standard library only).

One endpoint, ``/mcp`` on a loopback address: ``POST`` carries exactly one JSON-RPC message (≤ 4 MiB, else 413) and
gets ``200 application/json`` with the response, or ``202`` for notifications and client responses; ``GET`` (with
``Accept: text/event-stream`` and the session header) opens the session's one server-to-client SSE stream, which
carries the server's ``roots/list`` requests (issue 15: the workspace from the client; 409 when the session already
has one); ``DELETE`` ends the session (204). ``initialize`` issues ``Mcp-Session-Id`` (32 random
hex digits), which every later message must carry (400 when missing, 404 when unknown or ended).
``MCP-Protocol-Version`` must be a supported version when present (absent means 2025-03-26). A present ``Origin``
other than ``http://localhost[:port]`` / ``http://127.0.0.1[:port]`` / ``http://[::1][:port]`` is refused with 403
(DNS-rebinding guard).

Connections are served by short-lived I/O threads; tool calls run on the server's pool of ``--workers`` threads, all
sharing one :class:`~m1nd.workspace.Workspace` (one graph in memory for every agent).
"""

from __future__ import annotations

import ipaddress
import logging
import queue
import re
import secrets
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from m1nd.errors import M1ndError
from m1nd.mcp.server import (
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    METHOD_NOT_FOUND,
    SHUTDOWN_GRACE_S,
    SUPPORTED_VERSIONS,
    DecodeError,
    McpServer,
    Session,
    Shutdown,
    decode,
    error_response,
    finish,
    result_response,
    start_failed,
    start_workspace,
)

log = logging.getLogger(__name__)

ENDPOINT = "/mcp"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
MAX_SESSIONS = 1000
DRAIN_LIMIT = 64 * 1024 * 1024
SESSION_IDLE_S = 24 * 3600.0
SSE_KEEPALIVE_S = 15.0
_ORIGIN_RE = re.compile(r"^http://(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$", re.IGNORECASE)


class HostRefused(M1ndError):
    code = "invalid_argument"


def check_host(host: str) -> str:
    """Accept loopback addresses only (``localhost`` means 127.0.0.1); raise :class:`HostRefused` otherwise."""
    h = host.strip().strip("[]")
    if h.lower() == "localhost":
        return "127.0.0.1"
    try:
        addr = ipaddress.ip_address(h)
    except ValueError:
        addr = None
    if addr is None or not addr.is_loopback:
        raise HostRefused(f"refusing to serve on --host {host}: the HTTP transport binds loopback only "
                          "(127.0.0.1 or ::1); agents on this machine connect to http://127.0.0.1:<port>/mcp",
                          recover="pass --host 127.0.0.1 or --host ::1")
    return str(addr)


def origin_allowed(origin: str | None) -> bool:
    return origin is None or bool(_ORIGIN_RE.match(origin.strip()))


class EventStream:
    """The queue behind one session's GET stream: ``send`` (the server's way to reach the client) enqueues; the
    request thread holding the GET connection writes the events."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.open = True

    def send(self, data: bytes) -> bool:
        if not self.open:
            return False
        self.queue.put(data)
        return True

    def close(self) -> None:
        self.open = False
        self.queue.put(None)


class SessionTable:
    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def get(self, sid: str) -> Session | None:
        with self._lock:
            return self._sessions.get(sid)

    def add(self, session: Session) -> None:
        with self._lock:
            now = time.time()
            if len(self._sessions) >= MAX_SESSIONS:
                for sid, s in sorted(self._sessions.items(), key=lambda kv: kv[1].last_seen):
                    if len(self._sessions) < MAX_SESSIONS and now - s.last_seen < SESSION_IDLE_S:
                        break
                    del self._sessions[sid]
            assert session.id is not None
            self._sessions[session.id] = session

    def remove(self, sid: str) -> bool:
        with self._lock:
            session = self._sessions.pop(sid, None)
        if session is not None and isinstance(session.stream, EventStream):
            session.stream.close()
        return session is not None

    def __len__(self) -> int:
        return len(self._sessions)

    def close_streams(self) -> None:
        """End every open event stream (shutdown)."""
        with self._lock:
            sessions = list(self._sessions.values())
        for session in sessions:
            if isinstance(session.stream, EventStream):
                session.stream.close()


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    mcp: McpServer
    sessions: SessionTable
    closing: threading.Event


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "m1nd-mcp"
    sys_version = ""
    server: _HttpServer
    timeout = 300  # idle keep-alive connections are dropped after 5 minutes

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    # -- responses ----------------------------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", *, content_type: str | None = None,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self._send(status, body, content_type="application/json", headers=headers)

    def _text(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        self._send(status, (text + "\n").encode(), content_type="text/plain; charset=utf-8", headers=headers)

    def _rpc_error(self, status: int, req_id: Any, code: int, message: str) -> None:
        self._json(status, error_response(req_id, code, message))

    # -- common checks ------------------------------------------------------------------------------------------------
    def _preflight(self) -> bool:
        """Path and Origin checks shared by every method; False when a response was already sent."""
        path = self.path.split("?", 1)[0]
        if path != ENDPOINT:
            self._text(404, f"not found: the MCP endpoint is {ENDPOINT}")
            return False
        if not origin_allowed(self.headers.get("Origin")):
            self._text(403, "forbidden: foreign Origin (only http://localhost and http://127.0.0.1 may call)")
            return False
        return True

    # -- methods ------------------------------------------------------------------------------------------------------
    def do_GET(self) -> None:
        if not self._preflight():
            return
        if "text/event-stream" not in (self.headers.get("Accept") or ""):
            self._text(406, "not acceptable: GET opens a text/event-stream; send Accept: text/event-stream")
            return
        sid = self.headers.get(SESSION_HEADER)
        session = self.server.sessions.get(sid) if sid else None
        if session is None:
            self._text(400 if not sid else 404, f"missing {SESSION_HEADER} header; send initialize first" if not sid
                       else "unknown or ended session; initialize again")
            return
        stream = EventStream()
        with session.lock:
            if isinstance(session.stream, EventStream) and session.stream.open:
                busy = True
            else:
                busy = False
                session.stream = stream
                session.send = stream.send
        if busy:
            self._text(409, "conflict: this session already has an open event stream")
            return
        self.close_connection = True  # an event stream has no length: it ends with the connection
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header(SESSION_HEADER, session.id or "")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.flush()
            self.server.mcp.ask_roots(session)  # a client with roots is asked as soon as it can be reached
            while not self.server.closing.is_set():
                try:
                    item = stream.queue.get(timeout=SSE_KEEPALIVE_S)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if item is None:
                    break
                self.wfile.write(b"event: message\ndata: " + item + b"\n\n")
                self.wfile.flush()
        except OSError as e:
            log.debug("event stream of session %s closed: %s", session.id, e)
        finally:
            stream.open = False
            with session.lock:
                if session.stream is stream:
                    session.stream = None
                    session.send = None

    def do_DELETE(self) -> None:
        if not self._preflight():
            return
        sid = self.headers.get(SESSION_HEADER)
        if not sid:
            self._text(400, f"missing {SESSION_HEADER} header")
        elif self.server.sessions.remove(sid):
            log.info("session %s ended by the client", sid)
            self._send(204)
        else:
            self._text(404, "unknown or ended session")

    def do_PUT(self) -> None:
        if self._preflight():
            self._text(405, "method not allowed", {"Allow": "POST, DELETE"})

    do_PATCH = do_PUT

    def do_POST(self) -> None:
        if not self._preflight():
            return
        if self.server.closing.is_set():
            self.close_connection = True
            self._text(503, "the server is shutting down")
            return
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            self._text(411, "length required: send the message with a Content-Length header")
            return
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._text(400, "bad Content-Length")
            return
        if length > MAX_MESSAGE_BYTES:
            # Discard a moderately oversized body so the client can read the answer (a client still sending would
            # see a broken pipe instead); anything bigger just loses the connection.
            left = length if length <= DRAIN_LIMIT else 0
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 20))
                if not chunk:
                    break
                left -= len(chunk)
            self.close_connection = True
            self._text(413, f"payload too large: one message may be at most {MAX_MESSAGE_BYTES} bytes (4 MiB)")
            return
        body = self.rfile.read(length)
        try:
            msg = decode(body)
        except DecodeError as e:
            self._json(400, e.response)
            return
        mcp = self.server.mcp
        if msg.is_request and msg.method == "server/discover":
            self._json(200, error_response(msg.id, METHOD_NOT_FOUND, "method not found: server/discover",
                                           {"method": "server/discover"}))
            return
        version = self.headers.get(VERSION_HEADER)
        if version is not None and version not in SUPPORTED_VERSIONS:
            self._rpc_error(400, msg.id if msg.is_request else None, INVALID_REQUEST,
                            f"unsupported {VERSION_HEADER}: {version} (supported: {', '.join(SUPPORTED_VERSIONS)})")
            return
        sid = self.headers.get(SESSION_HEADER)
        session = self.server.sessions.get(sid) if sid else None
        if msg.is_request and msg.method == "initialize" and session is None:
            session = Session(id=secrets.token_hex(16))
            reply = mcp.handle(msg, session)
            if session.initialized:
                self.server.sessions.add(session)
                self._json(200, reply or b"", {SESSION_HEADER: session.id or ""})
            else:
                self._json(200, reply or b"")
            return
        if session is None:
            if msg.is_request and msg.method == "ping" and not sid:
                self._json(200, result_response(msg.id, {}))
                return
            req_id = msg.id if msg.is_request else None
            if not sid:
                self._rpc_error(400, req_id, INVALID_REQUEST,
                                f"missing {SESSION_HEADER} header; send initialize first")
            else:
                self._rpc_error(404, req_id, INVALID_REQUEST, "unknown or ended session; initialize again")
            return
        reply = mcp.handle(msg, session)
        if reply is None:
            self._send(202)
        else:
            self._json(200, reply)


def _server_class(host: str) -> type[_HttpServer]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return type("_Server", (_HttpServer,), {"address_family": family})


def serve_http(settings: Any, *, host: str = "127.0.0.1", port: int = 7341, workers: int = 8,
               profile: str = "core", agent: str | None = None) -> int:
    """Run ``m1nd serve --http`` until SIGTERM/SIGINT; returns the exit code (2: refused host, 1: cannot start)."""
    try:
        host = check_host(host)
    except HostRefused as e:
        sys.stderr.write(f"m1nd: {e.message}\n")
        return 2
    shutdown = Shutdown()
    shutdown.install()
    try:
        httpd = _server_class(host)((host, port), Handler)
    except OSError as e:
        sys.stderr.write(f"m1nd: cannot listen on {host}:{port}: {e}\n")
        return 1
    try:
        ws = start_workspace(settings, "http")
    except Exception as e:  # noqa: BLE001
        httpd.server_close()
        return start_failed(e)
    httpd.mcp = McpServer(ws, workers=workers, profile=profile, agent=agent)
    httpd.sessions = SessionTable()
    httpd.closing = threading.Event()
    bound_port = httpd.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    loop = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="m1nd-http",
                            daemon=True)
    if not shutdown.event.is_set():
        loop.start()
        sys.stderr.write(f"m1nd: serving MCP on http://{shown}:{bound_port}{ENDPOINT}\n")
        sys.stderr.flush()
        shutdown.wait()
    httpd.closing.set()
    httpd.sessions.close_streams()
    if loop.is_alive():
        httpd.shutdown()  # stop accepting
    httpd.server_close()
    if not httpd.mcp.wait_idle(SHUTDOWN_GRACE_S):
        log.warning("%d calls still in progress after %.0f s", httpd.mcp.active, SHUTDOWN_GRACE_S)
    return finish(httpd.mcp.all_workspaces(), shutdown)
