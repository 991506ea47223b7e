"""The MCP server: JSON-RPC 2.0 protocol core and the stdio transport (spec mcp.md §1-§3, §9; standard library only).

Layout:

- :class:`McpServer` is transport-independent. It takes one decoded :class:`Message` and a :class:`Session` and
  returns the serialised response (``bytes``) or ``None`` (notifications, client responses, cancelled requests).
  Tool calls go through :func:`m1nd.mcp.registry.call_tool`. A call running past the 120 s limit is abandoned with
  an ``isError`` ``timeout`` result while the transport keeps serving: over HTTP calls run on a pool of daemon
  threads and the request thread waits with the limit; over stdio the worker runs the tool inline (no thread hop on
  the hot path) and a watchdog answers ``timeout`` and hands the queue to a fresh worker.
- :func:`decode` turns one line/body into a :class:`Message` or a ready error response (-32700, -32600).
- :func:`serve_stdio` runs the newline-delimited stdio transport; :mod:`m1nd.mcp.http` the streamable HTTP one.
  Both share :class:`Shutdown` (learning.md §4: first SIGTERM/SIGINT/SIGHUP stops reading, lets the call in
  progress finish for up to 5 s, flushes learned weights, closes the databases and exits 0 / 130; a second signal
  exits at once).

stdout hygiene: :func:`serve_stdio` moves the protocol stream to a private duplicate of fd 1 and points fd 1 at
stderr *before* anything else runs, so neither a stray ``print`` nor native code (cmake rebuild chatter, ONNX
warnings, child processes) can ever corrupt the protocol stream.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import secrets
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from m1nd.errors import M1ndError, RefusedError
from m1nd.mcp.profiles import DEFAULT_PROFILE, listed_params, profile_tools, profiles_with
from m1nd.mcp.registry import ToolResult, call_tool, error_result, load_all, unknown_tool_message

log = logging.getLogger(__name__)

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
TOOL_TIMEOUT_S = 120.0
SHUTDOWN_GRACE_S = 5.0
ROOTS_WAIT_S = 30.0  # a tool call waits this long for the client's roots (and their workspace) before going on

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# spec mcp.md §9, with two deliberate changes: agent_id is optional (issue 15), and a step naming a tool the
# server's profile does not offer is left out (an agent told to call `drift` by a `core` server only meets an error).
_START = (("health (is the graph ingested?)", "health"), ("ingest path=<repo root> if empty", "ingest"),
          ("wake (your memories)", "wake"), ("drift (what changed since last session)", "drift"),
          ("trail_list / trail_resume to continue an investigation", "trail_resume"))
_FIND = (("Find code: activate <words>", "activate"), ("explain links: why", "why"), ("blast radius: impact", "impact"),
         ("test a belief: hypothesize", "hypothesize"))


def instructions(tools: Iterable[str]) -> str:
    """The ``initialize`` instructions for a server offering ``tools``."""
    have = set(tools)
    if "trail_list" not in have:
        start = [(t.replace("trail_list / ", ""), n) if n == "trail_resume" else (t, n) for t, n in _START]
    else:
        start = list(_START)
    lines = ["m1nd keeps a code graph and a shared memory for this project. agent_id is optional (the connection's "
             "agent acts); pass the same one on every call to keep one identity across sessions."]
    steps = [t for t, n in start if n in have]
    if steps:
        lines.append("Start: " + " -> ".join(steps) + ".")
    found = [t for t, n in _FIND if n in have]
    if found:
        lines.append("; ".join(found) + ".")
    if "perspective_start" in have:
        lines.append("Explore step by step: perspective_start, then follow routes (pass route_set_version back every "
                     "time).")
    if "learn" in have:
        lines.append("After using results, call learn with correct / wrong / partial so the graph improves.")
    if "memory_add" in have:
        lines.append("Remember what you learned: memory_add (use a session_id)"
                     + ("; recall with memory_search." if "memory_search" in have else "."))
    lines.append(("Before stopping: trail_save. " if "trail_save" in have else "")
                 + "Responses are capped by max_output_chars; raise it only when needed.")
    return "\n".join(lines)


# Methods that may be called before initialize.
_PRE_INIT = frozenset({"initialize", "ping", "server/discover"})


# -- serialisation --------------------------------------------------------------------------------------------------
def dumps(obj: Any) -> str:
    """Compact JSON, UTF-8 friendly; NaN/Infinity are refused (they are not JSON)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def to_wire(text: str) -> bytes:
    # Lone surrogates (undecodable file names) become JSON \udcXX escapes instead of invalid UTF-8.
    return text.encode("utf-8", "backslashreplace")


def error_response(req_id: Any, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return to_wire(dumps({"jsonrpc": "2.0", "id": req_id, "error": err}))


def result_response(req_id: Any, result: Any) -> bytes:
    return to_wire(dumps({"jsonrpc": "2.0", "id": req_id, "result": result}))


def tool_result_response(req_id: Any, res: ToolResult) -> bytes:
    """Build the ``tools/call`` response serialising the structured result once (the text content is the same JSON
    for successes)."""
    structured = dumps(res.structured)
    text = res.text() if res.is_error else structured
    return to_wire(''.join((
        '{"jsonrpc":"2.0","id":', dumps(req_id), ',"result":{"content":[{"type":"text","text":',
        json.dumps(text, ensure_ascii=False), '}],"structuredContent":', structured,
        ',"isError":', "true" if res.is_error else "false", "}}")))


def first_root(roots: Any) -> Path | None:
    """The directory of the first ``file://`` root (MCP roots are URIs; others are ignored)."""
    from urllib.parse import unquote, urlparse
    from urllib.request import url2pathname

    for root in roots if isinstance(roots, list) else []:
        uri = root.get("uri") if isinstance(root, dict) else None
        if not isinstance(uri, str):
            continue
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            continue
        path = Path(url2pathname(unquote(parsed.path))).absolute()
        if path.is_dir():
            return path
        log.warning("root %s is not a directory; ignored", uri)
    return None


# -- decoding -------------------------------------------------------------------------------------------------------
@dataclass
class Message:
    """One decoded JSON-RPC message. ``kind`` is ``request``, ``notification``, ``response`` (a client's answer to
    a server request; m1nd sends none, so those are ignored) or ``ignored`` (a batch needing no answer)."""

    kind: str
    method: str | None = None
    id: Any = None
    params: Any = None
    result: Any = None  # of a response (to a server request such as roots/list)
    error: Any = None

    @property
    def is_request(self) -> bool:
        return self.kind == "request"


class DecodeError(Exception):
    def __init__(self, response: bytes) -> None:
        super().__init__("undecodable message")
        self.response = response


def _valid_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def oversized_error() -> bytes:
    return error_response(None, INVALID_REQUEST,
                          f"invalid request: message exceeds {MAX_MESSAGE_BYTES} bytes (4 MiB)")


def _refuse_constant(name: str) -> Any:
    # NaN / Infinity are not JSON (Python's parser accepts them); refusing them here keeps every id and argument
    # serialisable in the answer.
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    x = float(text)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is out of range")
    return x


def _parse(raw: bytes | str) -> Any:
    return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)


def _salvage_id(raw: bytes | str) -> Any:
    """The id of a message refused only for a number JSON cannot carry (NaN, 1e999 elsewhere in it), so the error
    still names the request; None when there is no such id."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    got = obj.get("id")
    try:
        dumps(got)
    except (ValueError, TypeError):
        return None
    return got


def _batch_errors(items: list[Any]) -> bytes | None:
    """Answer a batch: one error per request in it, each echoing its id (m1nd does not run batches; MCP dropped
    them in 2025-06-18). A batch of notifications and responses only gets no answer, as JSON-RPC requires."""
    if not items:
        return error_response(None, INVALID_REQUEST, "invalid request: empty batch (batches are not supported)")
    errors = []
    for item in items:
        if isinstance(item, dict) and "id" in item and not ("method" not in item and ("result" in item
                                                                                     or "error" in item)):
            errors.append({"jsonrpc": "2.0", "id": item["id"], "error": {
                "code": INVALID_REQUEST, "message": "invalid request: batches are not supported; send each "
                                                    "message on its own"}})
        elif not (isinstance(item, dict) and (isinstance(item.get("method"), str) or "result" in item
                                              or "error" in item)):
            errors.append({"jsonrpc": "2.0", "id": None, "error": {
                "code": INVALID_REQUEST, "message": "invalid request: batches are not supported; send each "
                                                    "message on its own"}})
    return to_wire(dumps(errors)) if errors else None


def decode(raw: bytes | str) -> Message:
    """Parse one line/body. Raises :class:`DecodeError` carrying the error response to send; a message needing no
    answer at all (a batch of notifications) decodes to kind ``ignored``."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise DecodeError(oversized_error())
    try:
        obj = _parse(raw)
    except json.JSONDecodeError as e:
        raise DecodeError(error_response(None, PARSE_ERROR,
                                         f"parse error: {e.msg} at line {e.lineno} column {e.colno}")) from None
    except (ValueError, RecursionError) as e:  # bad UTF-8, NaN, 1e999, integers over 4300 digits, deep nesting
        raise DecodeError(error_response(_salvage_id(raw), PARSE_ERROR, f"parse error: {e}")) from None
    if isinstance(obj, list):
        batch = _batch_errors(obj)
        if batch is None:
            return Message("ignored")
        raise DecodeError(batch)
    if not isinstance(obj, dict):
        raise DecodeError(error_response(None, INVALID_REQUEST, "invalid request: expected a JSON object"))
    has_id = "id" in obj
    req_id = obj.get("id")
    method = obj.get("method")
    if "method" not in obj and ("result" in obj or "error" in obj):
        return Message("response", id=req_id, result=obj.get("result"), error=obj.get("error"))
    if not has_id and isinstance(method, str):
        return Message("notification", method=method, params=obj.get("params"))  # never answered, even if bad
    if has_id and not _valid_id(req_id):
        # The id is echoed as given (JSON-RPC: the response carries the request's id), so the client can match
        # the refusal to what it sent.
        raise DecodeError(error_response(req_id, INVALID_REQUEST,
                                         "invalid request: 'id' must be a string or an integer"))
    if obj.get("jsonrpc") != "2.0":
        raise DecodeError(error_response(req_id, INVALID_REQUEST, "invalid request: 'jsonrpc' must be \"2.0\""))
    if not isinstance(method, str):
        raise DecodeError(error_response(req_id, INVALID_REQUEST, "invalid request: 'method' must be a string"))
    if not has_id:  # pragma: no cover — handled above
        return Message("notification", method=method, params=obj.get("params"))
    return Message("request", method=method, id=req_id, params=obj.get("params"))


# -- sessions and calls ---------------------------------------------------------------------------------------------
def _set_event() -> threading.Event:
    e = threading.Event()
    e.set()
    return e


def _id_key(v: Any) -> tuple[str, Any]:
    return (type(v).__name__, v)  # "1" and 1 are different ids


@dataclass
class _Call:
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: bool = False
    result: ToolResult | None = None


@dataclass
class Session:
    """Protocol state of one client: one per stdio process, one per ``Mcp-Session-Id`` over HTTP."""

    id: str | None = None
    initialized: bool = False
    protocol_version: str | None = None
    client_info: dict[str, Any] | None = None
    created: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time)
    lock: threading.Lock = field(default_factory=threading.Lock)
    inflight: dict[tuple[str, Any], _Call] = field(default_factory=dict)
    cancelled: set[tuple[str, Any]] = field(default_factory=set)
    # Names this connection when the client passes no agent_id (HTTP: the session id; stdio: random per process).
    token: str = field(default_factory=lambda: secrets.token_hex(4))
    # MCP roots (issue 15): a client announcing the capability is asked for its roots; its first root selects the
    # workspace this session is served from. Tool calls wait (bounded) while a roots/list answer is outstanding.
    roots_capable: bool = False
    send: Callable[[bytes], bool] | None = None  # how the server reaches the client (stdio; HTTP: a GET stream)
    stream: Any = None  # HTTP: the session's open event stream
    workspace: Any = None  # None: the server's default workspace
    roots_request: str | None = None
    roots_ready: threading.Event = field(default_factory=lambda: _set_event())
    in_use: int = 0  # requests of this session being answered (HTTP: such a session never expires)
    # HTTP with bearer tokens (issue 18): the agent of the token that opened the session. Every call acts as it,
    # and a call naming another agent_id is refused.
    bound_agent: str | None = None

    def agent(self) -> str:
        """The connection's agent: the client's name from ``initialize`` and the session, e.g. ``cursor@3fa2c91b``."""
        name = (self.client_info or {}).get("name")
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name if isinstance(name, str) else "").strip("-._")[:48]
        return f"{slug or 'client'}@{(self.id or self.token)[:8]}"

    def cancel(self, req_id: Any) -> None:
        if not _valid_id(req_id):
            return
        key = _id_key(req_id)
        with self.lock:
            call = self.inflight.get(key)
            if call is not None:
                call.cancelled = True
                call.done.set()
            elif len(self.cancelled) < 1000:
                self.cancelled.add(key)  # not started yet (queued): dropped when dequeued

    def take_cancelled(self, req_id: Any) -> bool:
        """True (and forget it) when a queued request was cancelled before it started."""
        with self.lock:
            key = _id_key(req_id)
            if key in self.cancelled:
                self.cancelled.discard(key)
                return True
            return False


class _Pool:
    """A fixed set of daemon threads running tool calls (daemon: an abandoned call never blocks exit). Callers wait
    on their own event, so the pool only runs callables."""

    def __init__(self, size: int, name: str) -> None:
        self._q: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        for i in range(size):
            threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True).start()

    def _run(self) -> None:
        while True:
            fn = self._q.get()
            try:
                fn()
            except Exception:
                log.exception("tool thread failed")

    def submit(self, fn: Callable[[], None]) -> None:
        self._q.put(fn)


class McpServer:
    """Protocol methods of spec mcp.md §2 over one shared :class:`~m1nd.workspace.Workspace`."""

    def __init__(self, workspace: Any, *, workers: int = 4, tool_timeout: float | None = None,
                 inline_tools: bool = False, profile: str = DEFAULT_PROFILE, agent: str | None = None) -> None:
        from m1nd import __version__

        self.workspace = workspace
        self.version = __version__
        self.tool_timeout = tool_timeout if tool_timeout is not None else _env_float("M1ND_TOOL_TIMEOUT_S",
                                                                                      TOOL_TIMEOUT_S)
        registered = load_all()
        self.profile = profile
        self.tools = {n: registered[n] for n in profile_tools(profile, registered)}
        # Server-level --agent: every call without agent_id acts as this agent (else the connection's own).
        self.agent = agent
        # Workspaces by root key: the default one (--workspace, else the current directory) and those chosen by
        # clients' roots. Each holds its own graph; all are flushed at shutdown.
        self._workspaces: dict[str, Any] = {}
        key = getattr(getattr(workspace, "settings", None), "workspace_key", None)
        if key is not None:
            self._workspaces[str(key)] = workspace
        self._workspaces_lock = threading.Lock()
        self._roots_seq = 0
        # inline_tools: the transport runs tools on its own thread and enforces the time limit and cancellation
        # itself (stdio); otherwise calls run on a pool and the caller waits with the limit (HTTP).
        self.inline_tools = inline_tools
        self._pool = None if inline_tools else _Pool(max(1, workers), "m1nd-tool")
        self._listing: bytes | None = None
        self._active = 0
        self._active_cv = threading.Condition()

    # -- bookkeeping of calls in progress (graceful shutdown waits for them) -------------------------------------
    def _enter(self) -> None:
        with self._active_cv:
            self._active += 1

    def _leave(self) -> None:
        with self._active_cv:
            self._active -= 1
            self._active_cv.notify_all()

    @property
    def active(self) -> int:
        return self._active

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._active_cv:
            while self._active > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._active_cv.wait(left)
        return True

    # -- dispatch -------------------------------------------------------------------------------------------------
    def handle(self, msg: Message, session: Session) -> bytes | None:
        """Answer one message; ``None`` when nothing must be sent."""
        session.last_seen = time.time()
        if msg.kind == "ignored":
            return None
        if msg.kind == "response":
            self.handle_response(msg, session)
            return None
        if msg.kind == "notification":
            self._notification(msg, session)
            return None
        self._enter()
        try:
            return self._request(msg, session)
        except Exception as e:
            log.exception("request %r failed", msg.method)
            return error_response(msg.id, INTERNAL_ERROR, f"internal error: {type(e).__name__}: {e}")
        finally:
            self._leave()

    def _notification(self, msg: Message, session: Session) -> None:
        if msg.method == "notifications/cancelled":
            params = msg.params if isinstance(msg.params, dict) else {}
            session.cancel(params.get("requestId"))
        elif msg.method in ("notifications/initialized", "notifications/roots/list_changed"):
            self.ask_roots(session)
        # everything else: accepted silently.

    # -- workspaces and MCP roots -------------------------------------------------------------------------------------
    def workspace_for(self, session: Session) -> Any:
        return session.workspace if session.workspace is not None else self.workspace

    def all_workspaces(self) -> list[Any]:
        with self._workspaces_lock:
            found = list(self._workspaces.values())
        return found if self.workspace in found else [self.workspace, *found]

    def ask_roots(self, session: Session) -> None:
        """Send ``roots/list`` to a client that supports roots (the answer arrives in :meth:`handle_response`)."""
        if not session.roots_capable or session.send is None:
            return
        with self._workspaces_lock:
            self._roots_seq += 1
            req_id = f"m1nd-roots-{self._roots_seq}"
        session.roots_request = req_id
        session.roots_ready.clear()
        if not session.send(to_wire(dumps({"jsonrpc": "2.0", "id": req_id, "method": "roots/list"}))):
            session.roots_ready.set()

    def handle_response(self, msg: Message, session: Session) -> None:
        """A client's answer to a server request: only ``roots/list`` is ever asked. The workspace opens on a
        thread of its own (loading a graph takes a while) so the transport keeps reading meanwhile."""
        if msg.id is None or msg.id != session.roots_request:
            return
        session.roots_request = None
        if msg.error is not None or not isinstance(msg.result, dict):
            log.warning("roots/list failed (%s); serving workspace %s", msg.error,
                        self.workspace_for(session).settings.workspace_key)
            session.roots_ready.set()
            return
        root = first_root(msg.result.get("roots"))
        if root is None:
            session.roots_ready.set()
            return

        def open_root() -> None:
            try:
                session.workspace = self.open_workspace(root)
                log.info("serving workspace %s (the client's root)", session.workspace.settings.workspace_key)
            except Exception:
                log.exception("cannot open the workspace of root %s; serving %s", root,
                              self.workspace_for(session).settings.workspace_key)
            finally:
                session.roots_ready.set()

        threading.Thread(target=open_root, name="m1nd-roots", daemon=True).start()

    def open_workspace(self, root: Any) -> Any:
        """The workspace whose key is ``root``'s git top-level (else ``root``), opened and started once."""
        from dataclasses import replace

        from m1nd.config import git_toplevel
        from m1nd.workspace import Workspace

        key = git_toplevel(root) or root
        with self._workspaces_lock:
            ws = self._workspaces.get(str(key))
            if ws is None:
                base = self.workspace
                ws = Workspace(replace(base.settings, workspace_key=key), transport=base.transport)
                ws.on_server_start()
                self._workspaces[str(key)] = ws
            return ws

    def _request(self, msg: Message, session: Session) -> bytes | None:
        method = msg.method
        assert method is not None
        if method == "server/discover":
            return error_response(msg.id, METHOD_NOT_FOUND, f"method not found: {method}", {"method": method})
        if not session.initialized and method not in _PRE_INIT:
            return error_response(msg.id, INVALID_REQUEST, "server not initialized; send initialize first")
        if msg.params is not None and not isinstance(msg.params, dict):
            return error_response(msg.id, INVALID_PARAMS, "invalid params: 'params' must be an object")
        params = msg.params or {}
        if method == "initialize":
            return self._initialize(msg.id, params, session)
        if method == "ping":
            return result_response(msg.id, {})
        if method == "tools/list":
            return self._tools_list(msg.id)
        if method == "tools/call":
            return self._tools_call(msg.id, params, session)
        return error_response(msg.id, METHOD_NOT_FOUND, f"method not found: {method}", {"method": method})

    def _initialize(self, req_id: Any, params: dict[str, Any], session: Session) -> bytes:
        with session.lock:
            if session.initialized:
                return error_response(req_id, INVALID_REQUEST,
                                      "invalid request: already initialized; initialize may be sent once per session")
            asked = params.get("protocolVersion")
            version = asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION
            session.initialized = True
            session.protocol_version = version
            info = params.get("clientInfo")
            session.client_info = info if isinstance(info, dict) else None
            caps = params.get("capabilities")
            session.roots_capable = isinstance(caps, dict) and isinstance(caps.get("roots"), dict)
        log.info("session %s initialized (protocol %s, client %s)", session.id or "stdio", version,
                 (session.client_info or {}).get("name"))
        return result_response(req_id, {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "m1nd", "version": self.version},
            "instructions": instructions(self.tools),
        })

    def _tools_list(self, req_id: Any) -> bytes:
        if self._listing is None:
            listed = [t.listing(listed_params(self.profile, n)) for n, t in self.tools.items()]
            self._listing = to_wire(dumps(listed))
        return b'{"jsonrpc":"2.0","id":' + to_wire(dumps(req_id)) + b',"result":{"tools":' + self._listing + b"}}"

    def _tools_call(self, req_id: Any, params: dict[str, Any], session: Session) -> bytes | None:
        name = params.get("name")
        if not isinstance(name, str):
            return error_response(req_id, INVALID_PARAMS, "invalid params: 'name' must be a string")
        args = params.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return error_response(req_id, INVALID_PARAMS, "invalid params: 'arguments' must be an object")
        if not session.roots_ready.wait(ROOTS_WAIT_S):
            log.warning("no answer to roots/list within %.0f s; serving workspace %s", ROOTS_WAIT_S,
                        self.workspace_for(session).settings.workspace_key)
        if name not in self.tools:
            others = profiles_with(name, load_all())
            if others:
                return error_response(req_id, INVALID_PARAMS, f"tool '{name}' is not in the '{self.profile}' tool "
                                      f"profile this server offers (profiles with it: {', '.join(others)}); "
                                      f"restart it with --tools {others[0]} (or M1ND_TOOLS={others[0]})",
                                      {"tool": name, "profile": self.profile})
            return error_response(req_id, INVALID_PARAMS, unknown_tool_message(name), {"tool": name})
        res = self.run_tool(name, args, session, req_id)
        if res is None:
            return None  # cancelled: no response (spec mcp.md §2)
        try:
            return tool_result_response(req_id, res)
        except (TypeError, ValueError) as e:
            log.exception("result of tool %s cannot be serialised", name)
            return error_response(req_id, INTERNAL_ERROR, f"internal error: result cannot be serialised ({e})")

    def run_tool(self, name: str, args: dict[str, Any], session: Session, req_id: Any = None) -> ToolResult | None:
        """Run one tool on the pool with the time limit; ``None`` when the request was cancelled meanwhile."""
        bound = session.bound_agent
        if bound is not None and isinstance(args, dict) and args.get("agent_id") not in (None, bound):
            return error_result(RefusedError(
                f"this connection's token acts as agent '{bound}'; it cannot act as '{args.get('agent_id')}'",
                code="wrong_agent", recover=f"omit agent_id (or pass '{bound}'); another agent needs its own token"))
        agent = bound or self.agent or session.agent()
        workspace = self.workspace_for(session)
        if self._pool is None:
            return call_tool(workspace, name, args, default_agent=agent)
        call = _Call()
        key = _id_key(req_id) if req_id is not None else None
        if key is not None:
            with session.lock:
                if key in session.cancelled:
                    session.cancelled.discard(key)
                    return None
                session.inflight[key] = call

        def work() -> None:
            try:
                call.result = call_tool(workspace, name, args, default_agent=agent)
            finally:
                call.done.set()

        self._pool.submit(work)
        try:
            finished = call.done.wait(self.tool_timeout)
        finally:
            if key is not None:
                with session.lock:
                    session.inflight.pop(key, None)
        if call.cancelled:
            log.info("tool call %s (id %r) cancelled by the client", name, req_id)
            return None
        if not finished or call.result is None:
            log.warning("tool %s exceeded %.0f s and was abandoned", name, self.tool_timeout)
            return timeout_result(name, self.tool_timeout)
        return call.result


def timeout_result(name: str, seconds: float) -> ToolResult:
    return ToolResult({"error": M1ndError(
        f"tool '{name}' did not finish within {seconds:g} s and was abandoned", code="timeout",
        recover="narrow the request (smaller top_k, max_hops or path filters) or retry later",
        details={"timeout_s": seconds}).to_dict()}, True)


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


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
        if not _valid_id(req_id):
            return
        with self.lock:
            run = self.current
            if run is not None and run.tool is not None and _id_key(run.msg.id) == _id_key(req_id):
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
