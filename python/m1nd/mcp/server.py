"""The MCP protocol core (spec mcp.md §1-§3, §9; standard library only), shared by both transports.

Layout of ``m1nd.mcp``:

- :class:`McpServer` (here) is transport-independent. It takes one decoded :class:`~m1nd.mcp.jsonrpc.Message` and a
  :class:`Session` and returns the serialised response (``bytes``) or ``None`` (notifications, client responses,
  cancelled requests). Tool calls go through :func:`m1nd.tools.registry.call_tool`. A call running past the 120 s
  limit is abandoned with an ``isError`` ``timeout`` result while the transport keeps serving: over HTTP calls run
  on a pool of daemon threads and the request thread waits with the limit; over stdio the worker runs the tool
  inline and a watchdog answers ``timeout``.
- :mod:`m1nd.mcp.jsonrpc`: the wire (serialisation, responses, :func:`~m1nd.mcp.jsonrpc.decode`).
- :mod:`m1nd.mcp.stdio` and :mod:`m1nd.mcp.http`: the two transports; :mod:`m1nd.mcp.lifecycle`: start-up, signals
  and the flush at exit they share; :mod:`m1nd.mcp.access`: Host/Origin and token checks of the HTTP transport.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from m1nd.errors import M1ndError, RefusedError
from m1nd.mcp.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Message,
    dumps,
    error_response,
    result_response,
    to_wire,
    valid_id,
)
from m1nd.tools.profiles import DEFAULT_PROFILE, listed_params, profile_tools, profiles_with
from m1nd.tools.registry import ToolResult, call_tool, error_result, load_all, unknown_tool_message

log = logging.getLogger(__name__)

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
TOOL_TIMEOUT_S = 120.0
ROOTS_WAIT_S = 30.0  # a tool call waits this long for the client's roots (and their workspace) before going on


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


def _set_event() -> threading.Event:
    e = threading.Event()
    e.set()
    return e


def id_key(v: Any) -> tuple[str, Any]:
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
        if not valid_id(req_id):
            return
        key = id_key(req_id)
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
            key = id_key(req_id)
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
        key = id_key(req_id) if req_id is not None else None
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
