"""The knowledge memory on its two stores side by side (issue 18): add-batch of 10,000 entries, keyword search p50
and semantic search p50 on a large store, each benchmark run once on the ``memory.db`` file and once on a
PostgreSQL server (a throwaway one started by ``initdb``, :mod:`pg_cluster`) in the same session, grouped so the
report shows the pair together.

Sizes: add-batch is always 10,000 lines; the searched store holds 10,000 entries by default and the issue's
100,000 with ``M1ND_BENCH_PG_FULL=1`` (building 100k embedded entries twice takes several minutes on two cores).
With ``--benchmark-disable`` (CI) everything shrinks to a correctness pass. The corpus is the one of
:mod:`test_memory_bench` (Zipf vocabulary, sessions of 500, 10 % private); vectors come from the hashing embedder,
so semantic timings measure the stores and the usearch mirror, not a model.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

from m1nd.memory import embeddings as E
from m1nd.memory.semantic import vector_hook_for
from m1nd.memory.service import Filters, MemoryService
from test_memory_bench import Corpus

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
STORES = ["sqlite", "postgresql", "postgresql+pgvector"]


def _sizes(config: pytest.Config) -> dict[str, int]:
    if config.getoption("benchmark_disable", default=False):
        return {"batch": 300, "store": 1_000}
    return {"batch": 10_000, "store": 100_000 if os.environ.get("M1ND_BENCH_PG_FULL") == "1" else 10_000}


@pytest.fixture(scope="module")
def hashing_embedder():
    old = os.environ.get("M1ND_EMBEDDER")
    os.environ["M1ND_EMBEDDER"] = "hashing"
    E.reset_embedder()
    yield
    if old is None:
        os.environ.pop("M1ND_EMBEDDER", None)
    else:
        os.environ["M1ND_EMBEDDER"] = old
    E.reset_embedder()


@pytest.fixture(scope="module")
def pg_cluster(request):
    """The servers of the stores in use: Debian's PostgreSQL, and the pgserver wheel's (pgvector) when asked."""
    from pg_cluster import start_or_skip

    clusters: dict[str, object] = {}

    def get(store: str):
        if store not in clusters:
            clusters[store] = start_or_skip(pgvector=store.endswith("pgvector"))
        return clusters[store]

    yield get
    for c in clusters.values():
        c.close()


def _open(store: str, where: Path, cluster, name: str, *, vectors: bool) -> MemoryService:
    db = where / "memory.db"
    url = cluster(store).new_database(name) if store.startswith("postgresql") else None
    hook = vector_hook_for(db, url=url) if vectors else None
    return MemoryService(url or db, vector_hook=hook)


def _close(svc: MemoryService) -> None:
    if svc.vector_hook is not None:
        svc.vector_hook.close()
    svc.close()


@pytest.fixture(scope="module", params=STORES)
def searched_store(request, tmp_path_factory, pytestconfig, pg_cluster, hashing_embedder):
    store = request.param
    n = _sizes(pytestconfig)["store"]
    corpus = Corpus()
    where = tmp_path_factory.mktemp(f"pg-bench-{store.replace('+', '-')}")
    svc = _open(store, where, pg_cluster, "bench_search", vectors=True)
    for start in range(0, n, 5_000):
        res = svc.add_batch(corpus.lines(min(5_000, n - start), start), agent="bench", no_auto_anchor=True)
        assert not res["failed"], res["failed"][:3]
    assert svc.stats(agent="bench")["total"] == n
    yield store, svc, corpus
    _close(svc)


@pytest.mark.parametrize("store", STORES)
def test_add_batch_10k_both_stores(benchmark, store: str, tmp_path: Path, pytestconfig, pg_cluster) -> None:
    """``add-batch --no-embed`` of 10,000 lines into an empty memory, on each store."""
    n = _sizes(pytestconfig)["batch"]
    lines = Corpus().lines(n, start=2_000_000)
    counter = iter(range(1000))
    benchmark.group = "memory store: add-batch"

    def setup():
        k = next(counter)
        return (_open(store, tmp_path / f"b{k}", pg_cluster, f"bench_batch_{k}", vectors=False),), {}

    def run(svc: MemoryService) -> None:
        res = svc.add_batch(lines, agent="bench", no_embed=True)
        assert len(res["added"]) == n and not res["failed"]
        _close(svc)

    benchmark.pedantic(run, setup=setup, rounds=2, iterations=1)
    benchmark.extra_info.update(store=store, entries=n)


def _p50(svc: MemoryService, queries: list[str], mode: str) -> float:
    f = Filters(visibility="include")
    times = []
    for q in queries:
        t = time.perf_counter()
        svc.search(q, f, agent="bench", limit=20, mode=mode)
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 3)


@pytest.mark.parametrize("mode", ["keyword", "semantic"])
def test_search_p50_both_stores(benchmark, searched_store, mode: str) -> None:
    """Keyword (FTS5 bm25 / PostgreSQL ts_rank) and semantic (usearch; on PostgreSQL a local mirror of the
    server's vectors, or the server itself with pgvector) search, limit 20, public + own private, on each store."""
    store, svc, corpus = searched_store
    queries = corpus.queries(60)
    f = Filters(visibility="include")
    for q in queries[-3:]:
        assert svc.search(q, f, agent="bench", limit=20, mode=mode).data, (store, mode, q)
    it = iter(range(10**9))
    benchmark.group = f"memory store: {mode} search"

    def one() -> None:
        svc.search(queries[next(it) % len(queries)], f, agent="bench", limit=20, mode=mode)

    benchmark.pedantic(one, rounds=len(queries) * 2, iterations=1, warmup_rounds=5)
    benchmark.extra_info.update(store=store, entries=svc.stats(agent="bench")["total"], p50_ms=_p50(svc, queries,
                                                                                                   mode))
