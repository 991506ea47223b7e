"""Tokenising, direct id hits and seed selection (activation.query_seeds)."""

from __future__ import annotations

import numpy as np
import pytest
from m1nd.graph import activation as A
from m1nd.graph.activation import closest_ids, query_seeds
from m1nd.graph.seeds import tokenize
from m1nd.identifiers import identifier_parts


@pytest.mark.parametrize(("query", "expected"), [
    ("SessionPool acquire", ["sessionpool", "session", "pool", "acquire"]),
    ("how does the parseHTTPResponse_v2 work?", ["parsehttpresponse_v2", "parse", "http", "response", "work"]),
    ("a b", []),
    ("file::src/db.py", ["file::src/db.py", "file", "src", "db", "py"]),
], ids=["camel", "stopwords-and-humps", "all-dropped", "ext-id"])
def test_tokenize(query: str, expected: list[str]) -> None:
    assert tokenize(query) == expected


def test_identifier_parts_split_digits_and_acronyms() -> None:
    assert identifier_parts("HTTPServer2Go") == ["http", "server", "2", "go"]


def test_seeds_sorted_capped_and_at_most_four_per_file(small_graph) -> None:
    s = query_seeds(small_graph, "session pool acquire release test", max_seeds=24)
    assert len(s.nodes) and (np.diff(s.scores) <= 1e-7).all()
    files = [int(small_graph.nodes.file_of[i]) for i in s.nodes]
    assert max(files.count(f) for f in set(files)) <= 4
    assert all(v == "lexical" for v in s.via)


def test_direct_id_hit_is_full_relevance(small_graph) -> None:
    s = query_seeds(small_graph, "file::src/db.py::fn::connect")
    i = small_graph.nodes.index["file::src/db.py::fn::connect"]
    assert s.nodes[0] == i and s.scores[0] == pytest.approx(1.0)


def test_relpath_is_a_direct_hit(small_graph) -> None:
    s = query_seeds(small_graph, "src/render.py")
    assert small_graph.nodes.ext_id[s.nodes[0]] == "file::src/render.py"


def test_no_matching_word_means_no_seed(small_graph) -> None:
    assert len(query_seeds(small_graph, "zzqx").nodes) == 0


def test_min_score_keeps_only_strong_seeds(small_graph) -> None:
    loose = query_seeds(small_graph, "session pool acquire release", max_seeds=24)
    strict = query_seeds(small_graph, "session pool acquire release", max_seeds=24, min_score=0.5)
    assert set(strict.nodes.tolist()) < set(loose.nodes.tolist()) and (strict.scores >= 0.5).all()


def test_closest_ids_suggest_the_node_meant(small_graph) -> None:
    close = closest_ids(small_graph, "file::src/session_pool.py::class::SessionPool::fn::acquir")
    assert "file::src/session_pool.py::class::SessionPool::fn::acquire" in close


@pytest.mark.parametrize("pool", [1, 2, 5])
def test_partial_sort_of_candidates_equals_the_full_order(small_graph, monkeypatch, pool: int) -> None:
    """query_seeds sorts only the best SEED_POOL candidates (ties included) and widens when the per-file cap
    exhausts them: the seeds must be those of a full sort."""
    queries = ["session pool acquire release test", "database connect", "render page html", "pool", "src tests"]
    full = {q: query_seeds(small_graph, q, max_seeds=8, per_file=2) for q in queries}
    monkeypatch.setattr(A, "SEED_POOL", pool)
    for q in queries:
        part = query_seeds(small_graph, q, max_seeds=8, per_file=2)
        assert part.nodes.tolist() == full[q].nodes.tolist(), q
        assert np.array_equal(part.scores, full[q].scores)
