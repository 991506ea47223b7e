"""Ingest pipeline benchmark on a real corpus: walk + read + extract + git + resolve over the Python stdlib.

One round, one core (``workers=1``): the figure to compare with the "stdlib extracts in well under 10 s on one
core" target. With ``--benchmark-disable`` the same run is a correctness check (sanity assertions below).
Set ``M1ND_BENCH_STDLIB_SUBSET=1`` to restrict the corpus to a few packages (quick smoke run).

Run: ``pytest bench/test_ingest_extract.py --benchmark-only -s`` (prints the per-phase figures).
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest
from m1nd.ingest.pipeline import build_graph_parts

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SUBSET_EXCLUDE = [
    "site-packages/",
    "test/",
    "idlelib/",
    "tkinter/",
    "lib2to3/",
    "distutils/",
    "ensurepip/",
    "turtledemo/",
    "unittest/test/",
    "ctypes/test/",
    "sqlite3/test/",
]


@pytest.mark.slow
def test_stdlib_walk_extract_resolve(benchmark, capsys) -> None:
    if not (STDLIB / "os.py").is_file():
        pytest.skip("stdlib sources not available")
    subset = os.environ.get("M1ND_BENCH_STDLIB_SUBSET") == "1"
    exclude = SUBSET_EXCLUDE if subset else ["site-packages/"]
    out: dict = {}

    def run() -> None:
        out["result"] = build_graph_parts(STDLIB, exclude=exclude, workers=1)

    benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    parts, _walk_result, _git, stats = out["result"]

    nodes = {n.ext_id: n for n in parts.nodes}
    assert stats["files"] > (300 if subset else 1500)
    assert "file::json/decoder.py::class::JSONDecoder" in nodes
    assert "file::os.py::fn::makedirs" in nodes
    assert stats["edges_by_relation"]["calls"] > 10_000
    assert stats["edges_by_relation"]["inherits"] > 1_000
    # a few deliberately broken Python test files (the stdlib's few C files parse with macro errors, as C does)
    assert len([p for p in stats["parse_errors"] if p.endswith(".py")]) <= 5
    ids = [n.ext_id for n in parts.nodes]
    assert ids == sorted(ids) and len(ids) == len(set(ids))

    secs = {k: round(v, 3) for k, v in stats["seconds"].items()}
    benchmark.extra_info.update(
        {
            "files": stats["files"],
            "nodes": stats["nodes"],
            "edges": stats["edges"],
            "edges_by_relation": stats["edges_by_relation"],
            "seconds": secs,
            "unresolved_refs": parts.unresolved_refs,
            "ambiguous_refs": parts.ambiguous_refs,
        }
    )
    with capsys.disabled():
        print(
            f"\nstdlib{' subset' if subset else ''}: {stats['files']} files, {stats['nodes']} nodes, "
            f"{stats['edges']} edges; seconds {secs}; unresolved {parts.unresolved_refs}, "
            f"ambiguous {parts.ambiguous_refs}\nedges by relation: {stats['edges_by_relation']}"
        )
