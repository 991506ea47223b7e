"""Streamable HTTP transport of the MCP server (spec mcp.md §1; standard library only).

One endpoint, ``/mcp`` on a loopback address: ``POST`` carries exactly one JSON-RPC message (≤ 4 MiB, else 413) and
gets ``200 application/json`` with the response, or ``202`` for notifications and client responses; ``GET`` (with
``Accept: text/event-stream`` and the session header) opens the session's one server-to-client SSE stream, which
carries the server's ``roots/list`` requests (issue 15: the workspace from the client; 409 when the session already
has one); ``DELETE`` ends the session (204). ``initialize`` issues ``Mcp-Session-Id`` (32 random
hex digits), which every later message must carry (400 when missing, 404 when unknown, ended or expired).
``MCP-Protocol-Version`` must be a supported version when present (absent means 2025-03-26).

Guards (issue 14), in the order they are checked:

- DNS rebinding: the ``Host`` header must name a loopback host (``localhost``, ``127.0.0.1``, ``[::1]``, any port),
  a name given with ``--allow-host``, or (public bind) an IP address; a present ``Origin`` must be ``http(s)://`` one
  of those; otherwise 403 (:mod:`m1nd.mcp.access`).
- Bearer tokens (issue 18), required beyond loopback or with ``--auth``: a request without a usable
  ``Authorization: Bearer`` token gets 401; a session stays bound to the agent of the token that opened it (403 for
  another agent's token), and its tool calls act as that agent. TLS (``--tls-cert``/``--tls-key``) handshakes on the
  connection's own thread, within the read timeout.
- ``POST`` needs ``Content-Type: application/json`` (415) and, when ``Accept`` is sent, one that admits JSON (406).
- Sessions: at most ``M1ND_HTTP_MAX_SESSIONS`` (1000). A session idle for ``M1ND_HTTP_SESSION_IDLE_S`` (1 h) with no
  request in progress expires; a session in use is never evicted. A new ``initialize`` when the table is full of
  live sessions gets 503 with ``Retry-After``.
- Connections: at most ``M1ND_HTTP_MAX_CONNECTIONS`` (256) at once; one more gets a canned 503 and is closed without
  taking a thread. Within a request every read waits at most ``M1ND_HTTP_READ_TIMEOUT_S`` (10 s) and the body must
  arrive within 3x that, else the connection is dropped; a kept-alive connection may idle ``M1ND_HTTP_IDLE_TIMEOUT_S``
  (60 s) between requests. The listen backlog is 128.
- A client that disconnects mid-request is logged at debug level, never with a traceback.

Connections are served by short-lived I/O threads; tool calls run on the server's pool of ``--workers`` threads, all
sharing one :class:`~m1nd.workspace.Workspace` (one graph in memory for every agent).

Why one module of this size: the streamable HTTP transport is one protocol surface (sessions, SSE, limits and
timeouts on one standard-library server); access rules live in :mod:`m1nd.mcp.access` and the protocol core in
:mod:`m1nd.mcp.server`.
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from m1nd.errors import M1ndError
from m1nd.mcp.access import Access, HostRefused, check_host
from m1nd.mcp.jsonrpc import (
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    METHOD_NOT_FOUND,
    DecodeError,
    decode,
    error_response,
    result_response,
)
from m1nd.mcp.lifecycle import SHUTDOWN_GRACE_S, Shutdown, finish, start_failed, start_workspace
from m1nd.mcp.server import SUPPORTED_VERSIONS, McpServer, Session

log = logging.getLogger(__name__)

ENDPOINT = "/mcp"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
DRAIN_LIMIT = 64 * 1024 * 1024
LISTEN_BACKLOG = 128
_DISCONNECTS = (ConnectionError, TimeoutError, socket.timeout)


def _env_number(name: str, default: float) -> float:
    try:
        v = float(os.environ.get(name, "") or default)
    except ValueError:
        return default
    return v if v > 0 else default


def max_sessions() -> int:
    return int(_env_number("M1ND_HTTP_MAX_SESSIONS", 1000))


def session_idle_s() -> float:
    return _env_number("M1ND_HTTP_SESSION_IDLE_S", 3600.0)


def max_connections() -> int:
    # Each HTTP session may hold one event stream open besides its POSTs: room for about a hundred agents.
    return int(_env_number("M1ND_HTTP_MAX_CONNECTIONS", 256))


def read_timeout_s() -> float:
    return _env_number("M1ND_HTTP_READ_TIMEOUT_S", 10.0)


def idle_timeout_s() -> float:
    return _env_number("M1ND_HTTP_IDLE_TIMEOUT_S", 60.0)
SSE_KEEPALIVE_S = 15.0


def media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


def accepts_json(accept: str | None) -> bool:
    if accept is None or not accept.strip():
        return True
    ranges = {media_type(r) for r in accept.split(",")}
    return bool(ranges & {"application/json", "application/*", "*/*"})


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
    """Sessions by id. Never evicts a session in use: only sessions idle past the limit with no request in
    progress expire; when the table is full of live sessions a new one is refused (the caller answers 503)."""

    def __init__(self, capacity: int | None = None, idle_s: float | None = None) -> None:
        self.capacity = capacity if capacity is not None else max_sessions()
        self.idle_s = idle_s if idle_s is not None else session_idle_s()
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def _expired(self, s: Session, now: float) -> bool:
        return s.in_use == 0 and now - s.last_seen > self.idle_s

    def acquire(self, sid: str) -> Session | None:
        """The live session ``sid`` marked in use (pair with :meth:`release`), or None."""
        with self._lock:
            s = self._sessions.get(sid)
            if s is None:
                return None
            if self._expired(s, time.time()):
                del self._sessions[sid]
                log.info("session %s expired after %.0f s idle", sid, self.idle_s)
                return None
            s.in_use += 1
            s.last_seen = time.time()
            return s

    def release(self, s: Session) -> None:
        with self._lock:
            s.in_use -= 1
            s.last_seen = time.time()

    def get(self, sid: str) -> Session | None:
        with self._lock:
            s = self._sessions.get(sid)
            return None if s is None or self._expired(s, time.time()) else s

    def add(self, session: Session) -> bool:
        """Store ``session``; False when the table is full of live sessions."""
        assert session.id is not None
        with self._lock:
            if len(self._sessions) >= self.capacity:
                now = time.time()
                for sid in [sid for sid, s in self._sessions.items() if self._expired(s, now)]:
                    del self._sessions[sid]
            if len(self._sessions) >= self.capacity:
                return False
            self._sessions[session.id] = session
            return True

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


_BUSY_TEXT = b"too many connections; retry in a moment\n"
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
         b"Connection: close\r\nContent-Length: " + str(len(_BUSY_TEXT)).encode() + b"\r\n\r\n" + _BUSY_TEXT)


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG
    mcp: McpServer
    sessions: SessionTable
    closing: threading.Event
    access: Access

    def server_activate(self) -> None:
        self.max_connections = max_connections()
        self.connections = 0
        self._conn_lock = threading.Lock()
        super().server_activate()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            full = self.connections >= self.max_connections
            if not full:
                self.connections += 1
        if full:  # answered on the accepting thread without reading the request: no thread is spent on it
            try:
                request.settimeout(1.0)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._connection_done()
            raise

    def _connection_done(self) -> None:
        with self._conn_lock:
            self.connections -= 1

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connection_done()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The default prints a traceback to stderr for every dropped connection.
        exc = sys.exc_info()[1]
        if isinstance(exc, _DISCONNECTS) or isinstance(exc, OSError):
            log.debug("connection from %s ended: %r", client_address, exc)
        else:
            log.error("request from %s failed: %s: %s", client_address, type(exc).__name__, exc)


class BodyTimeout(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "m1nd-mcp"
    sys_version = ""
    server: _HttpServer

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            # The handshake runs here, on the connection's thread with a deadline, not in the accept loop where
            # one slow client would hold every other connection back.
            self.request.settimeout(read_timeout_s())
            self.request.do_handshake()
        self.timeout = idle_timeout_s()  # waiting for the next request on a kept-alive connection
        self.token_agent: str | None = None
        super().setup()

    def parse_request(self) -> bool:
        # The request line has arrived: from here on (headers, body) every read waits at most the read timeout.
        self.connection.settimeout(read_timeout_s())
        return super().parse_request()

    def _idle(self) -> None:
        self.connection.settimeout(idle_timeout_s())

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
            if not self.close_connection:
                self._idle()
        except _DISCONNECTS as e:  # the client went away or stalled: nothing to answer
            log.debug("connection from %s dropped: %r", self.address_string(), e)
            self.close_connection = True

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

    def _rpc_error(self, status: int, req_id: Any, code: int, message: str,
                   headers: dict[str, str] | None = None) -> None:
        self._json(status, error_response(req_id, code, message), headers)

    def _read_body(self, length: int) -> bytes:
        """``length`` bytes within the body deadline (a trickling client cannot hold the thread)."""
        deadline = time.monotonic() + 3 * read_timeout_s()
        parts: list[bytes] = []
        left = length
        while left > 0:
            if time.monotonic() > deadline:
                raise BodyTimeout
            chunk = self.rfile.read1(min(left, 1 << 20))
            if not chunk:
                raise ConnectionResetError("the client closed the connection mid-body")
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)

    # -- common checks ------------------------------------------------------------------------------------------------
    def _preflight(self) -> bool:
        """Host, Origin, path and token checks shared by every method; False when a response was already sent."""
        access = self.server.access
        if not access.host_allowed(self.headers.get("Host")):
            self.close_connection = True
            self._text(403, "forbidden: the Host header must name a loopback address (localhost, 127.0.0.1 or "
                            "[::1]) or a name the server allows (--allow-host); DNS-rebinding guard")
            return False
        if not access.origin_allowed(self.headers.get("Origin")):
            self._text(403, "forbidden: foreign Origin (only http(s)://localhost, 127.0.0.1 and the names allowed "
                            "by --allow-host may call)")
            return False
        path = self.path.split("?", 1)[0]
        if path != ENDPOINT:
            self._text(404, f"not found: the MCP endpoint is {ENDPOINT}")
            return False
        if access.tokens is not None:
            given = self.headers.get("Authorization")
            self.token_agent = access.agent_for(given)
            if self.token_agent is None:
                self.close_connection = True  # the body is not read
                challenge = 'Bearer realm="m1nd"' + (', error="invalid_token"' if given else "")
                self._text(401, "unauthorized: this server needs 'Authorization: Bearer <token>' with a token from "
                                "'m1nd token create AGENT' that is not revoked or expired",
                           {"WWW-Authenticate": challenge})
                return False
        return True

    def _same_agent(self, session: Session) -> bool:
        """A session is used only with a token of the agent that opened it; False when 403 was sent."""
        if session.bound_agent == self.token_agent:
            return True
        self._text(403, "forbidden: this session was opened with another agent's token; initialize a new session")
        return False

    # -- methods ------------------------------------------------------------------------------------------------------
    def do_GET(self) -> None:
        if not self._preflight():
            return
        if "text/event-stream" not in (self.headers.get("Accept") or ""):
            self._text(406, "not acceptable: GET opens a text/event-stream; send Accept: text/event-stream")
            return
        sid = self.headers.get(SESSION_HEADER)
        session = self.server.sessions.acquire(sid) if sid else None  # in use while the stream is open
        if session is None:
            self._text(400 if not sid else 404, f"missing {SESSION_HEADER} header; send initialize first" if not sid
                       else "unknown or ended session; initialize again")
            return
        try:
            if self._same_agent(session):
                self._event_stream(session)
        finally:
            self.server.sessions.release(session)

    def _event_stream(self, session: Session) -> None:
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
        session = self.server.sessions.get(sid) if sid else None
        if not sid:
            self._text(400, f"missing {SESSION_HEADER} header")
        elif session is not None and not self._same_agent(session):
            return
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
        if media_type(self.headers.get("Content-Type")) != "application/json":
            self.close_connection = length > 0  # the body is not read
            self._text(415, "unsupported media type: send the JSON-RPC message with Content-Type: application/json")
            return
        if not accepts_json(self.headers.get("Accept")):
            self.close_connection = length > 0
            self._text(406, "not acceptable: responses are application/json; send Accept: application/json, "
                            "text/event-stream")
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
        try:
            body = self._read_body(length)
        except BodyTimeout:
            self.close_connection = True
            self._text(408, "request timeout: the body did not arrive in time")
            return
        try:
            msg = decode(body)
        except DecodeError as e:
            self._json(400, e.response)
            return
        if msg.kind == "ignored":  # a batch of notifications: nothing to answer
            self._send(202)
            return
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
        table = self.server.sessions
        session = table.acquire(sid) if sid else None
        if session is None and msg.is_request and msg.method == "initialize":
            self._initialize(msg)  # a new session (an unknown or expired id starts afresh)
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
                self._rpc_error(404, req_id, INVALID_REQUEST, "unknown, ended or expired session; initialize again")
            return
        try:
            if not self._same_agent(session):
                return
            reply = self.server.mcp.handle(msg, session)
        finally:
            table.release(session)
        if reply is None:
            self._send(202)
        else:
            self._json(200, reply)

    def _initialize(self, msg: Any) -> None:
        session = Session(id=secrets.token_hex(16), bound_agent=self.token_agent)
        reply = self.server.mcp.handle(msg, session)
        if not session.initialized:
            self._json(200, reply or b"")
        elif self.server.sessions.add(session):
            self._json(200, reply or b"", {SESSION_HEADER: session.id or ""})
        else:
            log.warning("session table full (%d live sessions); refusing a new one", len(self.server.sessions))
            self._rpc_error(503, msg.id, INVALID_REQUEST,
                            f"too many sessions ({self.server.sessions.capacity} in use); end idle ones with "
                            "DELETE or retry later", {"Retry-After": "5"})


def _server_class(host: str) -> type[_HttpServer]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return type("_Server", (_HttpServer,), {"address_family": family})


def _refuse(message: str, recover: str | None = None) -> int:
    sys.stderr.write(f"m1nd: {message}" + (f" Recover: {recover}" if recover else "") + "\n")
    return 2


def tls_context(cert: str, key: str | None) -> ssl.SSLContext:
    """A server context for ``--tls-cert``/``--tls-key`` (TLS 1.2 or newer); :class:`HostRefused` on bad files."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:
        raise HostRefused(f"cannot load the TLS certificate {cert}" + (f" / key {key}" if key else "") + f": {e}",
                          recover="pass a PEM certificate chain with --tls-cert and its private key with "
                                  "--tls-key") from e
    return ctx


def serve_http(settings: Any, *, host: str = "127.0.0.1", port: int = 7341, workers: int = 8,
               profile: str = "core", agent: str | None = None, tls_cert: str | None = None,
               tls_key: str | None = None, auth: bool = False, allow_hosts: tuple[str, ...] = (),
               allow_plain_http: bool = False) -> int:
    """Run ``m1nd serve --http`` until SIGTERM/SIGINT; returns the exit code (2: refused settings, 1: cannot start).

    Beyond loopback, tokens are required and TLS (or ``allow_plain_http`` behind a TLS proxy) too; see
    :mod:`m1nd.mcp.access`."""
    from m1nd.mcp.access import check_names

    if tls_key and not tls_cert:
        return _refuse("--tls-key needs --tls-cert", "pass both, or neither")
    try:
        host, public = check_host(host, tls=tls_cert is not None, plain_ok=allow_plain_http)
        names = check_names(allow_hosts)
        ctx = tls_context(tls_cert, tls_key) if tls_cert else None
    except HostRefused as e:
        return _refuse(e.message, e.recover)
    tokens = None
    if public or auth:
        from m1nd.auth import TokenService, tokens_db_path

        try:
            tokens = TokenService(settings.home, busy_timeout_ms=settings.busy_timeout_ms)
            usable = tokens.usable()
        except M1ndError as e:
            return _refuse(e.message, e.recover)
        if usable == 0:
            tokens.close()
            return _refuse(f"{'serving beyond loopback' if public else '--auth'} needs bearer tokens and "
                           f"{tokens_db_path(settings.home)} has no usable one",
                           "create one per agent with 'm1nd token create AGENT' (same --home), then start again")
    shutdown = Shutdown()
    shutdown.install()
    try:
        httpd = _server_class(host)((host, port), Handler)
    except OSError as e:
        sys.stderr.write(f"m1nd: cannot listen on {host}:{port}: {e}\n")
        if tokens is not None:
            tokens.close()
        return 1
    if ctx is not None:
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    httpd.access = Access(public=public, tokens=tokens, names=names)
    try:
        ws = start_workspace(settings, "http")
    except Exception as e:  # noqa: BLE001
        httpd.server_close()
        if tokens is not None:
            tokens.close()
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
        scheme = "https" if ctx is not None else "http"
        guard = "; bearer tokens required" if tokens is not None else ""
        sys.stderr.write(f"m1nd: serving MCP on {scheme}://{shown}:{bound_port}{ENDPOINT}{guard}\n")
        sys.stderr.flush()
        shutdown.wait()
    httpd.closing.set()
    httpd.sessions.close_streams()
    if loop.is_alive():
        httpd.shutdown()  # stop accepting
    httpd.server_close()
    if not httpd.mcp.wait_idle(SHUTDOWN_GRACE_S):
        log.warning("%d calls still in progress after %.0f s", httpd.mcp.active, SHUTDOWN_GRACE_S)
    if tokens is not None:
        tokens.close()
    return finish(httpd.mcp.all_workspaces(), shutdown)
