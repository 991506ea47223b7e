"""The history field (graph/history.py): BM25 over the subjects of the commits that touched each file, as of a time."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from m1nd.graph import history as H
from m1nd.graph.lexicon import weighted_query_terms
from m1nd.graph.nodes import KIND_CODE, NodeTable

FILES = ["a.py", "b.py", "c.py", "d/e.py", "d/f.py"]
WORDS = ["router", "parse", "cookie", "header", "timeout", "retry", "encode", "stream", "multipart", "proxy"]


def table(paths: list[str]) -> NodeTable:
    rows = sorted((f"file::{p}", p) for p in paths)
    n = len(rows)
    return NodeTable.from_columns({
        "ext_id": [r[0] for r in rows], "label": [r[1] for r in rows], "qname": [r[1] for r in rows],
        "kind": [KIND_CODE["file"]] * n, "lang": ["python"] * n, "root_id": [1] * n,
        "source_path": [r[1] for r in rows], "line_start": [1] * n, "line_end": [1] * n, "signature": [""] * n,
        "doc": [""] * n, "is_test": [False] * n, "content_hash": [""] * n, "last_change_ms": [0] * n,
        "churn": [0.0] * n, "commit_count": [0] * n})


def reference(commits: list[tuple[int, str, list[str]]], query: str, before: int | None) -> dict[str, float]:
    """Plain BM25 over per-file documents made of the subjects of the commits (older than ``before``), each commit's
    words weighted by its size and age."""
    kept = [(t, Counter(weighted_query_terms(s).keys()), {p for p in paths if p in FILES}) for t, s, paths in commits]
    kept = [(t, words, files) for t, words, files in kept if words and files]
    if not kept:
        return {}
    ref = before if before is not None else max(t for t, _w, _f in kept)
    docs: dict[str, Counter] = {}  # the words (lengths)
    weighted: dict[str, dict[str, float]] = {}  # the weighted term frequencies
    for t, words, files in kept:
        if before is not None and t >= before:
            continue
        w = len(files) ** -H.SIZE_EXP * 2 ** (-(ref - t) / (H.HALF_LIFE_DAYS * 86400))
        for p in files:
            docs.setdefault(p, Counter()).update(words)
            for term, n in words.items():
                weighted.setdefault(p, {})[term] = weighted.get(p, {}).get(term, 0.0) + n * w
    if not docs:
        return {}
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs.values()) / n
    out: dict[str, float] = {}
    for term, q in weighted_query_terms(query).items():
        df = sum(1 for d in docs.values() if term in d)
        if not df:
            continue
        idf = math.log1p((n - df + 0.5) / (df + 0.5))
        for p, d in docs.items():
            tf = weighted[p].get(term, 0.0)
            if term in d:
                norm = H.K1 * (1 - H.B + H.B * sum(d.values()) / avg)
                out[p] = out.get(p, 0.0) + q * idf * tf * (H.K1 + 1) / (tf + norm)
    return out


@st.composite
def histories(draw):
    commits = []
    for _ in range(draw(st.integers(0, 25))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
        paths = draw(st.lists(st.sampled_from(FILES + ["gone.py"]), min_size=1, max_size=3))
        commits.append((draw(st.integers(0, 10**8)), " ".join(words), paths))
    query = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
    before = draw(st.none() | st.integers(0, 10**8 + 1))
    return commits, query, before


@settings(max_examples=150, deadline=None)
@given(histories())
def test_scores_match_a_plain_bm25_as_of_the_time(case) -> None:
    commits, query, before = case
    t = table(FILES)
    idx = H.HistoryIndex.build(t, [(1, commits)])
    files, scores = idx.score(weighted_query_terms(query), before)
    got = {t.source_path[int(f)]: float(s) for f, s in zip(files, scores)}
    want = reference(commits, query, before)
    assert got.keys() == want.keys()
    for p in want:
        assert math.isclose(got[p], want[p], rel_tol=1e-4), (p, got[p], want[p])
    assert np.all(np.diff(files) > 0)
    if before is None and idx.commits:  # the precomputed path and the as-of path agree
        f2, s2 = idx.score(weighted_query_terms(query), int(idx.c_time.max()) + 1)
        assert np.array_equal(files, f2) and np.allclose(scores, s2, rtol=1e-4)


def test_a_later_commit_never_counts_as_of_an_earlier_time() -> None:
    t = table(FILES)
    idx = H.HistoryIndex.build(t, [(1, [(100, "fix cookie parsing", ["a.py"]), (200, "cookie jar", ["b.py"])])])
    files, _ = idx.score(weighted_query_terms("cookie"), before=200)
    assert [t.source_path[int(f)] for f in files] == ["a.py"]
    files, _ = idx.score(weighted_query_terms("cookie"), before=100)
    assert len(files) == 0
    files, _ = idx.score(weighted_query_terms("cookie"))
    assert sorted(t.source_path[int(f)] for f in files) == ["a.py", "b.py"]


def test_survives_the_cache_round_trip_and_refuses_another_version() -> None:
    t = table(FILES)
    idx = H.HistoryIndex.build(t, [(1, [(100, "router: retry on timeout", ["a.py", "d/e.py"])])])
    a = idx.arrays()
    assert H.HistoryIndex.compatible(a)
    back = H.HistoryIndex.from_arrays(a)
    q = weighted_query_terms("router timeout")
    assert np.array_equal(back.score(q)[0], idx.score(q)[0])
    assert np.allclose(back.score(q)[1], idx.score(q)[1])
    old = dict(a, meta=np.asarray([len(idx.terms), H.VERSION - 1], np.int64))
    assert not H.HistoryIndex.compatible(old)


def test_an_empty_history_scores_nothing() -> None:
    idx = H.HistoryIndex.build(table(FILES), [])
    assert idx.commits == 0
    files, scores = idx.score(weighted_query_terms("router"))
    assert len(files) == 0 and len(scores) == 0
    assert H.HistoryIndex.from_arrays(idx.arrays()).commits == 0


@settings(max_examples=100, deadline=None)
@given(histories())
def test_term_idf_is_the_idf_of_the_files_histories_as_of_the_time(case) -> None:
    commits, query, before = case
    t = table(FILES)
    idx = H.HistoryIndex.build(t, [(1, commits)])
    terms = list(weighted_query_terms(query))
    got = idx.term_idf(terms, before)
    docs: dict[str, set[str]] = {}  # file -> its words as of the time
    for when, subject, paths in commits:
        words = set(weighted_query_terms(subject))
        if (before is not None and when >= before) or not words:
            continue
        for p in paths:
            if p in FILES:
                docs.setdefault(p, set()).update(words)
    n = len(docs)
    want = {}
    for w in terms:
        df = sum(1 for d in docs.values() if w in d)
        if df:
            want[w] = math.log1p((n - df + 0.5) / (df + 0.5))
    assert got.keys() == want.keys()
    for w in want:
        assert math.isclose(got[w], want[w], rel_tol=1e-5), (w, got[w], want[w])
