"""Golden outputs of the knowledge memory: a fixed scenario of ``memory_*`` / ``wake*`` tool calls (through the
in-process tool layer, exactly as the MCP server runs them) and of ``m1nd memory …`` CLI commands, compared with the
outputs saved in ``memory_golden.json``. It guards refactors that must not change a single byte of what agents and
users see (issue 16: "outputs do not change").

Determinism: the clock is frozen (``time.time_ns`` is replaced for the whole process and moved forward only between
steps), the random identifiers come from a counter (``secrets.token_hex`` and ``uuid.uuid4`` are replaced), the
embedder is the fake hashing one, and the temporary directory is written as ``<tmp>``. Timings (``elapsed_ms``) are
dropped. (The weekly ``growth`` of ``memory_stats`` read the real date until it moved to :mod:`m1nd.timeutil`'s
clock; its saved value was regenerated then, the only change of this file during the refactor.)

Regenerate the saved outputs after an intended change of output::

    M1ND_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/golden/test_memory_golden.py

then review the diff of ``tests/golden/memory_golden.json`` before committing it.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from testkit import open_workspace, run_cli

GOLDEN = Path(__file__).with_name("memory_golden.json")
T0_NS = 1_767_225_600_000 * 1_000_000  # 2026-01-01T00:00:00.000Z
STEP_NS = 61_000 * 1_000_000  # each step happens 61 s after the previous one
CLI_ENV = {"M1ND_CURRENT_AGENT": None, "M1ND_MEMORY_DB": None, "M1ND_RESONANCE_BASIS": None,
           "M1ND_SKIP_SCHEMA": None, "M1ND_WAKE_CHUNK_BYTES": None, "M1ND_EMBEDDER": "hashing",
           "M1ND_SKIP_WRITE_ANCHOR": None, "M1ND_SKIP_WRITE_EMBED": None}


class Frozen:
    """A process clock that stands still until :meth:`tick` moves it."""

    def __init__(self) -> None:
        self.ns = T0_NS

    def __call__(self) -> int:
        return self.ns

    def tick(self, days: int = 0) -> None:
        self.ns += STEP_NS + days * 86_400 * 1_000_000_000


def _scrub(value: Any, tmp: str) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v, tmp) for k, v in value.items() if k != "elapsed_ms"}
    if isinstance(value, list):
        return [_scrub(v, tmp) for v in value]
    if isinstance(value, str):
        return value.replace(tmp, "<tmp>")
    return value


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> Frozen:
    clock = Frozen()
    counter = itertools.count(1)
    monkeypatch.setattr(time, "time_ns", clock)
    monkeypatch.setattr(secrets, "token_hex", lambda n=32: f"{next(counter):0{2 * n}x}"[-2 * n:])
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))
    for k, v in CLI_ENV.items():
        if v is None:
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    return clock


def tool_scenario(home: Path, clock: Frozen) -> list[dict[str, Any]]:
    from m1nd import call_tool

    ws = open_workspace(home, home.parent / "ws", transport="mcp", busy_timeout_ms=5000)
    out: list[dict[str, Any]] = []
    ids: dict[str, str] = {}  # missing keys read as a bogus id (the error result is recorded too)

    def call(name: str, key: str | None = None, **args: Any) -> dict[str, Any]:
        clock.tick()
        args.setdefault("agent_id", "alice")
        r = call_tool(ws, name, args)
        out.append({"tool": name, "args": args, "is_error": r.is_error, "result": r.structured, "text": r.text()})
        if key is not None and not r.is_error:
            ids[key] = r.structured["id"]
        return r.structured

    try:
        call("memory_registries", kind="categories")
        call("memory_add", "a", title="Retry with backoff", category="insight", content="Exponential backoff "
             "with jitter keeps the retry storm down.", tags=["net", "retry"], resonance=6,
             wake_phrases=["backoff"], code_refs=["file::src/net.py"], session_id="ses-golden")
        call("memory_add", "b", title="Alice private note", category="insight", content="backoff secrets",
             private=True, resonance=4)
        call("memory_add", "c", title="Bob's note", category="decision", content="Use SQLite WAL for readers.",
             agent_id="bob", tags=["db"])
        call("memory_add", "bloom", title="Who I am", category="bloom", resonance=9, wake_phrases=["memory builder"],
             content="I build memory engines.\n")
        call("memory_add", "fact", type="thread_opened", content="Why is ingest slow on big repos?")
        call("memory_add", "dup", title="Retry with backoff", category="insight", content="Exponential backoff "
             "with jitter keeps the retry storm down.", session_id="ses-golden")
        call("memory_add", title="bad", category="nope", content="x")
        call("memory_add_batch", entries=[
            {"title": "Batch one", "category": "insight", "content": "first batch line about caches"},
            {"title": "Batch two", "category": "pattern", "content": "second batch line", "tags": ["cache"]},
            {"title": "", "category": "insight", "content": "broken"}])
        call("memory_show", id=ids.get("a", "kn-missing"))
        call("memory_show", id="kn-0000000000000000")
        call("memory_list")
        call("memory_list", category=["insight"], sort="resonance", limit=5)
        call("memory_list", mine=True)
        call("memory_search", query="backoff")
        call("memory_search", query="backoff jitter missing", include_private=False)
        call("memory_search", query="memory engines", mode="semantic")
        call("memory_search", query="retry storm", mode="hybrid", limit=3)
        call(
            "memory_update",
            id=ids.get("a", "kn-missing"),
            title="Retry with jittered backoff",
            append="Cap the delay.",
            add_tags=["resilience"],
        )
        call("memory_update", id=ids.get("a", "kn-missing"), find="jitter", replace="full jitter")
        call(
            "memory_relate", "rel", from_id=ids.get("a", "kn-missing"), to_id=ids.get("c", "kn-missing"), type="related"
        )
        call("memory_relate", from_id=ids.get("a", "kn-missing"), to_id=ids.get("c", "kn-missing"), type="related")
        call("memory_relationships", id=ids.get("c", "kn-missing"))
        call("memory_reinforce", id=ids.get("c", "kn-missing"), amount=2)
        call("memory_unrelate", relationship_id=ids.get("rel", "kn-missing"))
        call("memory_recent", all_types=True)
        call("memory_sessions", action="list")
        call("memory_sessions", action="create", session_id="ses-two", session_type="manual")
        call("memory_sessions", action="close", session_id="ses-two")
        call("memory_sessions", action="facts", session_id="ses-golden")
        call("memory_open_threads")
        call("memory_stats")
        call("memory_delete", id=ids.get("c", "kn-missing"), agent_id="bob")
        call("memory_restore", id=ids.get("c", "kn-missing"), agent_id="bob")
        call("memory_restore", id=ids.get("a", "kn-missing"))
        call("wake", limit=5)
        call("wake_fetch", days=3)
        begun = call("wake_begin", wake=1, model="golden-model")
        if "session" in begun:
            s1 = call(
                "wake_respond",
                guess="memory builder",
                bloom_id=ids.get("bloom", "kn-missing"),
                session=begun["session"],
            )
            if "session" in s1:
                call("wake_respond", guess="nothing", bloom_id=ids.get("a", "kn-missing"), session=s1["session"])
        clock.tick(days=40)
        call("memory_list", sort="resonance")
        call("memory_recent", days=60, all_types=True, sort="resonance")
    finally:
        ws.close()
    return out


def cli_scenario(home: Path, tmp: Path, clock: Frozen) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def cli(*args: str, agent: str | None = "alice", input: str | None = None) -> str:
        clock.tick()
        argv = ["--home", str(home)] + (["--agent", agent] if agent else []) + ["memory", *args]
        r = run_cli(argv, input=input, env=CLI_ENV)
        res = {"argv": list(args), "agent": agent, "code": r.code, "out": r.out, "err": r.err}
        out.append(res)
        return res["out"]

    def added(*args: str, agent: str | None = "alice") -> str:
        return json.loads(cli("add", *args, "--json", agent=agent))["id"]

    seed = tmp / "seed.jsonl"
    seed.write_text(json.dumps({"id": "kn-5eed000000000001", "title": "Seeded", "category": "insight",
                                "content": "from a seed file", "tags": ["seed"], "created_at": "2025-12-01T00:00:00Z",
                                "project": "newproj"}) + "\n", encoding="utf-8")
    agents = tmp / "agents"
    agents.mkdir()
    (agents / "scout.md").write_text("---\nname: scout\ndescription: Looks around\ndomain: search\n---\n")
    a = added("--title", "CLI insight", "--category", "insight", "--content", "Caches need invalidation.",
              "--tags", "cache,design", "--resonance", "5", "--session-id", "ses-cli")
    cli("add", "--title", "CLI insight", "--category", "insight", "--content", "Caches need invalidation.",
        "--session-id", "ses-cli")
    b = added("--title", "Private CLI", "--category", "decision", "--content", "keep it", "--private")
    t = added("--type", "thread_opened", "--content", "Should we shard the cache?")
    cli("add", "--title", "x", "--category", "bogus", "--content", "y")
    cli("add-batch", input='{"title": "B1", "category": "insight", "content": "batch cache"}\nnot json\n')
    cli("show", a)
    cli("show", a, "--json")
    cli("list")
    cli("list", "--json", "--include-private")
    cli("search", "cache")
    cli("search", "cache", "--json", "--include-private")
    cli("search", "invalidation shard", "--hybrid", "--json")
    cli("recent", "--all-types", "--json")
    cli("update", a, "--title", "CLI insight v2", "--append-content", "And TTLs.")
    cli("update", a, "--json", "--add-tag", "ttl")
    cli("restore", a)
    cli("relationships", "add", "--from", a, "--to", t, "--type", "related")
    cli("relationships", "list", a)
    cli("relationships", "list", t, "--json")
    cli("reinforce", a, "--json")
    cli("reinforce", b)
    cli("stats")
    cli("stats", "--json")
    cli("health", "--json")
    cli("open-threads")
    cli("open-threads", "--json")
    cli("agents", "add", "helper", "--description", "Helps", "--domain", "ops")
    cli("agents", "list", "--json")
    cli("agents", "show", "helper")
    cli("seed", "agents", "--path", str(agents))
    cli("projects", "add", "--id", "proj1", "--name", "Project One")
    cli("projects", "list")
    cli("categories", "add", "golden", "Golden things")
    cli("categories", "list", "--json")
    cli("categories", "remove", "golden")
    cli("applicability", "add", "--id", "backend", "--description", "Server side")
    cli("applicability", "list")
    cli("tags", "list")
    cli("sessions", "create", "--id", "ses-made", "--session-type", "manual")
    cli("sessions", "close", "--id", "ses-made")
    cli("sessions", "list", "--json")
    cli("for-session", "ses-cli", "--json")
    cli("fact-session", a, "--json")
    cli("seed", "knowledge", str(seed))
    cli("export")
    cli("delete", b)
    cli("restore", b, "--json")
    cli("wake", "--json")
    cli("wake-fetch", "--json")
    cli("wake-log", "report")
    clock.tick(days=30)
    cli("list", "--sort", "resonance")
    cli("export", agent=None)
    cli("growth")  # appended after the refactor, once growth read the frozen clock
    cli("growth", "--json")
    return out


def test_memory_outputs_are_unchanged(tmp_path: Path, frozen: Frozen, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # `memory export` writes into the working directory
    tmp = str(tmp_path)
    got = {"tools": _scrub(tool_scenario(tmp_path / "tool-home", frozen), tmp),
           "cli": _scrub(cli_scenario(tmp_path / "cli-home", tmp_path, frozen), tmp)}
    text = json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if os.environ.get("M1ND_UPDATE_GOLDEN") == "1" or not GOLDEN.exists():
        GOLDEN.write_text(text, encoding="utf-8")
        if os.environ.get("M1ND_UPDATE_GOLDEN") != "1":
            pytest.fail(f"{GOLDEN.name} did not exist; written now — review and commit it")
        return
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for face in ("tools", "cli"):
        assert len(got[face]) == len(want[face]), face
        for n, (g, w) in enumerate(zip(got[face], want[face], strict=True)):
            assert g == w, f"{face} step {n}"
    assert text == GOLDEN.read_text(encoding="utf-8")
