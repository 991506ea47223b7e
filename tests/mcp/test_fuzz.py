"""Seeded protocol fuzzing of ``m1nd serve`` over stdio (slow tier, issue 14): 10,000 messages — tool calls with
hostile arguments, broken envelopes, odd ids, notifications, batches, garbage lines — against one server process.
Required: no death, no hang, every answer carries the id that was given (null only when none could be read), no
answer to what needs none, and no ``internal`` error anywhere."""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import pytest

from m1nd.tools.registry import load_all
from test_server_support import RawServer, fixture_repo, raw_server, server_env  # noqa: F401

pytestmark = pytest.mark.slow

MESSAGES = 10_000
SEED = 14
HANG_S = 120.0  # per answer: a liveness guard, far above any answer's real time
NO_ANSWER = object()

STRINGS = ["", " ", "a", "fuzz", "insight", "kn-0000000000000000", "file::a.py::fn::f", "\udc80", "x\ud800y",
           "\u202e\u0000\x1b[31m", "é漢字🙂", "x" * 5000, "0", "-1", "null", "true", "session pool", "%s%n",
           "a" * 64 + "!", "decision", "raw", "public", "list"]
INTS = [0, 1, -1, 7, 100, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 10**30, 10**200]
FLOATS = [0.5, -0.0, 1e-300, 1e308, 3.14, -2.5, 1.0]


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.tools = load_all()
        self.next_id = 0
        self.used_ids: list[Any] = []

    def value(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if r < 0.3:
            return self.rng.choice(STRINGS)
        if r < 0.5:
            return self.rng.choice(INTS)
        if r < 0.6:
            return self.rng.choice(FLOATS)
        if r < 0.7:
            return self.rng.choice([True, False, None])
        if depth > 3:
            return "deep"
        if r < 0.85:
            return [self.value(depth + 1) for _ in range(self.rng.randint(0, 4))]
        return {self.rng.choice(STRINGS + ["k", "entries", "id"]): self.value(depth + 1)
                for _ in range(self.rng.randint(0, 3))}

    def typed(self, ptype: str) -> Any:
        if self.rng.random() < 0.5:
            return self.value()
        return {"string": lambda: self.rng.choice(STRINGS), "integer": lambda: self.rng.choice(INTS),
                "number": lambda: self.rng.choice(INTS + FLOATS), "boolean": lambda: self.rng.random() < 0.5,
                "object": lambda: {"k": self.value()}, "string[]": lambda: [self.rng.choice(STRINGS)],
                "integer[]": lambda: [self.rng.choice(INTS)],
                "object[]": lambda: [{"category": "insight", "title": self.rng.choice(STRINGS),
                                      "content": self.rng.choice(STRINGS)}]}[ptype]()

    def fresh_id(self) -> Any:
        self.next_id += 1
        k = self.next_id
        shape = self.rng.random()
        rid: Any = (k if shape < 0.5 else f"s-{k}" if shape < 0.7 else k + 0.5 if shape < 0.8 else
                    [k] if shape < 0.85 else {"k": k} if shape < 0.9 else -k if shape < 0.95 else 2**70 + k)
        self.used_ids.append(rid)
        return rid

    def tool_call(self) -> dict[str, Any]:
        name = self.rng.choice(sorted(self.tools)) if self.rng.random() < 0.95 else self.rng.choice(STRINGS)
        tool = self.tools.get(name)
        args: dict[str, Any] = {"agent_id": "fuzz" if self.rng.random() < 0.8 else self.value()}
        if tool is not None:
            for p in self.rng.sample(list(tool.params), min(len(tool.params), self.rng.randint(0, 4))):
                if p.name == "path":  # never ingest a real directory tree
                    args[p.name] = self.rng.choice(["", "no/such/dir", "\udc80"])
                else:
                    args[p.name] = self.typed(p.type)
        if self.rng.random() < 0.1:
            args[self.rng.choice(STRINGS)] = self.value()
        params: Any = {"name": name, "arguments": args}
        if self.rng.random() < 0.05:
            params = self.value()
        return {"jsonrpc": "2.0", "id": self.fresh_id(), "method": "tools/call", "params": params}

    def envelope(self) -> dict[str, Any]:
        msg: dict[str, Any] = {}
        if self.rng.random() < 0.8:
            msg["jsonrpc"] = self.rng.choice(["2.0", "2.0", "1.0", 2, None])
        if self.rng.random() < 0.9:
            msg["id"] = self.rng.choice([self.fresh_id(), self.fresh_id(), True, None, 1.5, {"a": [1]}])
        if self.rng.random() < 0.9:
            msg["method"] = self.rng.choice(["ping", "tools/list", "initialize", "server/discover", "resources/list",
                                             "tools/call", 5, None, "", "\udc80"])
        if self.rng.random() < 0.5:
            msg["params"] = self.value()
        return msg

    def notification(self) -> dict[str, Any]:
        method = self.rng.choice(["notifications/initialized", "notifications/cancelled", "notifications/x", "ping"])
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if method == "notifications/cancelled":  # only ids already answered (or junk): nothing pending is lost
            msg["params"] = {"requestId": self.rng.choice(self.used_ids or ["junk"]) if self.rng.random() < 0.7
                             else self.value()}
        elif self.rng.random() < 0.3:
            msg["params"] = self.value()
        return msg

    def garbage(self) -> bytes:
        r = self.rng.random()
        if r < 0.2:
            return bytes(self.rng.choice(b"{}[]\":,abc\x00\xff\xfe 0123456789") for _ in range(self.rng.randint(1, 60))
                         ).replace(b"\n", b"").strip() or b"{"
        if r < 0.4:
            return json.dumps(self.tool_call()).encode()[: self.rng.randint(1, 40)].strip() or b"["
        if r < 0.5:
            return b"[" * self.rng.choice([100, 5000, 100000])
        if r < 0.6:
            return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + b"9" * 6000 + b"}}"
        if r < 0.7:
            return b'{"jsonrpc":"2.0","id":' + self.rng.choice([b"NaN", b"1e999", b"-Infinity"]) + b',"method":"ping"}'
        if r < 0.8:
            return json.dumps(self.rng.choice(STRINGS)).encode() or b"0"
        return b"\xef\xbb\xbf" + json.dumps({"jsonrpc": "2.0", "id": 1}).encode()

    def message(self) -> bytes | Any:
        r = self.rng.random()
        if r < 0.45:
            return self.tool_call()
        if r < 0.6:
            return self.envelope()
        if r < 0.7:
            return self.notification()
        if r < 0.77:
            return [self.rng.choice([self.notification, self.tool_call, self.envelope, self.value])()
                    for _ in range(self.rng.randint(0, 3))]
        if r < 0.82:
            return {"jsonrpc": "2.0", "id": self.fresh_id(), "result": self.value()}
        if r < 0.87:
            rid = self.fresh_id()
            return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                    "params": {"name": "memory_add", "arguments": {
                        "agent_id": "fuzz", "category": "insight", "title": f"t{rid!r}",
                        "content": self.rng.choice(STRINGS), "min_resonance" if self.rng.random() < 0.3 else "tags":
                        self.typed("integer")}}}
        return self.garbage()


def expected(msg: Any, line: bytes) -> Any:
    """What JSON-RPC 2.0 requires for one line: NO_ANSWER, an id, or a list of ids (a batch)."""
    if not isinstance(msg, (dict, list)):
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            return None  # unreadable: the error carries a null id
        if any(x in line for x in (b"NaN", b"Infinity", b"1e999")) and isinstance(msg, dict):
            rid = msg.get("id")  # a non-finite id is not JSON: it cannot be echoed, null is all there is
            return None if isinstance(rid, float) and (rid != rid or rid in (float("inf"), float("-inf"))) else rid
        if b"9" * 4400 in line:
            return 1
        if not isinstance(msg, (dict, list)):
            return None
    if isinstance(msg, list):
        if not msg:
            return None
        ids = []
        for item in msg:
            if isinstance(item, dict) and "method" not in item and ("result" in item or "error" in item):
                continue
            if isinstance(item, dict) and "id" not in item and isinstance(item.get("method"), str):
                continue
            ids.append(item.get("id") if isinstance(item, dict) else None)
        return ids if ids else NO_ANSWER
    if "method" not in msg and ("result" in msg or "error" in msg):
        return NO_ANSWER
    if "id" not in msg and isinstance(msg.get("method"), str):
        return NO_ANSWER
    return msg.get("id")


def _internal(reply: Any) -> bool:
    if isinstance(reply, list):
        return any(_internal(r) for r in reply)
    if "error" in reply:
        return reply["error"].get("code") == -32603
    res = reply.get("result")
    if isinstance(res, dict) and res.get("isError"):
        return res.get("structuredContent", {}).get("error", {}).get("code") in ("internal", "timeout")
    return False


def test_ten_thousand_seeded_messages(raw_server, server_env: dict[str, str]) -> None:
    srv: RawServer = raw_server(args=["--tools", "all"])  # every tool, not only the default profile
    srv.initialize()
    gen = Gen(SEED)
    counts = {"answered": 0, "silent": 0, "tool_calls": 0}
    wrong: list[str] = []
    internal: list[str] = []
    for n in range(MESSAGES):
        msg = gen.message()
        line = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        want = expected(msg, line)
        srv.send_raw(line + b"\n")
        if want is NO_ANSWER:
            counts["silent"] += 1
            continue
        assert srv.proc.poll() is None, f"server died at message {n}: {line[:300]!r}\n{srv.stderr[-3000:]}"
        raw = srv.lines.get(timeout=HANG_S)  # a hang fails here
        assert raw is not None, f"server closed stdout at message {n}\n{srv.stderr[-3000:]}"
        reply = json.loads(raw)
        counts["answered"] += 1
        counts["tool_calls"] += isinstance(msg, dict) and msg.get("method") == "tools/call"
        got = [r.get("id") for r in reply] if isinstance(reply, list) else reply.get("id")
        if got != want:
            wrong.append(f"#{n}: sent {line[:200]!r}, want id {want!r}, got {raw[:300]!r}")
        if _internal(reply):
            internal.append(f"#{n}: sent {line[:200]!r}, got {raw[:300]!r}")
    # Nothing extra arrived for the silent messages: the next answer is the sentinel's.
    sentinel = srv.request("ping")
    assert sentinel["result"] == {}
    sys.stderr.write(f"\nfuzz: {MESSAGES} messages, {counts}\n")
    assert not wrong, f"{len(wrong)} wrong or null ids:\n" + "\n".join(wrong[:40])
    assert not internal, f"{len(internal)} internal errors:\n" + "\n".join(internal[:10])
    assert srv.close() == 0
