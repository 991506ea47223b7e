"""The wake tools through the in-process registry (the path ``m1nd call`` and the server use): the same ritual as
the CLI, ritual error codes as tool errors, budgets."""

from __future__ import annotations

import pytest
from m1nd.tools.registry import load_all


@pytest.fixture
def tools(memory_tools, monkeypatch: pytest.MonkeyPatch):
    """Tool calls as ``alice`` on a workspace whose memory is on each store (root conftest), with the default
    wake chunk size."""
    monkeypatch.delenv("M1ND_WAKE_CHUNK_BYTES", raising=False)
    return memory_tools


def test_catalogue() -> None:
    tools = load_all()
    wake = {n: t for n, t in tools.items() if t.group == "wake"}
    assert set(wake) == {"wake", "wake_begin", "wake_respond", "wake_fetch"}
    assert {n for n, t in wake.items() if t.read_only} == {"wake_fetch"}
    assert tools["wake_respond"].input_schema()["required"] == ["guess", "bloom_id", "session"]  # agent_id: optional
    props = tools["wake_begin"].input_schema()["properties"]
    assert props["limit"] == {"type": "integer", "description": "Places in the wake set.", "minimum": 1,
                              "maximum": 200, "default": 20}
    assert props["resonance_basis"]["default"] == "raw" and props["force_wake"]["default"] is False
    assert {"wake", "model", "days", "min_resonance", "include_excluded", "activate"} <= set(props)
    assert tools["wake_fetch"].input_schema()["properties"]["resonance_basis"]["default"] == "decayed"
    assert all(0 < len(t.description) <= 600 for t in wake.values())


def test_ritual_over_mcp(tools, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("M1ND_WAKE_CHUNK_BYTES", "40")
    a = tools.ok("memory_add", title="Who I am", category="bloom", resonance=9, wake_phrases=["memory builder"],
             content="I build memory engines.\n## Tests\nI like tests a lot.")["id"]
    b = tools.ok("memory_add", title="Mine", category="bloom", resonance=8, private=True, content="Private.")["id"]
    tools.ok("memory_add", title="Bob's", category="bloom", resonance=10, private=True, content="x", agent_id="bob")
    casc = tools.ok("wake")
    assert [e["id"] for e in casc["layers"]["core"]] == [a, b] and casc["total"] == 2
    begun = tools.ok("wake_begin", wake=1, model="claude-x")
    assert begun["status"] == "started" and begun["progress"] == {"current": 0, "total": 3}
    assert begun["prompt"]["title"] == "Who I am (Part 1/2)"
    tok = begun["session"]
    # refusals name their code and write nothing
    assert tools.err("wake_respond", guess="x", bloom_id=a, session=tok, agent_id="bob")["code"] == "wrong_agent"
    assert tools.err("wake_respond", guess="x" * 2001, bloom_id=a, session=tok)["code"] == "invalid_guess"
    e = tools.err("wake_respond", guess="x", bloom_id=b, session=tok)
    assert e["code"] == "invalid_bloom_id" and e["details"]["expected_id"] == a
    assert tools.err("wake_respond", guess="x", bloom_id=a, session=tok[:-3] + "abc")["code"] == "invalid_token"
    s1 = tools.ok("wake_respond", guess="memory builder", bloom_id=a, session=tok)
    assert s1["match"] == {"kind": "exact", "phrase_index": 0} and s1["bloom"]["content"] == "I build memory engines.\n"
    assert s1["model"] == "claude-x" and s1["next"]["phrase_source"] == "derived"
    again = tools.ok("wake_respond", guess="other", bloom_id=a, session=tok)
    assert again["replayed"] is True and again["session"] == s1["session"]
    s2 = tools.ok("wake_respond", guess="tests", bloom_id=a, session=s1["session"])
    e = tools.err("wake_respond", guess="x", bloom_id=a, session=tok)
    assert e["code"] == "token_out_of_sync" and e["details"]["last_valid_token"] == s1["session"]
    s3 = tools.ok("wake_respond", guess="Private", bloom_id=b, session=s2["session"])
    assert s3["summary"]["chunks"] == 3 and s3["next"] is None
    assert s3["summary"]["buckets"]["unhinted"] == {"authored": 1, "derived": 1, "auto": 1, "unphrased": 0}
    assert tools.err("wake_respond", guess="x", bloom_id=b, session=s3["session"])["code"] == "invalid_token"
    # the same number again is taken
    assert tools.err("wake_begin", wake=1)["code"] == "wake_taken"
    assert tools.ok("wake_begin", wake=1, force_wake=True)["status"] == "started"
    facts = tools.ok("wake_fetch", exclude_tags=["nothing/"])["facts"]
    assert {f["id"] for f in facts} == {a, b}


def test_long_chunks_follow_the_budget(tools) -> None:
    body = "word " * 4000  # 20,000 bytes: one chunk at the default 28,000
    a = tools.ok("memory_add", title="Long", category="bloom", resonance=9, content=body)["id"]
    begun = tools.ok("wake_begin")
    cut = tools.ok("wake_respond", guess="long", bloom_id=a, session=begun["session"])
    assert cut["truncated"] is True and len(cut["bloom"]["content"]) <= 300
    assert cut["session"].count(".") == 2  # the token is never cut
    begun = tools.ok("wake_begin")
    whole = tools.ok("wake_respond", guess="long", bloom_id=a, session=begun["session"], max_output_chars=100000)
    assert whole["bloom"]["content"] == body and "truncated" not in whole


def test_wake_tool_budget_and_empty(tools) -> None:
    assert tools.ok("wake")["total"] == 0
    assert tools.ok("wake_begin")["status"] == "empty"
    for i in range(40):
        tools.ok("memory_add", title=f"Bloom {i}", category="bloom", resonance=9, content="x " * 400)
    out = tools.ok("wake", limit=40)
    assert out["total"] == 40 and out.get("truncated") is True and out["omitted"]


def test_cascade_and_fetch_answer_dataclasses(tools, memory_ws) -> None:
    """The service answers WakeSet and WakeFacts; their ``to_dict()`` is what the tools send."""
    from m1nd.memory import wake

    a = tools.ok("memory_add", title="Who I am", category="bloom", resonance=9, content="I build.")["id"]
    typed = wake.cascade(memory_ws.memory, "alice", activate=False)
    assert isinstance(typed, wake.WakeSet) and [e.id for e in typed.layers["core"]] == [a] and typed.total == 1
    wire = tools.ok("wake", activate=False)
    assert {k: v for k, v in wire.items() if k != "response_chars"} == typed.to_dict()
    facts = wake.fetch(memory_ws.memory, "alice")
    assert isinstance(facts, wake.WakeFacts) and facts.facts[0] == wake.WakeFact(
        id=a, date=facts.facts[0].date, label="bloom", resonance=9, content="I build.")
    assert tools.ok("wake_fetch")["facts"] == facts.to_dict()["facts"]
