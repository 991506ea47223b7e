"""The protocol core of ``m1nd.mcp.server`` in-process: decoding, method dispatch, errors, time limit, cancellation,
stdin line framing and the HTTP guards. No subprocess, no graph (tool calls use a fake ``call_tool``)."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from m1nd.mcp import jsonrpc as J
from m1nd.mcp import lifecycle as LC
from m1nd.mcp import server as S
from m1nd.mcp import stdio as IO
from m1nd.mcp.access import Access, HostRefused, check_host, check_names
from m1nd.tools.registry import ToolResult

# The §9 block of spec mcp.md, copied into the repository so the check runs everywhere (issue 14).
SPEC_INSTRUCTIONS = Path(__file__).parent / "data" / "instructions.txt"


class FakeWorkspace:
    pass


@pytest.fixture
def fake_tools(monkeypatch: pytest.MonkeyPatch):
    """Replace tool execution by a scripted function ``behaviour(name, args) -> ToolResult``."""
    calls: list[tuple[str, dict[str, Any]]] = []
    behaviour: dict[str, Any] = {}

    def fake_call_tool(ws: Any, name: str, args: dict[str, Any], **_kw: Any) -> ToolResult:
        calls.append((name, args))
        fn = behaviour.get(name)
        if fn is not None:
            return fn(args)
        return ToolResult({"ok": True, "name": name, "response_chars": 10}, False)

    monkeypatch.setattr(S, "call_tool", fake_call_tool)
    return calls, behaviour


def make_server(timeout: float = 5.0) -> S.McpServer:
    return S.McpServer(FakeWorkspace(), workers=2, tool_timeout=timeout, profile="all")


def rpc(server: S.McpServer, session: S.Session, method: str, params: Any = None, req_id: Any = 1) -> dict | None:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        msg["params"] = params
    out = server.handle(J.decode(json.dumps(msg).encode()), session)
    return None if out is None else json.loads(out)


def ready() -> tuple[S.McpServer, S.Session]:
    srv, sess = make_server(), S.Session()
    assert "result" in rpc(srv, sess, "initialize", {"protocolVersion": "2025-06-18"})
    return srv, sess


# -- decoding ---------------------------------------------------------------------------------------------------------
def _decode_error(raw: bytes) -> Any:
    with pytest.raises(J.DecodeError) as e:
        J.decode(raw)
    return json.loads(e.value.response)


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (
            b'{"jsonrpc": "2.0", "id": 1 "method": "ping"}',
            -32700,
            "parse error: Expecting ',' delimiter at line 1 column 28",
        ),
        (b"\xff\xfe", -32700, "parse error"),
        (b"[]", -32600, "invalid request: empty batch"),
        (b'"ping"', -32600, "invalid request: expected a JSON object"),
        (b'{"id": 1, "method": "ping"}', -32600, "invalid request: 'jsonrpc' must be \"2.0\""),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600, "invalid request: 'jsonrpc' must be \"2.0\""),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600, "invalid request: 'method' must be a string"),
        (
            b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
            -32600,
            "invalid request: 'id' must be a string or an integer",
        ),
        (
            b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
            -32600,
            "invalid request: 'id' must be a string or an integer",
        ),
        (
            b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',
            -32600,
            "invalid request: 'id' must be a string or an integer",
        ),
        (b"{}", -32600, "invalid request"),
    ],
    ids=[
        "bad-json",
        "bad-utf8",
        "empty-batch",
        "not-object",
        "no-jsonrpc",
        "jsonrpc-1",
        "method-type",
        "float-id",
        "bool-id",
        "null-id",
        "empty-object",
    ],
)
def test_decode_errors(raw: bytes, code: int, message: str) -> None:
    r = _decode_error(raw)
    assert r["jsonrpc"] == "2.0"
    assert r["error"]["code"] == code
    assert r["error"]["message"].startswith(message)
    raw_id = json.loads(raw).get("id") if code != -32700 and raw.startswith(b"{") else None
    assert r["id"] == raw_id  # echoed whenever one was given, null only when there is none to echo


def test_decode_keeps_the_id_of_an_invalid_request() -> None:
    assert _decode_error(b'{"id": "x", "method": "ping"}')["id"] == "x"


@pytest.mark.parametrize("given", [1.5, -0.25, 1e300, True, False, [1], {"a": 1}, 10**40])
def test_any_given_id_is_echoed_in_the_error(given: Any) -> None:
    raw = json.dumps({"jsonrpc": "2.0", "id": given, "method": "ping"}).encode()
    if isinstance(given, int) and not isinstance(given, bool):
        assert J.decode(raw).id == given  # a valid (if large) integer id
        return
    r = _decode_error(raw)
    assert r["error"]["code"] == -32600
    assert r["id"] == given


@pytest.mark.parametrize("raw", [b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}',
                                 b'{"jsonrpc": "2.0", "id": 1e999, "method": "ping"}',
                                 b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": -Infinity}}',
                                 b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "ping"}'])
def test_numbers_json_cannot_carry_are_parse_errors(raw: bytes) -> None:
    r = _decode_error(raw)
    assert r["error"]["code"] == -32700
    if b"Infinity" in raw:
        assert r["id"] == 1  # the id itself was fine: the error still names the request


def test_a_batch_of_notifications_gets_no_response() -> None:
    msg = J.decode(b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}, '
                   b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}]')
    srv, sess = ready()
    assert srv.handle(msg, sess) is None


def test_a_batch_with_requests_answers_each_request_by_its_id() -> None:
    r = _decode_error(b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "x"}, '
                      b'{"jsonrpc": "2.0", "id": 2.5, "method": "ping"}, 7]')
    assert isinstance(r, list) and [x["id"] for x in r] == [1, 2.5, None]
    assert all(x["error"]["code"] == -32600 and "batches are not supported" in x["error"]["message"] for x in r)


def test_decode_kinds() -> None:
    assert J.decode(b'{"jsonrpc":"2.0","id":"a","method":"ping"}').kind == "request"
    assert J.decode(b'{"jsonrpc":"2.0","method":"notifications/initialized"}').kind == "notification"
    # A notification is never answered, not even when malformed.
    assert J.decode(b'{"method":"notifications/initialized"}').kind == "notification"
    assert J.decode(b'{"jsonrpc":"2.0","id":3,"result":{}}').kind == "response"


def test_decode_refuses_oversized_messages() -> None:
    r = _decode_error(b" " * (J.MAX_MESSAGE_BYTES + 1))
    assert r["error"]["code"] == -32600 and "4 MiB" in r["error"]["message"]


# -- lifecycle --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["tools/list", "tools/call", "resources/list"])
def test_requests_before_initialize_are_refused(method: str) -> None:
    r = rpc(make_server(), S.Session(), method, {})
    assert r["error"] == {"code": -32600, "message": "server not initialized; send initialize first"}


def test_ping_and_discover_before_initialize() -> None:
    srv, sess = make_server(), S.Session()
    assert rpc(srv, sess, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    r = rpc(srv, sess, "server/discover", {})
    assert r["error"]["code"] == -32601 and r["error"]["message"] == "method not found: server/discover"


@pytest.mark.parametrize(("asked", "got"), [("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"),
                                            ("2025-03-26", "2025-03-26"), ("2024-11-05", "2024-11-05"),
                                            ("2026-07-28", "2025-11-25"), ("1999-01-01", "2025-11-25"),
                                            (None, "2025-11-25")])
def test_initialize_negotiates_the_version(asked: str | None, got: str) -> None:
    params = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    if asked:
        params["protocolVersion"] = asked
    r = rpc(make_server(), S.Session(), "initialize", params)["result"]
    assert r["protocolVersion"] == got
    assert r["capabilities"] == {"tools": {"listChanged": False}}
    assert r["serverInfo"]["name"] == "m1nd" and r["serverInfo"]["version"]
    assert r["instructions"] == S.instructions(make_server().tools)


def test_instructions_of_every_tool_are_the_spec_text_but_for_the_optional_agent_id() -> None:
    from m1nd.tools.profiles import profile_tools
    from m1nd.tools.registry import load_all

    spec = SPEC_INSTRUCTIONS.read_text(encoding="utf-8").rstrip("\n").splitlines()
    ours = S.instructions(profile_tools("all", load_all())).splitlines()
    assert ours[0].startswith("m1nd keeps a code graph") and "agent_id is optional" in ours[0]
    assert ours[1:] == [" ".join(spec[1:3]), *spec[3:]]  # the start chain on one line, the rest word for word


@pytest.mark.parametrize("profile", ["core", "graph", "memory", "perspectives"])
def test_instructions_name_only_tools_the_profile_offers(profile: str) -> None:
    from m1nd.tools.profiles import profile_tools
    from m1nd.tools.registry import load_all

    every = set(load_all())
    offered = set(profile_tools(profile, load_all()))
    text = S.instructions(offered)
    named = {w for w in re.findall(r"[a-z_]+", text) if w in every}
    assert named and named <= offered, named - offered


def test_second_initialize_is_refused() -> None:
    srv, sess = ready()
    r = rpc(srv, sess, "initialize", {"protocolVersion": "2025-06-18"}, req_id=2)
    assert r["error"]["code"] == -32600 and "initialize" in r["error"]["message"]


def test_unknown_method_names_it_in_data() -> None:
    srv, sess = ready()
    r = rpc(srv, sess, "resources/list", {})
    assert r["error"] == {"code": -32601, "message": "method not found: resources/list",
                          "data": {"method": "resources/list"}}


def test_notifications_are_never_answered() -> None:
    srv, sess = ready()
    for method in ("notifications/initialized", "notifications/whatever", "tools/list"):
        assert srv.handle(J.Message("notification", method=method), sess) is None
    assert srv.handle(J.Message("response", id=5), sess) is None


def test_params_must_be_an_object() -> None:
    srv, sess = ready()
    r = rpc(srv, sess, "tools/list", [1, 2])
    assert r["error"]["code"] == -32602


# -- tools ------------------------------------------------------------------------------------------------------------
def test_tools_list_is_one_page_of_full_listings() -> None:
    srv, sess = ready()
    r = rpc(srv, sess, "tools/list", {})["result"]
    assert "nextCursor" not in r
    names = [t["name"] for t in r["tools"]]
    assert names == list(srv.tools)
    for t in r["tools"]:
        assert set(t) == {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
    # The cached listing is reused with the right id.
    assert rpc(srv, sess, "tools/list", req_id="again")["id"] == "again"


@pytest.mark.parametrize(("params", "message"), [
    ({"arguments": {}}, "invalid params: 'name' must be a string"),
    ({"name": 5}, "invalid params: 'name' must be a string"),
    ({"name": "health", "arguments": [1]}, "invalid params: 'arguments' must be an object"),
    ({"name": "activat", "arguments": {}}, "unknown tool 'activat' (did you mean 'activate'? call tools/list)"),
    ({"name": "zzzzzz"}, "unknown tool 'zzzzzz' (call tools/list)"),
], ids=["no-name", "name-type", "arguments-type", "did-you-mean", "unknown"])
def test_malformed_tools_call_is_invalid_params(params: dict[str, Any], message: str, fake_tools) -> None:
    srv, sess = ready()
    r = rpc(srv, sess, "tools/call", params)
    assert r["error"]["code"] == -32602
    assert r["error"]["message"] == message
    assert fake_tools[0] == []


def test_tools_call_success_shape(fake_tools) -> None:
    calls, behaviour = fake_tools
    behaviour["health"] = lambda a: ToolResult({"status": "ok", "note": "naïve \u2028 \"q\"\n", "response_chars": 1},
                                               False)
    srv, sess = ready()
    r = rpc(srv, sess, "tools/call", {"name": "health", "arguments": {"agent_id": "a"}, "_meta": {"x": 1}})["result"]
    assert r["isError"] is False
    assert r["structuredContent"]["note"] == "naïve \u2028 \"q\"\n"
    assert json.loads(r["content"][0]["text"]) == r["structuredContent"]
    assert r["content"][0]["type"] == "text"
    assert calls == [("health", {"agent_id": "a"})]


def test_missing_arguments_default_to_an_empty_object(fake_tools) -> None:
    srv, sess = ready()
    rpc(srv, sess, "tools/call", {"name": "health"})
    assert fake_tools[0] == [("health", {})]


def test_tool_errors_are_results(fake_tools) -> None:
    _, behaviour = fake_tools
    err = {"code": "invalid_argument", "message": "missing required argument 'query' (string)",
           "recover": "fix the argument and call again", "details": {"argument": "query"}}
    behaviour["activate"] = lambda a: ToolResult({"error": err}, True)
    srv, sess = ready()
    r = rpc(srv, sess, "tools/call", {"name": "activate", "arguments": {"agent_id": "a"}})["result"]
    assert r["isError"] is True
    assert r["structuredContent"] == {"error": err}
    assert r["content"][0]["text"] == ("Error (invalid_argument): missing required argument 'query' (string) "
                                       "Recover: fix the argument and call again")


def test_real_validation_error_through_the_registry() -> None:
    srv, sess = ready()  # real call_tool: validation fails before any handler touches the (fake) workspace
    r = rpc(srv, sess, "tools/call", {"name": "activate", "arguments": {"agent_id": "a", "top_k": "5"}})["result"]
    assert r["isError"] is True and "'query'" in r["content"][0]["text"]
    r = rpc(srv, sess, "tools/call", {"name": "activate", "arguments": {"agent_id": "a", "query": "x", "topk": 5}})
    assert "unknown argument 'topk' (did you mean 'top_k'?)" in r["result"]["content"][0]["text"]


def test_unserialisable_result_is_internal_error(fake_tools) -> None:
    _, behaviour = fake_tools
    behaviour["health"] = lambda a: ToolResult({"x": float("nan"), "response_chars": 1}, False)
    srv, sess = ready()
    r = rpc(srv, sess, "tools/call", {"name": "health", "arguments": {}})
    assert r["error"]["code"] == -32603 and r["error"]["message"].startswith("internal error")


def test_slow_tool_times_out(fake_tools) -> None:
    _, behaviour = fake_tools
    release = threading.Event()
    behaviour["health"] = lambda a: (release.wait(120), ToolResult({"response_chars": 1}, False))[1]
    srv = make_server(timeout=0.2)
    sess = S.Session()
    rpc(srv, sess, "initialize", {})
    r = rpc(srv, sess, "tools/call", {"name": "health", "arguments": {}})["result"]
    assert not release.is_set()  # answered while the tool was still blocked: the limit, not the tool, ended it
    release.set()
    assert r["isError"] is True
    assert r["structuredContent"]["error"]["code"] == "timeout"
    assert r["content"][0]["text"].startswith("Error (timeout): tool 'health' did not finish within 0.2 s")
    release.set()
    # The server keeps serving (the abandoned call occupies one pool thread, the other answers).
    behaviour["health"] = lambda a: ToolResult({"response_chars": 1}, False)
    assert rpc(srv, sess, "tools/call", {"name": "health", "arguments": {}}, req_id=3)["result"]["isError"] is False


def test_cancelled_call_gets_no_response(fake_tools) -> None:
    _, behaviour = fake_tools
    entered, release = threading.Event(), threading.Event()

    def slow(a: dict[str, Any]) -> ToolResult:
        entered.set()
        release.wait(10)
        return ToolResult({"response_chars": 1}, False)

    behaviour["health"] = slow
    srv, sess = ready()
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(rpc(srv, sess, "tools/call", {"name": "health"}, req_id=7)))
    t.start()
    assert entered.wait(5)
    srv.handle(J.Message("notification", method="notifications/cancelled", params={"requestId": 7}), sess)
    t.join(5)
    release.set()
    assert out == [None]


def test_cancel_before_start_drops_the_request(fake_tools) -> None:
    srv, sess = ready()
    srv.handle(J.Message("notification", method="notifications/cancelled", params={"requestId": "q"}), sess)
    assert sess.take_cancelled("q") is True
    assert sess.take_cancelled("q") is False
    srv.handle(J.Message("notification", method="notifications/cancelled", params={"requestId": 9}), sess)
    assert rpc(srv, sess, "tools/call", {"name": "health"}, req_id=9) is None
    assert fake_tools[0] == []
    assert rpc(srv, sess, "tools/call", {"name": "health"}, req_id="9") is not None  # "9" is not 9


def test_wait_idle_tracks_requests_in_progress(fake_tools) -> None:
    _, behaviour = fake_tools
    release = threading.Event()
    behaviour["health"] = lambda a: (release.wait(10), ToolResult({"response_chars": 1}, False))[1]
    srv, sess = ready()
    t = threading.Thread(target=rpc, args=(srv, sess, "tools/call", {"name": "health"}))
    t.start()
    time.sleep(0.1)
    assert srv.wait_idle(0.1) is False
    release.set()
    assert srv.wait_idle(5) is True
    t.join()


# -- stdin framing ----------------------------------------------------------------------------------------------------
def _lines_from(chunks: list[bytes], limit: int) -> list[Any]:
    r, w = os.pipe()

    def feed() -> None:
        for c in chunks:
            os.write(w, c)
            time.sleep(0.01)
        os.close(w)

    t = threading.Thread(target=feed)
    t.start()
    try:
        return list(IO.read_lines(r, limit))
    finally:
        t.join()
        os.close(r)


def test_read_lines_framing() -> None:
    out = _lines_from([b'{"a":', b'1}\n\n{"b":2}\r\n', b"x" * 50, b"y\nshort\n", b"tail"], limit=20)
    assert out == [b'{"a":1}', b"", b'{"b":2}', IO.TOO_LONG, b"short", b"tail"]


def test_read_lines_limit_is_exact() -> None:
    out = _lines_from([b"a" * 20 + b"\n" + b"b" * 21 + b"\n" + b"c" * 22], limit=20)
    assert out == [b"a" * 20, IO.TOO_LONG, IO.TOO_LONG]


# -- HTTP guards ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("host", "bound"), [("127.0.0.1", "127.0.0.1"), ("localhost", "127.0.0.1"),
                                             ("::1", "::1"), ("[::1]", "::1"), ("127.0.0.2", "127.0.0.2")])
def test_loopback_hosts_accepted(host: str, bound: str) -> None:
    assert check_host(host) == (bound, False)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10"])
def test_public_hosts_need_tls_or_a_proxy(host: str) -> None:
    with pytest.raises(HostRefused, match="beyond loopback only over TLS with bearer tokens"):
        check_host(host)
    assert check_host(host, tls=True) == (host, True)
    assert check_host(host, plain_ok=True) == (host, True)


@pytest.mark.parametrize("host", ["example.com", "", "127.0.0.1:80"])
def test_host_names_refused(host: str) -> None:
    with pytest.raises(HostRefused, match="give an IP address to bind"):
        check_host(host, tls=True)


@pytest.mark.parametrize(("origin", "ok"), [
    (None, True), ("http://localhost", True), ("http://localhost:3000", True), ("http://127.0.0.1:7341", True),
    ("http://[::1]:8080", True), ("https://localhost:7341", True), ("https://evil.example", False),
    ("http://localhost.evil.com", False), ("http://127.0.0.1.nip.io", False), ("null", False),
    ("http://localhost:80/path", False), ("http://localhost:99999", False), ("ftp://localhost", False),
])
def test_origin_guard(origin: str | None, ok: bool) -> None:
    assert Access().origin_allowed(origin) is ok


@pytest.mark.parametrize(("host", "loopback", "public", "named"), [
    ("localhost:7341", True, True, True), ("[::1]:7341", True, True, True), ("evil.example", False, False, False),
    ("m1nd.example.com:443", False, False, True), ("M1ND.EXAMPLE.COM", False, False, True),
    ("192.0.2.7:7341", False, True, False), ("[2001:db8::1]:7341", False, True, False), ("", False, False, False),
    ("localhost:x", False, False, False),
])
def test_host_guard(host: str, loopback: bool, public: bool, named: bool) -> None:
    assert Access().host_allowed(host) is loopback
    assert Access(public=True).host_allowed(host) is public
    assert Access(names=check_names(["m1nd.example.com"])).host_allowed(host) is (loopback or named)
    assert Access(names=frozenset({"m1nd.example.com"})).origin_allowed(f"https://{host}") is (loopback or named)


@pytest.mark.parametrize("name", ["https://m1nd.example.com", "m1nd.example.com:443", "bad_name", ""])
def test_allow_host_values_checked(name: str) -> None:
    with pytest.raises(HostRefused, match="is not a host name or IP address"):
        check_names([name])


# -- stdio transport in-process (pipes, fake tools) -------------------------------------------------------------------
class Pipes:
    """A StdioTransport wired to OS pipes: write request lines, read reply lines."""

    def __init__(self, timeout: float = 5.0) -> None:
        import queue

        self.in_r, self.in_w = os.pipe()
        self.out_r, self.out_w = os.pipe()
        self.shutdown = LC.Shutdown()
        self.server = S.McpServer(FakeWorkspace(), tool_timeout=timeout, inline_tools=True, profile="all")
        self.transport = IO.StdioTransport(self.server, IO._Output(self.out_w), self.in_r, self.shutdown)
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.transport.start()

    def _pump(self) -> None:
        for line in IO.read_lines(self.out_r):
            self.replies.put(json.loads(line))

    def send(self, obj: Any) -> None:
        os.write(self.in_w, json.dumps(obj).encode() + b"\n")

    def call(self, req_id: Any, name: str = "health") -> None:
        self.send({"jsonrpc": "2.0", "id": req_id, "method": "tools/call", "params": {"name": name,
                                                                                     "arguments": {}}})

    def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        return self.replies.get(timeout=timeout)

    def silent(self, wait: float = 0.3) -> bool:
        import queue

        try:
            self.replies.get(timeout=wait)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        os.close(self.in_w)


@pytest.fixture
def pipes(fake_tools):
    made: list[Pipes] = []

    def make(timeout: float = 5.0) -> Pipes:
        p = Pipes(timeout)
        made.append(p)
        p.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
        assert "result" in p.recv()
        return p

    yield make
    for p in made:
        p.transport.stopping.set()
        for fd in (p.in_w, p.out_w, p.in_r):
            try:
                os.close(fd)
            except OSError:
                pass


def _blocking(behaviour: dict[str, Any], name: str = "health") -> tuple[threading.Event, threading.Event]:
    entered, release = threading.Event(), threading.Event()

    def slow(a: dict[str, Any]) -> ToolResult:
        entered.set()
        release.wait(10)
        return ToolResult({"late": True, "response_chars": 1}, False)

    behaviour[name] = slow
    return entered, release


def test_stdio_replies_in_request_order(pipes) -> None:
    p = pipes()
    for i in range(1, 30):
        if i % 3:
            p.call(i)
        else:
            p.send({"jsonrpc": "2.0", "id": i, "method": "ping"})
    assert [p.recv()["id"] for _ in range(1, 30)] == list(range(1, 30))


def test_stdio_watchdog_abandons_a_slow_call(pipes, fake_tools) -> None:
    entered, release = _blocking(fake_tools[1])
    p = pipes(timeout=0.2)
    p.call(1)
    assert entered.wait(5)
    r = p.recv()
    assert r["id"] == 1 and r["result"]["isError"] is True
    assert r["result"]["structuredContent"]["error"]["code"] == "timeout"
    p.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert p.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}  # a fresh worker serves the queue
    release.set()
    assert p.silent()  # the late result of the abandoned call is dropped
    fake_tools[1].pop("health")
    p.call(3)
    assert p.recv()["result"]["isError"] is False


def test_stdio_cancel_in_flight(pipes, fake_tools) -> None:
    entered, release = _blocking(fake_tools[1])
    p = pipes()
    p.call("slow")
    assert entered.wait(5)
    p.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow", "reason": "x"}})
    p.send({"jsonrpc": "2.0", "id": "next", "method": "ping"})
    assert p.recv()["id"] == "next"
    release.set()
    assert p.silent()


def test_stdio_cancel_queued(pipes, fake_tools) -> None:
    entered, release = _blocking(fake_tools[1])
    p = pipes()
    p.call(1)
    assert entered.wait(5)
    fake_tools[1]["impact"] = lambda a: ToolResult({"impact": True, "response_chars": 1}, False)
    p.call(2, "impact")
    p.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    p.call(3, "impact")
    # Give the watchdog's hand-over reader (READ_HANDOVER_S = 50 ms, polled) time to read the queued messages even
    # on a loaded 2-core CI machine; cancellation of queued requests is best effort by design.
    time.sleep(0.6)
    release.set()
    assert [p.recv()["id"], p.recv()["id"]] == [1, 3]
    assert p.silent()
    assert [c[0] for c in fake_tools[0]] == ["health", "impact"]


def test_stdio_eof_drains_then_stops(pipes) -> None:
    p = pipes()
    for i in (1, 2, 3):
        p.call(i)
    p.close()
    assert [p.recv()["id"] for _ in range(3)] == [1, 2, 3]
    assert p.shutdown.event.wait(5) and p.shutdown.reason == "EOF"
    assert p.transport.wait_done(5)


def test_stdio_pipelined_stress_keeps_order(pipes, fake_tools) -> None:
    """Pipelined requests, some slower than the read hand-over, some cancelled: every reply comes once, in request
    order; cancelled requests get at most one reply."""
    import random

    rng = random.Random(7)
    _, behaviour = fake_tools

    def maybe_slow(a: dict[str, Any]) -> ToolResult:
        time.sleep(a.get("sleep", 0))
        return ToolResult({"response_chars": 1}, False)

    behaviour["health"] = maybe_slow
    p = pipes()
    cancelled: set[int] = set()
    for i in range(1, 151):
        sleep = 0.08 if rng.random() < 0.1 else 0
        p.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "health", "arguments": {"sleep": sleep}}})
        if i % 3 == 0:
            p.send({"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"})
        if rng.random() < 0.1:
            cancelled.add(i)
            p.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}})
    got: list[Any] = []
    while True:
        try:
            got.append(p.recv(timeout=1.5)["id"])
        except Exception:  # noqa: BLE001 — queue.Empty: done
            break
    expected = []
    for i in range(1, 151):
        expected.append(i)
        if i % 3 == 0:
            expected.append(f"p{i}")
    assert len(got) == len(set(got))
    assert [x for x in got if x not in cancelled] == [x for x in expected if x not in cancelled]
    assert set(got) - set(expected) == set()
