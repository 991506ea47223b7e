"""End to end on real code the project did not write: the interpreter's standard library.

Measures (issue 2 targets on this 2-core machine): ingest of the stdlib (< 15 s), incremental re-ingest of the
unchanged tree, graph load at start-up from the cache (< 300 ms) and from rows, `activate` latency (p50 < 10 ms),
and the peak memory of a fresh ingest (< 400 MB, measured in a subprocess).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpus import STDLIB, STDLIB_EXCLUDE, bench_activate, workspace
from m1nd.fork_safety import fork_is_safe
from m1nd.tools.registry import call_tool

QUERIES = ["parse json string", "smtp send mail", "http client request", "event loop run until complete",
           "thread pool executor", "temporary directory", "url quote unquote", "logging rotating file handler",
           "argument parser add argument", "zip file extract", "csv dialect reader", "base64 encode"]


def _ingest(ws, path: Path) -> dict:
    r = call_tool(ws, "ingest", {"agent_id": "bench", "path": str(path), "exclude": STDLIB_EXCLUDE})
    assert not r.is_error, r.structured
    return r.structured


@pytest.fixture(scope="module")
def stdlib_ws(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    ws = workspace(home, STDLIB)
    report = _ingest(ws, STDLIB)
    assert report["files_scanned"] > 1500 and report["nodes"]["total"] > 20000
    yield ws, home
    ws.close()


def test_ingest_stdlib(benchmark, tmp_path) -> None:
    ws = workspace(tmp_path / "home", STDLIB)
    report = benchmark.pedantic(_ingest, args=(ws, STDLIB), rounds=1, iterations=1)
    benchmark.extra_info.update({k: report[k] for k in ("files_scanned", "files_parsed", "unresolved_refs")})
    benchmark.extra_info["nodes"] = report["nodes"]["total"]
    benchmark.extra_info["edges"] = report["edges"]["total"]
    assert report["skipped"]["parse_error"] <= report["files_scanned"] * 0.01
    ws.close()


def test_reingest_unchanged_is_a_no_op(benchmark, stdlib_ws) -> None:
    ws, _ = stdlib_ws
    gen = ws.graph.store.generations()[0]
    report = benchmark.pedantic(_ingest, args=(ws, STDLIB), rounds=1, iterations=1)
    assert report["changed"] is False and report["files_parsed"] == 0
    assert ws.graph.store.generations()[0] == gen


def test_graph_load_from_cache(benchmark, stdlib_ws) -> None:
    from m1nd.codegraph.service import CodeGraph

    ws, _ = stdlib_ws
    settings = ws.settings

    def load() -> int:
        cg = CodeGraph(settings)
        n = cg.graph().n
        cg.store.close()
        return n

    assert benchmark(load) > 20000


def test_graph_load_from_rows(benchmark, stdlib_ws, tmp_path) -> None:
    from m1nd.codegraph.service import CodeGraph

    ws, _ = stdlib_ws
    settings = ws.settings

    def load() -> int:
        for p in settings.workspace_dir.glob("graph.cache-*.bin"):
            p.unlink()
        cg = CodeGraph(settings)
        n = cg.graph().n
        cg.store.close()
        return n

    assert benchmark.pedantic(load, rounds=2, iterations=1) > 20000


def _text_indexes(graph_db: str, side_by_side: bool) -> tuple[bool, int, int]:
    """In a pool process (one thread, as the cache child): the node table read and the two text indexes built."""
    from m1nd.codegraph import text_indexes
    from m1nd.graph.lexicon import TermIndex, node_terms_from_blobs
    from m1nd.graph.nodes import NodeTable
    from m1nd.store.graph_repo import GraphStore

    store = GraphStore(graph_db)
    try:
        cols, _ = store.load_columns()
        nodes = NodeTable.from_columns(cols)
        del cols
        trigram, lexicon = text_indexes.build(
            nodes, lambda: TermIndex.build(nodes, node_terms_from_blobs(nodes, store.extract_terms())),
            side_by_side=side_by_side)
    finally:
        store.close()
    return fork_is_safe(), lexicon.bodies, len(trigram.codes)


@pytest.mark.parametrize("side_by_side", [False, True], ids=["one-after-the-other", "side-by-side"])
def test_text_indexes_build(benchmark, stdlib_ws, side_by_side: bool) -> None:
    """The new generation's two text indexes as the cache child builds them after an ingest (in a one-thread
    process, where it may fork): the trigram index in a fork beside the lexical one, or one after the other (what
    every other process does). Each round also reads the node table (~0.6 s), the same for both."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    ws, _ = stdlib_ws
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        def build() -> tuple[bool, int, int]:
            return pool.submit(_text_indexes, str(ws.settings.graph_db), side_by_side).result()

        could_fork, bodies, codes = benchmark.pedantic(build, rounds=2, iterations=1, warmup_rounds=1)
    assert could_fork and bodies > 20000 and codes > 5000


def _text_indexes_ahead(graph_db: str) -> tuple[bool, int, int]:
    """In a pool process (one thread, as the cache child): the two text indexes built from the node rows and term
    blobs as the ingest child sends them ahead of its write (rows in write order, not yet in ext_id order)."""
    from m1nd.codegraph import text_indexes
    from m1nd.store.graph_repo import NODE_COLUMNS, GraphStore

    store = GraphStore(graph_db)
    try:
        rows = store.db.all(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes ORDER BY id")
        terms = store.db.all("SELECT root_id, relpath, terms_blob FROM files")
    finally:
        store.close()
    pre = text_indexes.prebuild(rows, terms)
    return fork_is_safe(), pre.lexicon.bodies, len(pre.trigram.codes)


def test_text_indexes_built_ahead(benchmark, stdlib_ws) -> None:
    """The cache child's build during the ingest child's write (m1nd.codegraph.text_indexes.prebuild): rows put in
    ext_id order and into columns, the node table, then the two indexes side by side. Each round also reads the
    rows and term blobs from graph.db (the real child receives them through a pipe)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    ws, _ = stdlib_ws
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        def build() -> tuple[bool, int, int]:
            return pool.submit(_text_indexes_ahead, str(ws.settings.graph_db)).result()

        could_fork, bodies, codes = benchmark.pedantic(build, rounds=2, iterations=1, warmup_rounds=1)
    assert could_fork and bodies > 20000 and codes > 5000


@pytest.mark.parametrize("new_words", [False, True], ids=["repeated-words", "new-words"])
def test_activate_latency(benchmark, stdlib_ws, new_words: bool) -> None:
    ws, _ = stdlib_ws
    assert bench_activate(benchmark, ws, QUERIES, new_words=new_words).activated


def test_peak_memory_of_ingest(tmp_path) -> None:
    """Fresh ingest of the stdlib in a subprocess; its peak RSS is the figure the issue asks for."""
    code = (
        "import json, resource, sys\n"
        "sys.path.insert(0, %r)\n"
        "from corpus import STDLIB, STDLIB_EXCLUDE, workspace\n"
        "from pathlib import Path\n"
        "from m1nd.tools.registry import call_tool\n"
        "ws = workspace(Path(%r), STDLIB)\n"
        "r = call_tool(ws, 'ingest', {'agent_id': 'b', 'path': str(STDLIB), 'exclude': STDLIB_EXCLUDE})\n"
        "assert not r.is_error, r.structured\n"
        "ws.close()\n"
        "print(json.dumps({'peak_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,\n"
        "                  'children_peak_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))\n"
    ) % (str(Path(__file__).parent), str(tmp_path / "home"))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    peak, children = got["peak_mb"], got["children_peak_mb"]
    print(f"\nstdlib ingest in a fresh process: {time.perf_counter() - t0:.1f} s wall, peak RSS {peak:.0f} MB "
          f"(largest child process {children:.0f} MB)")
    assert max(peak, children) < 2000  # the target is 400 MB; the README reports the measured figures
