"""Seed selection (activation.md §1) against the rules table and an obvious per-node reference."""

from __future__ import annotations

import numpy as np
import pytest

from m1nd.graph.seeds import identifier_parts, lexical_scores, select_seeds, tokenize


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


def test_exact_label_match_gets_full_score(small_graph) -> None:
    lex = lexical_scores(small_graph.seeds, ["acquire"])
    i = small_graph.nodes.index["file::src/session_pool.py::class::SessionPool::fn::acquire"]
    assert lex[i] == pytest.approx(1.0)


def test_rule_scores_match_reference(small_graph) -> None:
    """Per-token scores equal a slow per-node evaluation of the rule table."""
    g = small_graph
    t = g.nodes

    def reference(tok: str, i: int) -> float:
        label = t.label[i].casefold()
        path = t.source_path[i].casefold()
        segs = path.split("/")
        stem = segs[-1].rsplit(".", 1)[0]
        best = 0.0
        if tok == label:
            best = max(best, 1.0)
        if tok in identifier_parts(t.label[i]):
            best = max(best, 0.92)
        if len(tok) >= 3 and len(label) >= 3 and (label.startswith(tok) or tok.startswith(label)):
            best = max(best, 0.90)
        if tok in segs or tok == stem:
            best = max(best, 0.82)
        short = min(len(tok), len(label))
        if short >= 3 and (tok in label or label in tok):
            best = max(best, 0.80)
        if len(tok) >= 4 and tok in path:
            best = max(best, 0.72)
        import re

        if tok in re.findall(r"[a-z_][a-z0-9_]*", (t.signature[i] + " " + t.doc[i]).casefold()):
            best = max(best, 0.60)
        return best

    scratch = np.empty(g.n, np.float32)
    for tok in ["session", "pool", "acquire", "connect", "render", "database", "src"]:
        m = g.seeds.token_scores(tok, scratch)
        for i in range(g.n):
            ref = reference(tok, i)
            # the trigram rule (0.7·σ) may only add scores below 0.7 where no other rule applies
            assert m[i] == pytest.approx(ref, abs=1e-6) or (ref == 0 and 0 < m[i] < 0.7), (tok, t.ext_id[i])


def test_seeds_sorted_capped_and_at_most_four_per_file(small_graph) -> None:
    s = select_seeds(small_graph.seeds, small_graph.nodes, "session pool acquire release test", max_seeds=24)
    assert (np.diff(s.scores) <= 1e-7).all()
    files = [int(small_graph.nodes.file_of[i]) for i in s.nodes]
    assert max(files.count(f) for f in set(files)) <= 4
    assert all(v == "lexical" for v in s.via)


def test_direct_id_hit_is_full_relevance(small_graph) -> None:
    s = select_seeds(small_graph.seeds, small_graph.nodes, "file::src/db.py::fn::connect")
    i = small_graph.nodes.index["file::src/db.py::fn::connect"]
    assert s.nodes[0] == i and s.scores[0] == pytest.approx(1.0)


def test_relpath_is_a_direct_hit(small_graph) -> None:
    s = select_seeds(small_graph.seeds, small_graph.nodes, "src/render.py")
    assert small_graph.nodes.ext_id[s.nodes[0]] == "file::src/render.py"


def test_no_token_reaching_half_means_no_seed(small_graph) -> None:
    s = select_seeds(small_graph.seeds, small_graph.nodes, "zzqx")
    assert len(s.nodes) == 0


@pytest.mark.parametrize("query", ["session pool acquire", "database connect", "render page html", "src tests",
                                   "pool", "zzqx acquire"])
def test_sparse_lexical_scores_equal_the_dense_formula(small_graph, query: str) -> None:
    """lexical_scores works on the matched nodes only; it must equal the formula evaluated densely over N."""
    g = small_graph
    tokens = tokenize(query)
    n, k = g.n, len(tokens)
    scratch = np.empty(n, np.float32)
    ms = np.stack([g.seeds.token_scores(t, scratch).copy() for t in tokens])
    for row, t in zip(ms, tokens):
        idx, val = g.seeds.token_sparse(t)
        dense = np.zeros(n, np.float32)
        dense[idx] = val
        np.testing.assert_array_equal(dense, row)
    testy = any(t in ("test", "tests", "spec") for t in tokens)
    bias = (g.seeds.path_bias_test if testy else g.seeds.path_bias) + g.seeds.kind_bias
    best = ms.max(axis=0)
    ref = np.clip(0.5 * ms.sum(0) / k + 0.35 * (ms >= 0.5).sum(0) / k + 0.15 * best + bias, 0, 1)
    ref[best < 0.5] = 0
    ref[(ms >= 1.0).all(0)] = 1.0
    np.testing.assert_allclose(lexical_scores(g.seeds, tokens), ref, atol=1e-6)


def test_query_caches_return_what_a_fresh_computation_does(small_graph) -> None:
    """Cached token matches and query similarities are read-only and equal to the uncached results; dropping the
    caches changes nothing but the cost."""
    from m1nd.graph.activation import ActivationParams, run_activation

    g = small_graph
    first = run_activation(g, "session pool acquire render", ActivationParams())
    idx, val = g.seeds.token_sparse("session")
    assert not idx.flags.writeable and not val.flags.writeable
    with pytest.raises(ValueError):
        val[0] = 0.0
    assert g.seeds.token_sparse("session")[0] is idx  # second call: the cached arrays
    fresh_idx, fresh_val = g.seeds._token_matches("session")
    assert np.array_equal(idx, fresh_idx) and np.array_equal(val, fresh_val)
    again = run_activation(g, "session pool acquire render", ActivationParams())
    g.drop_query_caches()
    cold = run_activation(g, "session pool acquire render", ActivationParams())
    for run in (again, cold):
        assert np.array_equal(run.activation, first.activation)
        assert all(np.array_equal(run.dims[d], first.dims[d]) for d in first.dims)
    assert g.seeds.token_sparse("session")[0] is not idx  # recomputed after the drop


@pytest.mark.parametrize("pool", [1, 2, 5])
def test_partial_sort_of_candidates_equals_the_full_order(small_graph, monkeypatch, pool: int) -> None:
    """select_seeds sorts only the best SEED_POOL candidates (ties included) and widens when the per-file cap
    exhausts them: the seeds must be those of a full sort."""
    import m1nd.graph.seeds as seeds_mod

    queries = ["session pool acquire release test", "database connect", "render page html", "pool", "src tests"]
    full = {q: select_seeds(small_graph.seeds, small_graph.nodes, q, max_seeds=8, per_file=2) for q in queries}
    monkeypatch.setattr(seeds_mod, "SEED_POOL", pool)
    for q in queries:
        part = select_seeds(small_graph.seeds, small_graph.nodes, q, max_seeds=8, per_file=2)
        assert part.nodes.tolist() == full[q].nodes.tolist(), q
        assert np.array_equal(part.scores, full[q].scores)
