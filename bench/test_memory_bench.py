"""Knowledge-memory benchmarks (issue 5): add-batch, keyword search and filtered list at 100k entries, and an
export → seed round trip of the whole store.

Run the timings with ``pytest bench/test_memory_bench.py`` (pytest-benchmark); CI runs them with
``--benchmark-disable``, which shrinks every store (``SIZES`` below) so the same code paths are checked for
correctness in seconds. The corpus is synthetic but shaped like real notes: a 20,000-word vocabulary drawn with a
Zipf law (s = 1.1), 40–160 body words, a few tags from a namespaced set, 10 % private entries, sessions of 500.
Search queries use mid-frequency words (ranks 200–4000), the kind people actually type.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numpy as np
import pytest
from m1nd.memory.service import Filters, MemoryService

FULL = {"batch": 10_000, "store": 100_000}
SMALL = {"batch": 500, "store": 3_000}
CATEGORIES = ("pattern", "technique", "insight", "gotcha", "reference", "decision")


def _sizes(config: pytest.Config) -> dict[str, int]:
    return SMALL if config.getoption("benchmark_disable", default=False) else FULL


def _vocabulary(n: int, rng: np.random.Generator) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qui", "bra", "ston", "fel", "gar", "hin", "jor",
            "pel", "dra", "wex", "yul"]
    words: set[str] = set()
    while len(words) < n:
        k = int(rng.integers(2, 5))
        words.add("".join(syll[int(i)] for i in rng.integers(0, len(syll), size=k)))
    return sorted(words)


class Corpus:
    def __init__(self, seed: int = 5) -> None:
        self.rng = np.random.default_rng(seed)
        vocab = _vocabulary(20_000, self.rng)
        self.vocab = [vocab[int(i)] for i in self.rng.permutation(len(vocab))]  # rank order != alphabetical
        ranks = np.arange(1, len(self.vocab) + 1)
        p = 1.0 / ranks ** 1.1
        self.cdf = np.cumsum(p / p.sum())
        self.tags = [f"{ns}/{i}" for ns in ("tier", "project", "topic") for i in range(20)] + [
            f"tag{i}" for i in range(140)]

    def words(self, n: int) -> list[str]:
        idx = np.minimum(np.searchsorted(self.cdf, self.rng.random(n)), len(self.vocab) - 1)
        return [self.vocab[int(i)] for i in idx]

    def lines(self, n: int, start: int = 0) -> list[str]:
        out = []
        for i in range(start, start + n):
            body_n = int(self.rng.integers(40, 160))
            obj = {"category": CATEGORIES[i % len(CATEGORIES)],
                   "title": " ".join(self.words(int(self.rng.integers(4, 9)))).capitalize(),
                   "content": " ".join(self.words(body_n)) + f" handleRequest{i % 500} retry_policy_{i % 50}",
                   "tags": [self.tags[int(j)] for j in self.rng.choice(len(self.tags), size=2, replace=False)],
                   "resonance": int(i % 10), "session_id": f"ses-{i // 500}", "source_agent": "bench"}
            if i % 10 == 0:
                obj["private"] = True
            out.append(json.dumps(obj))
        return out

    def queries(self, n: int) -> list[str]:
        mid = self.vocab[200:4000]
        qs = []
        for k in range(n):
            idx = self.rng.integers(0, len(mid), size=1 + (k % 2))
            qs.append(" ".join(mid[int(i)] for i in idx))
        return qs + ["handle request", "retry policy", "handleRequest42"]


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    return Corpus()


@pytest.fixture(scope="session")
def big_store(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config, corpus: Corpus):
    n = _sizes(pytestconfig)["store"]
    path = tmp_path_factory.mktemp("memory-bench") / "memory.db"
    svc = MemoryService(path)
    t = time.perf_counter()
    for start in range(0, n, 10_000):
        res = svc.add_batch(corpus.lines(min(10_000, n - start), start), agent="bench", no_embed=True)
        assert not res.failed, res.failed[:3]
    build_s = time.perf_counter() - t
    assert svc.stats(agent="bench").total == n
    yield svc, build_s
    svc.close()


def test_add_batch_10k(benchmark, tmp_path: Path, pytestconfig: pytest.Config, corpus: Corpus) -> None:
    """``add-batch --no-embed`` of 10,000 JSONL lines into an empty store (target < 5 s)."""
    n = _sizes(pytestconfig)["batch"]
    lines = corpus.lines(n, start=1_000_000)
    counter = iter(range(1000))

    def setup():
        svc = MemoryService(tmp_path / f"batch-{next(counter)}" / "memory.db")
        return (svc,), {}

    def run(svc: MemoryService) -> None:
        res = svc.add_batch(lines, agent="bench", no_embed=True)
        assert len(res.added) == n and not res.failed
        svc.close()

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)


def test_keyword_search_p50(benchmark, big_store, corpus: Corpus) -> None:
    """Keyword search (bm25, public + own private, limit 20) at 100,000 entries (target p50 < 10 ms)."""
    svc, _ = big_store
    queries = corpus.queries(60)
    f = Filters(visibility="include")
    for q in queries[-3:]:
        assert svc.search(q, f, agent="bench", limit=20).entries, q
    it = iter(range(10**9))

    def one() -> None:
        svc.search(queries[next(it) % len(queries)], f, agent="bench", limit=20)
    benchmark.pedantic(one, rounds=len(queries) * 3, iterations=1, warmup_rounds=5)
    # also keep an explicit p50 for the report, independent of the plugin's statistics
    times = []
    for q in queries:
        t = time.perf_counter()
        svc.search(q, f, agent="bench", limit=20)
        times.append(time.perf_counter() - t)
    benchmark.extra_info["p50_ms"] = round(statistics.median(times) * 1000, 3)


@pytest.mark.parametrize("case", ["default", "category+tags", "min-resonance-decayed", "exclude-tags",
                                  "mine", "sort-resonance"])
def test_list_with_filters(benchmark, big_store, case: str) -> None:
    """``list`` with the shared filters at 100,000 entries (limit 100)."""
    svc, _ = big_store
    f, sort = {
        "default": (Filters(), "updated"),
        "category+tags": (Filters(categories=["gotcha", "decision"], tags=["tier/3", "topic/7"]), "updated"),
        "min-resonance-decayed": (Filters(min_resonance=5), "updated"),
        "exclude-tags": (Filters(exclude_tags=["tier/", "project/1"]), "created"),
        "mine": (Filters(visibility="mine"), "updated"),
        "sort-resonance": (Filters(visibility="include"), "resonance"),
    }[case]
    res = benchmark(svc.list_entries, f, agent="bench", sort=sort, limit=100)
    assert res.entries


def test_export_seed_round_trip(benchmark, big_store, tmp_path: Path) -> None:
    """Export every entry as JSONL and seed it into an empty store: the same entries come back."""
    svc, _ = big_store
    counter = iter(range(1000))

    def run() -> tuple[int, int]:
        k = next(counter)
        dump = tmp_path / f"dump-{k}.jsonl"
        with dump.open("w", encoding="utf-8") as fh:
            n = 0
            for e in svc.export_entries(agent="bench"):
                fh.write(json.dumps(e, ensure_ascii=False) + "\n")
                n += 1
        other = MemoryService(tmp_path / f"seeded-{k}" / "memory.db")
        try:
            res = other.seed_knowledge(dump, agent="bench")
        finally:
            other.close()
        return n, res.imported

    exported, imported = benchmark.pedantic(run, rounds=1, iterations=1)
    assert exported == imported == svc.stats(agent="bench").total
