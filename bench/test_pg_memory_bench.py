"""The knowledge memory on its two stores side by side (issue 18): add-batch of 10,000 entries, keyword search p50
and semantic search p50 on a large store, each benchmark run on the ``memory.db`` file, on a PostgreSQL server
with the local usearch mirror of its vectors, and on a server with pgvector (throwaway servers, :mod:`pg_cluster`),
in the same session, grouped so the report shows them together.

Sizes: add-batch is always 10,000 lines; the searched store holds 10,000 entries by default and the issue's
100,000 with ``M1ND_BENCH_PG_FULL=1`` (41 minutes on two busy cores; no pytest timeout then). With
``--benchmark-disable`` (CI) everything shrinks to a correctness pass. The corpus is the one of
:mod:`test_memory_bench` (Zipf vocabulary, sessions of 500, 10 % private); vectors come from the hashing embedder,
so semantic timings measure the stores and the vector search, not a model.

How the searched stores are loaded: the ``memory.db`` file by ``add_batch`` with vectors (the write path), and each
server store by ``m1nd memory migrate`` from that file (:func:`m1nd.memory.migration.migrate_to`: pipelined
batches, the keyword index built on the server, the HNSW indexes after the rows, counts verified). A server store
loaded entry by entry with vectors costs about 18 round trips per entry, about half an hour per 100k store here
(the add-batch benchmark measures that path without vectors); the migrated stores hold the same rows, vectors,
``tsvector`` documents, indexes and planner statistics. The PostgreSQL+usearch store builds its local mirror from
the server's vectors, as a new machine joining a team does, before its searches are timed. The load times are in
each search's ``extra_info``.
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
FULL = os.environ.get("M1ND_BENCH_PG_FULL") == "1"
# building three 100k stores outlasts the suite's 900 s per test (the first search test sets them up)
pytestmark = [pytest.mark.timeout(0)] if FULL else []


def _sizes(config: pytest.Config) -> dict[str, int]:
    if config.getoption("benchmark_disable", default=False):
        return {"batch": 300, "store": 1_000}
    return {"batch": 10_000, "store": 100_000 if FULL else 10_000}


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


@pytest.fixture(scope="module")
def source_store(tmp_path_factory, pytestconfig, hashing_embedder):
    """The ``memory.db`` file every searched store holds: ``add_batch`` with vectors, 5,000 lines at a time."""
    n = _sizes(pytestconfig)["store"]
    corpus = Corpus()
    where = tmp_path_factory.mktemp("pg-bench-sqlite")
    svc = _open("sqlite", where, None, "", vectors=True)
    t = time.perf_counter()
    for start in range(0, n, 5_000):
        res = svc.add_batch(corpus.lines(min(5_000, n - start), start), agent="bench", no_auto_anchor=True)
        assert not res.failed, res.failed[:3]
    load_s = time.perf_counter() - t
    assert svc.stats(agent="bench").total == n
    yield svc, corpus, round(load_s, 1)
    _close(svc)


@pytest.fixture(scope="module", params=STORES)
def searched_store(request, tmp_path_factory, source_store, pg_cluster):
    store = request.param
    src, corpus, add_s = source_store
    if store == "sqlite":
        yield store, src, corpus, {"load": "add_batch", "load_s": add_s}
        return
    from m1nd.memory.migration import migrate_to

    url = pg_cluster(store).new_database("bench_search")
    t = time.perf_counter()
    report = migrate_to(src, url)
    migrate_s = time.perf_counter() - t
    assert report.verified and report.entries == src.stats(agent="bench").total, report
    where = tmp_path_factory.mktemp(f"pg-bench-{store.replace('+', '-')}")
    svc = MemoryService(url, vector_hook=vector_hook_for(where / "memory.db", url=url))
    load = {"load": "migrate", "load_s": round(migrate_s, 1)}
    if not svc.vector_hook.server_searches(svc.vector_hook.db):
        assert store == "postgresql"
        t = time.perf_counter()
        svc.vector_hook.sync()  # the mirror of a machine that joins: every server vector into the local index
        load["mirror_s"] = round(time.perf_counter() - t, 1)
    yield store, svc, corpus, load
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
        assert len(res.added) == n and not res.failed
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
    store, svc, corpus, load = searched_store
    queries = corpus.queries(60)
    f = Filters(visibility="include")
    for q in queries[-3:]:
        assert svc.search(q, f, agent="bench", limit=20, mode=mode).entries, (store, mode, q)
    it = iter(range(10**9))
    benchmark.group = f"memory store: {mode} search"

    def one() -> None:
        svc.search(queries[next(it) % len(queries)], f, agent="bench", limit=20, mode=mode)

    benchmark.pedantic(one, rounds=len(queries) * 2, iterations=1, warmup_rounds=5)
    benchmark.extra_info.update(store=store, entries=svc.stats(agent="bench").total, p50_ms=_p50(svc, queries,
                                                                                                   mode), **load)
