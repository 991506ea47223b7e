"""A small hand-built graph (no ingest) for the graph layer's unit tests."""

from __future__ import annotations

import numpy as np
import pytest
from m1nd.graph.engine import Engine
from m1nd.graph.model import PAGERANK_MASK, Graph
from m1nd.graph.nodes import KIND_CODE, NodeTable
from m1nd.graph.schema import RELATION_CODES
from m1nd.graph.seeds import SeedIndex
from m1nd.graph.semantic import TrigramIndex

# (ext_id, label, kind, source_path, line_start, line_end, signature, doc, is_test)
NODES = [
    ("dir::.", ".", "dir", ".", 0, 0, "", "", False),
    ("dir::src", "src", "dir", "src", 0, 0, "", "", False),
    ("file::src/session_pool.py", "session_pool.py", "file", "src/session_pool.py", 1, 120, "", "", False),
    ("file::src/session_pool.py::class::SessionPool", "SessionPool", "class", "src/session_pool.py", 5, 100,
     "class SessionPool(Pool)", "A pool of database sessions.", False),
    ("file::src/session_pool.py::class::SessionPool::fn::acquire", "acquire", "fn", "src/session_pool.py", 10, 30,
     "def acquire(self, timeout=None) -> Session", "Take a session from the pool, waiting up to timeout.", False),
    ("file::src/session_pool.py::class::SessionPool::fn::release", "release", "fn", "src/session_pool.py", 31, 50,
     "def release(self, session)", "Return a session to the pool.", False),
    ("file::src/pool.py", "pool.py", "file", "src/pool.py", 1, 60, "", "", False),
    ("file::src/pool.py::class::Pool", "Pool", "class", "src/pool.py", 3, 60, "class Pool", "Generic pool.", False),
    ("file::src/db.py", "db.py", "file", "src/db.py", 1, 40, "", "", False),
    ("file::src/db.py::fn::connect", "connect", "fn", "src/db.py", 3, 20, "def connect(url)",
     "Open a database connection.", False),
    ("dir::tests", "tests", "dir", "tests", 0, 0, "", "", False),
    ("file::tests/test_session_pool.py", "test_session_pool.py", "file", "tests/test_session_pool.py", 1, 30, "",
     "", True),
    ("file::tests/test_session_pool.py::fn::test_acquire", "test_acquire", "fn", "tests/test_session_pool.py", 3,
     12, "def test_acquire()", "", True),
    ("file::src/render.py", "render.py", "file", "src/render.py", 1, 30, "", "", False),
    ("file::src/render.py::fn::render_page", "render_page", "fn", "src/render.py", 2, 30, "def render_page(tpl)",
     "Render an HTML page.", False),
]
E = [
    ("dir::.", "dir::src", "contains"), ("dir::.", "dir::tests", "contains"),
    ("dir::src", "file::src/session_pool.py", "contains"), ("dir::src", "file::src/pool.py", "contains"),
    ("dir::src", "file::src/db.py", "contains"), ("dir::src", "file::src/render.py", "contains"),
    ("dir::tests", "file::tests/test_session_pool.py", "contains"),
    ("file::src/session_pool.py", "file::src/session_pool.py::class::SessionPool", "contains"),
    ("file::src/session_pool.py::class::SessionPool", "file::src/session_pool.py::class::SessionPool::fn::acquire",
     "contains"),
    ("file::src/session_pool.py::class::SessionPool", "file::src/session_pool.py::class::SessionPool::fn::release",
     "contains"),
    ("file::src/pool.py", "file::src/pool.py::class::Pool", "contains"),
    ("file::src/db.py", "file::src/db.py::fn::connect", "contains"),
    ("file::src/render.py", "file::src/render.py::fn::render_page", "contains"),
    ("file::src/session_pool.py", "file::src/pool.py", "imports"),
    ("file::src/session_pool.py", "file::src/db.py", "imports"),
    ("file::src/session_pool.py::class::SessionPool", "file::src/pool.py::class::Pool", "inherits"),
    ("file::src/session_pool.py::class::SessionPool::fn::acquire", "file::src/db.py::fn::connect", "calls"),
    ("file::tests/test_session_pool.py", "file::src/session_pool.py", "tests"),
    ("file::tests/test_session_pool.py::fn::test_acquire",
     "file::src/session_pool.py::class::SessionPool::fn::acquire", "tests"),
    ("file::tests/test_session_pool.py", "file::src/session_pool.py", "imports"),
    ("file::src/db.py", "file::src/session_pool.py", "co_changes"),
]
W0 = {"contains": 0.8, "imports": 0.6, "calls": 0.5, "inherits": 0.7, "tests": 0.5, "co_changes": 0.5}


def build_small_graph(has_git: bool = True) -> Graph:
    rows = sorted(NODES, key=lambda r: r[0])
    n = len(rows)
    cols = {
        "ext_id": [r[0] for r in rows], "label": [r[1] for r in rows], "qname": [r[1] for r in rows],
        "kind": [KIND_CODE[r[2]] for r in rows], "lang": ["python"] * n, "root_id": [1] * n,
        "source_path": [r[3] for r in rows], "line_start": [r[4] for r in rows], "line_end": [r[5] for r in rows],
        "signature": [r[6] for r in rows], "doc": [r[7] for r in rows], "is_test": [r[8] for r in rows],
        "content_hash": [""] * n,
        "last_change_ms": [1_700_000_000_000 - (i % 5) * 86_400_000 for i in range(n)],
        "churn": [0.1 * (i % 3) for i in range(n)], "commit_count": [i % 4 for i in range(n)],
    }
    nodes = NodeTable.from_columns(cols)
    idx = nodes.index
    src = np.array([idx[a] for a, _, _ in E], np.int32)
    dst = np.array([idx[b] for _, b, _ in E], np.int32)
    rel = np.array([RELATION_CODES[r] for _, _, r in E], np.uint8)
    w0 = np.array([W0[r] for _, _, r in E], np.float32)
    engine = Engine.from_edges(n, src, dst, w0.copy(), w0, rel)
    nodes.pagerank = engine.pagerank(mask=PAGERANK_MASK)
    return Graph(nodes, engine, SeedIndex.build(nodes), TrigramIndex.build(nodes), 1, has_git)


@pytest.fixture
def small_graph() -> Graph:
    return build_small_graph()


@pytest.fixture
def small_graph_no_git() -> Graph:
    return build_small_graph(has_git=False)
