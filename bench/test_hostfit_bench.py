"""Pictures and stack traces on a real corpus (issue 15 items 6 and 7).

1. ``trace``: a 12-frame Python traceback whose frames point at functions of different files of the corpus (printed
   with an absolute install prefix, as a real interpreter does), plus two library frames: parse, map, spread, rank.
2. ``diagram``: the depth-2 neighbourhood of the file with the most definitions, up to 200 nodes, as Mermaid.

Corpus: the stdlib's ``json``, ``email``, ``http`` and ``asyncio`` packages copied into a temporary directory; with
``M1ND_BENCH_FULL=1`` the whole standard library.

Run with timing:            pytest bench/test_hostfit_bench.py -s
As correctness checks (CI): pytest bench/test_hostfit_bench.py --benchmark-disable
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corpus import ingest_stdlib
from m1nd.graph.nodes import KINDS
from m1nd.tools.registry import call_tool

FRAMES = 12


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Any]:
    c = ingest_stdlib(tmp_path_factory, "hostfit-bench")
    yield {"ws": c.ws, "nodes": c.nodes}
    c.ws.close()


def _traceback(ws: Any) -> tuple[str, list[str]]:
    """Frames at the first line inside the body of functions of FRAMES different files (outermost first)."""
    g = ws.graph.graph()
    t = g.nodes
    fns = np.nonzero((t.kind == KINDS["fn"]) & (t.line_end > t.line_start + 1))[0]
    picked, files = [], set()
    for i in fns.tolist():
        if t.source_path[i] not in files and not t.is_test[i]:
            files.add(t.source_path[i])
            picked.append(i)
        if len(picked) == FRAMES:
            break
    lines = ["Traceback (most recent call last):"]
    for i in picked:
        lines.append(f'  File "/usr/lib/python3.12/{t.source_path[i]}", line {int(t.line_start[i]) + 1}, '
                     f"in {t.label[i]}")
        lines.append("    something()")
    lines.insert(3, '  File "/opt/venv/lib/python3.12/site-packages/attr/_make.py", line 10, in wrapper')
    lines.insert(5, '  File "<frozen importlib._bootstrap>", line 1, in _call_with_frames_removed')
    lines.append("RuntimeError: boom")
    return "\n".join(lines) + "\n", [t.ext_id[i] for i in picked]


def test_trace_on_a_real_corpus(benchmark, corpus) -> None:
    ws = corpus["ws"]
    text, expected = _traceback(ws)
    res = benchmark(call_tool, ws, "trace", {"agent_id": "bench", "trace": text, "top_k": 20,
                                             "max_output_chars": 100000})
    assert not res.is_error, res.structured
    r = res.structured
    assert [m["node_id"] for m in r["mapped"]] == expected[::-1]  # innermost first
    assert len(r["unmapped"]) == 2
    assert r["suspects"][0]["node_id"] == expected[-1]  # the innermost frame
    assert any(not s["in_trace"] for s in r["suspects"])  # the spread reached code outside the trace
    benchmark.extra_info.update({"nodes": corpus["nodes"], "frames": FRAMES + 2, "suspects": len(r["suspects"])})


def test_diagram_on_a_real_corpus(benchmark, corpus) -> None:
    ws = corpus["ws"]
    g = ws.graph.graph()
    t = g.nodes
    members = np.bincount(t.file_of[t.file_of >= 0], minlength=t.n)
    hub = t.ext_id[int(np.argmax(members))]
    res = benchmark(call_tool, ws, "diagram", {"agent_id": "bench", "node_id": hub, "depth": 2, "max_nodes": 200,
                                               "max_output_chars": 100000})
    assert not res.is_error, res.structured
    r = res.structured
    assert 2 <= r["nodes"] <= 200 and r["edges"] >= r["nodes"] - 1
    assert r["diagram"].count("\n    n") >= r["nodes"]
    benchmark.extra_info.update({"nodes": corpus["nodes"], "drawn_nodes": r["nodes"], "drawn_edges": r["edges"]})
