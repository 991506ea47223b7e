"""Argument validation, schema generation and response shaping of the tool registry."""

from __future__ import annotations

import json

import pytest

from m1nd.errors import InvalidInputError
from m1nd.tools.registry import Param, Tool, call_tool, load_all, validate_arguments
from m1nd.tools.shaping import shape


def _tool(**kw) -> Tool:
    return Tool(name="t", title="T", description="d", group="g", handler=lambda ws, a: {}, **kw)


TOOL = _tool(params=(Param("query", "string", required=True, min_length=1, max_length=10),
                     Param("top_k", "integer", default=20, minimum=1, maximum=200),
                     Param("mode", "string", default="a", enum=("a", "b")),
                     Param("names", "string[]", max_items=2),
                     Param("ratio", "number", minimum=0, maximum=1)))


def test_defaults_filled() -> None:
    out = validate_arguments(TOOL, {"agent_id": "me", "query": "x"})
    assert out == {"agent_id": "me", "query": "x", "top_k": 20, "mode": "a", "max_output_chars": 8000}


@pytest.mark.parametrize(("args", "message"), [
    ({"agent_id": "me"}, "missing required argument 'query'"),
    ({"agent_id": "me", "query": "x", "top_k": 500}, "argument 'top_k' must be an integer between 1 and 200 (got 500)"),
    ({"agent_id": "me", "query": "x", "topk": 5}, "unknown argument 'topk' (did you mean 'top_k'?)"),
    ({"agent_id": "me", "query": "x", "top_k": "5"}, "argument 'top_k' must be an integer"),
    ({"agent_id": "me", "query": "x", "top_k": True}, "argument 'top_k' must be an integer"),
    ({"agent_id": "me", "query": "x" * 11}, "argument 'query' is too long: 11 characters (at most 10)"),
    ({"agent_id": "me", "query": "x", "mode": "c"}, "must be one of a, b"),
    ({"agent_id": "me", "query": "x", "names": ["a", 1]}, "argument 'names' item 1 must be a string"),
    ({"agent_id": "me", "query": "x", "names": ["a", "b", "c"]}, "has 3 items (at most 2)"),
    ({"agent_id": "bad id!", "query": "x"}, "argument 'agent_id' must be a string matching"),
    ({"agent_id": "me", "query": "x", "ratio": float("nan")}, "argument 'ratio' must be a number"),
], ids=["no-query", "range", "unknown-key", "string-for-int", "bool-for-int", "too-long", "enum",
        "item-type", "too-many", "agent-pattern", "nan"])
def test_bad_arguments_name_the_problem(args, message) -> None:
    with pytest.raises(InvalidInputError) as e:
        validate_arguments(TOOL, args)
    assert message in str(e.value)


def test_input_schema_is_strict() -> None:
    s = TOOL.input_schema()
    assert s["additionalProperties"] is False
    assert s["required"] == ["query"]  # agent_id is optional: the connection's agent acts without it
    assert s["properties"]["top_k"] == {"type": "integer", "minimum": 1, "maximum": 200, "default": 20}


def test_agent_id_comes_from_the_caller_when_absent() -> None:
    seen: list[str] = []
    tool = Tool(name="echo_agent", title="Echo", description="d", group="g", params=(),
                handler=lambda ws, a: seen.append(a["agent_id"]) or {})
    from m1nd.tools import registry

    registry.TOOLS["echo_agent"] = tool
    try:
        assert call_tool(None, "echo_agent", {}, default_agent="cursor@1a2b3c4d").is_error is False
        assert call_tool(None, "echo_agent", {"agent_id": "alice"}, default_agent="cursor@1a2b3c4d").is_error is False
        missing = call_tool(None, "echo_agent", {})
    finally:
        del registry.TOOLS["echo_agent"]
    assert seen == ["cursor@1a2b3c4d", "alice"]
    assert missing.is_error and "missing argument 'agent_id'" in missing.text()
    assert "--agent" in missing.text()


def test_every_registered_tool_has_a_valid_listing() -> None:
    tools = load_all()
    assert {"ingest", "activate", "why", "impact", "health"} <= set(tools)
    for t in tools.values():
        listing = t.listing()
        assert 0 < len(listing["description"]) <= 600
        assert "response_chars" in listing["outputSchema"]["required"]
        json.dumps(listing)


def test_shaping_cuts_the_longest_list_and_reports_it() -> None:
    tool = _tool(params=(), shrinkable=("items",))
    result = {"items": [{"id": i, "text": "x" * 50} for i in range(200)], "count": 200}
    out = shape(tool, result, 2000)
    text = json.dumps(out, separators=(",", ":"), ensure_ascii=False)
    assert len(text) <= 2000
    assert out["response_chars"] == len(text)
    assert out["truncated"] is True
    assert out["omitted"]["items"] == 200 - len(out["items"])
    assert out["items"][0]["id"] == 0 and out["count"] == 200


def test_shaping_refuses_when_the_skeleton_cannot_fit() -> None:
    tool = _tool(params=())
    with pytest.raises(InvalidInputError, match="too small"):
        shape(tool, {"blob": ["y" * 200] * 40}, 500)


def test_small_result_untouched() -> None:
    out = shape(_tool(params=()), {"a": 1}, 8000)
    assert out == {"a": 1, "response_chars": len('{"a":1,"response_chars":24}')}


# -- the boundary: integer range and Unicode for every tool (issue 14) ----------------------------------------------
HUGE = 2**63
LONE = "ab\udc80cd"


@pytest.mark.parametrize("bad", [HUGE, -(2**63) - 1, 10**30, LONE, {"k": [1, {"deep": HUGE}]}, ["x", LONE],
                                 {"\ud800": 1}],
                         ids=["2^63", "-2^63-1", "1e30", "lone-surrogate", "nested-int", "nested-str", "bad-key"])
def test_every_argument_of_every_tool_is_range_and_encoding_checked(bad) -> None:
    for tool in load_all().values():
        for p in tool.all_params:
            with pytest.raises(InvalidInputError) as e:
                validate_arguments(tool, {"agent_id": "me", p.name: bad})
            assert "out of range" in e.value.message or "not valid Unicode" in e.value.message, \
                (tool.name, p.name, e.value.message)


def test_integers_within_64_bits_pass() -> None:
    tool = _tool(params=(Param("n", "integer"), Param("blob", "object")))
    out = validate_arguments(tool, {"agent_id": "me", "n": 2**63 - 1, "blob": {"x": [-(2**63)]}})
    assert out["n"] == 2**63 - 1


def test_a_float_integer_past_64_bits_is_refused() -> None:
    tool = _tool(params=(Param("n", "integer"),))
    with pytest.raises(InvalidInputError, match="within 64 bits"):
        validate_arguments(tool, {"agent_id": "me", "n": 1e300})


@pytest.fixture
def live_ws(tmp_path, monkeypatch):
    from m1nd.config import Settings
    from m1nd.workspace import Workspace

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    ws = Workspace(Settings(home=tmp_path / "home", workspace_key=repo, busy_timeout_ms=10000), transport="cli")
    yield ws
    ws.close()


@pytest.mark.parametrize(("tool", "args"), [
    ("memory_sessions", {"action": "close", "session_id": LONE}),
    ("memory_sessions", {"action": "create", "session_id": "s" + LONE}),
    ("perspective_start", {"query": LONE}),
    ("memory_search", {"query": LONE, "mode": "semantic"}),
    ("memory_search", {"query": "x", "min_resonance": HUGE}),
    ("memory_list", {"min_resonance": HUGE}),
    ("memory_add", {"category": "insight", "title": "t", "content": "c", "wake_order": HUGE}),
    ("memory_add", {"category": "insight", "title": LONE, "content": "c"}),
    ("trail_save", {"label": LONE}),
    ("activate", {"query": LONE}),
])
def test_real_tools_answer_invalid_argument_never_internal(live_ws, tool: str, args: dict) -> None:
    from m1nd.tools.registry import call_tool

    if tool not in load_all() or any(p not in {q.name for q in load_all()[tool].all_params} for p in args):
        pytest.fail(f"{tool} does not take {sorted(args)}: update this table")
    res = call_tool(live_ws, tool, {"agent_id": "me", **args})
    assert res.is_error, res.structured
    assert res.structured["error"]["code"] == "invalid_argument", res.structured
