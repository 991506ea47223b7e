"""``m1nd learn``, ``m1nd drift``, ``m1nd trail …`` and ``m1nd weights …`` (mcp.md §10, learning.md §12)."""

from __future__ import annotations

import json
import re

import pytest
from m1nd.cli.app import run

from .support import call, open_workspace

CACHE = "file::pkg/cache.py::class::Cache"
POOL = "file::pkg/pool.py"


@pytest.fixture
def m1nd(home_repo, capsys, learning_store):
    home, repo = home_repo
    url = ["--memory-url", learning_store] if learning_store else []  # trails and weights on the server

    def invoke(*argv: str) -> tuple[int, str, str]:
        code = run(["--home", str(home), "--workspace", str(repo), "--agent", "cli-agent", *url, *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return invoke


def test_learn_text_and_json(m1nd) -> None:
    code, out, err = m1nd("learn", "login token", "correct", CACHE, "--strength", "0.4")
    assert code == 0, err
    assert re.fullmatch(r"Adjusted \d+ edges on 1 nodes \(rate 0\.4, seeds recomputed\)\n", out)
    code, out, _ = m1nd("learn", "login token", "wrong", CACHE, "--json")
    r = json.loads(out)
    assert code == 0 and r["feedback"] == "wrong" and "response_chars" in r
    code, out, err = m1nd("learn", "login token", "maybe", CACHE)
    assert code == 1 and out == ""
    assert err.startswith('Error (invalid_argument): feedback must be "correct", "wrong" or "partial" (got "maybe")')


def test_drift_text(m1nd, home_repo, learning_store) -> None:
    ws = open_workspace(*home_repo, transport="stdio", memory_url=learning_store)
    ws.on_server_start()
    ws.close()
    m1nd("learn", "login token", "correct", CACHE)
    code, out, err = m1nd("drift")
    assert code == 0, err
    lines = out.splitlines()
    assert re.fullmatch(r"Since the server_start baseline of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: nodes \+0, edges \+0",
                        lines[0])
    assert lines[1:] and all(re.fullmatch(r"[+-]\d\.\d{3}  .+ -> .+", x) for x in lines[1:])
    code, out, _ = m1nd("drift", "--no-include-weight-drift", "--json")
    assert "top_weight_drifts" not in json.loads(out)


def test_trail_commands(m1nd, home_repo, learning_store) -> None:
    code, out, _ = m1nd("trail", "list")
    assert (code, out) == (0, "No trails\n")
    ws = open_workspace(*home_repo, memory_url=learning_store)
    a = call(ws, "trail_save", "alice", label="pool side", hypotheses=[
        {"statement": "The pool leaks", "confidence": 0.75, "supporting_nodes": [POOL]}],
        open_questions=["Who releases?"], visited_nodes=[{"node_external_id": POOL}])["trail_id"]
    b = call(ws, "trail_save", "bob", label="cache side", visited_nodes=[{"node_external_id": CACHE}])["trail_id"]
    ws.close()
    code, out, _ = m1nd("trail", "list")
    assert out.splitlines() == [f"{b}  saved    cache side  (1 nodes)", f"{a}  saved    pool side  (1 nodes)"]
    code, out, _ = m1nd("trail", "list", "--filter-agent-id", "alice", "--json")
    assert json.loads(out)["total_count"] == 1
    code, out, _ = m1nd("trail", "show", a)
    assert out.splitlines() == [f"{a}  saved  pool side",
                                "pool side: 1 nodes, 1 hypotheses, 0 conclusions, 1 open questions — The pool leaks",
                                "Hypotheses:", "  [0.75] The pool leaks", "Open questions:", "  Who releases?",
                                "Nodes: 1"]
    code, out, _ = m1nd("trail", "show", a, "--json")
    assert json.loads(out)["visited_nodes"][0]["node_external_id"] == POOL
    code, out, err = m1nd("trail", "show", "trail_x_001_abcdef")
    assert (code, out, err) == (1, "", "Error: no trail 'trail_x_001_abcdef'\n")
    code, out, _ = m1nd("trail", "resume", a)
    assert out == f"Resumed {a}: 1 nodes reactivated, 0 hypotheses downgraded, 0 generations behind\n"
    code, out, _ = m1nd("trail", "merge", a, b, "--label", "both")
    m = re.fullmatch(r"Merged into (trail_cliagent_001_[0-9a-f]{6}): 2 nodes, 1 hypotheses, 0 conflicts, "
                     r"(\d+) connections\n", out)
    assert m, out
    code, out, _ = m1nd("trail", "archive", m.group(1))
    assert (code, out) == (0, f"Archived trail {m.group(1)}\n")
    code, out, _ = m1nd("trail", "list", "--filter-status", "merged")
    assert len(out.splitlines()) == 2
    code, out, err = m1nd("trail", "resume", "bogus")
    assert code == 1 and "is not a trail id" in err


def test_weights_stats_and_reset(m1nd) -> None:
    m1nd("learn", "login token", "correct", CACHE, "--strength", "0.5")
    code, out, _ = m1nd("weights", "stats", "--json")
    s = json.loads(out)
    assert s["strengthened"] > 0 and s["top"] and set(s["top"][0]) == {"edge", "source", "target", "relation", "w0",
                                                                        "w", "delta"}
    code, out, _ = m1nd("weights", "stats")
    lines = out.splitlines()
    assert lines[0] == f"edges: {s['edges_total']}" and lines[1] == f"strengthened: {s['strengthened']}"
    assert re.fullmatch(r"\+\d\.\d{3}  .+ -> .+", lines[-1])
    code, out, _ = m1nd("weights", "reset", "--relation", "contains")
    assert out.startswith("Would reset ") and out.rstrip().endswith("pass --yes to apply")
    assert json.loads(m1nd("weights", "stats", "--json")[1])["strengthened"] == s["strengthened"]
    code, out, _ = m1nd("weights", "reset", "--yes")
    assert code == 0 and out.startswith(f"Reset {s['strengthened']} learned edges to w0")
    s2 = json.loads(m1nd("weights", "stats", "--json")[1])
    assert s2["strengthened"] == 0 and s2["top"] == []
    code, _, err = m1nd("weights", "reset", "--relation", "nope")
    assert code == 1 and "unknown relation 'nope'" in err


def test_drift_from_one_shot_cli_calls_uses_the_graph_before_the_latest_ingest(tmp_path, capsys) -> None:
    repo = tmp_path / "r"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("def one():\n    return 1\n")

    def m1nd(*argv: str) -> tuple[int, str, str]:
        code = run(["--home", str(tmp_path / "home"), "--workspace", str(repo), "--agent", "cli-agent", *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert m1nd("ingest", str(repo), "--embed", "skip")[0] == 0
    code, _, err = m1nd("drift")  # the first ingest found an empty graph: no baseline to drift from
    assert code == 1 and "no baseline yet" in err
    assert m1nd("ingest", str(repo), "--embed", "skip")[0] == 0  # unchanged: records nothing
    code, _, err = m1nd("drift")
    assert code == 1 and "no baseline yet" in err
    (repo / "pkg" / "a.py").write_text("def one():\n    return 1\n\n\ndef two():\n    return 2\n")
    assert m1nd("ingest", str(repo), "--embed", "skip")[0] == 0
    code, out, err = m1nd("drift", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["baseline"]["kind"] == "ingest" and "before the latest ingest" in r["baseline_note"]
    assert r["new_nodes_total"] == 1 and r["new_nodes"][0].endswith("two")
