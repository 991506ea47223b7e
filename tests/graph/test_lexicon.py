"""The BM25F index (graph/lexicon.py) against a plain-Python BM25F, body terms, query mining and the ranking rules."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from m1nd.graph import activation as A
from m1nd.graph import lexicon as L
from m1nd.graph import ranking as R
from m1nd.graph.nodes import KIND_CODE, NodeTable
from m1nd.ingest.terms import attach_terms, unpack_counts


def table(rows: list[tuple[str, str, str, str, bool]]) -> NodeTable:
    """rows: (ext_id, label, kind, source_path, is_test), sorted by ext id as the graph stores them."""
    rows = sorted(rows)
    n = len(rows)
    return NodeTable.from_columns({
        "ext_id": [r[0] for r in rows], "label": [r[1] for r in rows], "qname": [r[1] for r in rows],
        "kind": [KIND_CODE[r[2]] for r in rows], "lang": ["python"] * n, "root_id": [1] * n,
        "source_path": [r[3] for r in rows], "line_start": [1] * n, "line_end": [1] * n, "signature": [""] * n,
        "doc": [""] * n, "is_test": [r[4] for r in rows], "content_hash": [""] * n, "last_change_ms": [0] * n,
        "churn": [0.0] * n, "commit_count": [0] * n})


def reference_bm25f(t: NodeTable, bodies: list[str], query: str) -> tuple[dict[int, float], dict[int, float]]:
    """Node-grain and file-grain BM25F written out from the module docstring, one node at a time."""
    qterms = L.query_terms(query)
    weights = L.weighted_query_terms(query)
    fields_name: list[Counter] = []
    fields_body: list[Counter] = []
    for i in range(t.n):
        name: Counter = Counter()
        for f in L.forms(t.label[i]):
            name[f] += L.W_NAME
        if t.kind[i] == KIND_CODE["file"]:
            segs = t.source_path[i].split("/")
            for s in (*segs[:-1], segs[-1].rsplit(".", 1)[0]):
                for f in L.forms(s):
                    name[f] += L.W_PATH
        fields_name.append(name)
        fields_body.append(Counter(dict(unpack_counts(bodies[i]))))
    lens = [sum(b.values()) for b in fields_body]
    nz = [x for x in lens if x > 0]
    avg = sum(nz) / len(nz) if nz else 1.0
    docs = [i for i in range(t.n) if t.kind[i] != KIND_CODE["dir"]]

    def idf(df: int, n: int) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    node_scores: dict[int, float] = {}
    for term in qterms:
        tf = {i: fields_name[i][term] + fields_body[i][term] / (1 - L.B + L.B * lens[i] / avg) for i in docs}
        tf = {i: v for i, v in tf.items() if v > 0}
        for i, v in tf.items():
            node_scores[i] = node_scores.get(i, 0.0) + weights[term] * idf(len(tf), len(docs)) * v / (L.K1 + v)
    # file grain: a file's path as its name field, every node's body and (once more) its name in the file
    files = [i for i in docs if t.kind[i] == KIND_CODE["file"]]
    f_path: dict[int, Counter] = {}
    f_body: dict[int, Counter] = {f: Counter() for f in files}
    for i in docs:
        f = int(t.file_of[i]) if t.file_of[i] >= 0 else i
        if f not in f_body:
            continue
        f_body[f].update(fields_body[i])
        if i == f:
            f_path[f] = Counter({k: v * L.W_FILE_PATH / L.W_NAME for k, v in fields_name[i].items()})
        else:
            for k, v in fields_name[i].items():
                f_body[f][k] += v * L.W_FILE_NAMES / L.W_NAME
    body_len = {f: sum(fields_body[i] and sum(fields_body[i].values()) or 0 for i in docs
                       if (int(t.file_of[i]) if t.file_of[i] >= 0 else i) == f) for f in files}
    fnz = [v for v in body_len.values() if v > 0]
    favg = sum(fnz) / len(fnz) if fnz else 1.0
    file_scores: dict[int, float] = {}
    for term in qterms:
        tf = {f: f_path.get(f, Counter())[term] + f_body[f][term] / (1 - L.B_FILE + L.B_FILE * body_len[f] / favg)
              for f in files}
        tf = {f: v for f, v in tf.items() if v > 0}
        for f, v in tf.items():
            file_scores[f] = file_scores.get(f, 0.0) + weights[term] * idf(len(tf), max(len(files), 1)) * v / (
                L.K1 + v)
    return node_scores, file_scores


WORDS = ["pool", "session", "acquire", "release", "timeout", "parse", "header", "retry", "cache", "lock"]


@st.composite
def corpora(draw):
    n_files = draw(st.integers(1, 4))
    rows, bodies = [], {}
    for f in range(n_files):
        path = f"pkg{f % 2}/{draw(st.sampled_from(WORDS))}_{f}.py"
        rows.append((f"file::{path}", path.rsplit("/", 1)[-1], "file", path, False))
        bodies[f"file::{path}"] = Counter(draw(st.lists(st.sampled_from(WORDS), max_size=6)))
        for k in range(draw(st.integers(0, 3))):
            label = draw(st.sampled_from(WORDS)) + ("_" + draw(st.sampled_from(WORDS)) if k % 2 else "")
            ext = f"file::{path}::fn::{label}{k}"
            rows.append((ext, label, "fn", path, False))
            bodies[ext] = Counter(draw(st.lists(st.sampled_from(WORDS), max_size=8)))
    query = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
    return rows, bodies, query


@settings(max_examples=60, deadline=None)
@given(corpora())
def test_index_matches_the_reference_bm25f(case) -> None:
    rows, bodies, query = case
    t = table(rows)
    # stored body terms are already folded (ingest/terms.py does it in the extraction workers)
    texts = [" ".join(" ".join(L.forms(w) * c) for w, c in bodies[e].items()) for e in t.ext_id]
    lex = L.TermIndex.build(t, texts)
    keys, qw = lex.keys_weighted(L.weighted_query_terms(query))
    want_nodes, want_files = reference_bm25f(t, texts, query)
    ni, ns = lex.score_nodes(keys, qw)
    assert dict(zip(ni.tolist(), ns.tolist())) == pytest.approx(want_nodes, rel=1e-4, abs=1e-5)
    fi, fs = lex.score_files(keys, qw)
    assert dict(zip(fi.tolist(), fs.tolist())) == pytest.approx(want_files, rel=1e-4, abs=1e-5)


def test_index_survives_the_cache_round_trip() -> None:
    t = table([("file::a.py", "a.py", "file", "a.py", False), ("file::a.py::fn::go", "go", "fn", "a.py", False)])
    lex = L.TermIndex.build(t, ["retri retri", "retri pool pool pool"])
    back = L.TermIndex.from_arrays({k: np.asarray(v) for k, v in lex.arrays().items()})
    keys = back.keys(["retri", "pool"])
    assert [a.tolist() for a in back.score_nodes(keys)] == [a.tolist() for a in lex.score_nodes(keys)]
    assert L.TermIndex.compatible(lex.arrays()) and not L.TermIndex.compatible(None)


def test_body_terms_belong_to_the_innermost_definition() -> None:
    src = (b"import zlib\n"
           b"class Pool:\n"
           b"    size = LIMIT\n"
           b"    def acquire(self):\n"
           b"        return self.queue.popleft()  # take the oldest\n"
           b"compress = zlib.compress\n")
    blob = {"definitions": [{"line_start": 2, "line_end": 5}, {"line_start": 4, "line_end": 5}]}
    attach_terms(blob, src)
    file_terms = dict(unpack_counts(blob["terms"]))
    pool, acquire = (dict(unpack_counts(d["terms"])) for d in blob["definitions"])
    assert file_terms["zlib"] == 2 and file_terms["compress"] == 2 and "popleft" not in file_terms
    assert pool["limit"] == 1 and "popleft" not in pool
    assert acquire["popleft"] == 1 and acquire["queue"] == 1 and acquire["oldest"] == 1
    assert "the" not in acquire  # stopwords are neither indexed nor queried


def test_terms_fold_identifier_parts_and_stems() -> None:
    assert set(L.forms("parseHTTPResponse")) == {"parsehttprespons", "pars", "http", "respons"}
    assert L.fold("deprecated") == L.fold("deprecation") == L.fold("Deprecate")
    assert set(L.query_terms("the `bulk_create` of entries")) == {"bulk_creat", "bulk", "creat", "entri"}


def test_query_mining_weighs_code_and_scope() -> None:
    w = L.weighted_query_terms("fix(router): keep `maxAge` when the cookie expires")
    assert w["router"] == L.SCOPE_WEIGHT and w["maxag"] == L.CODE_WEIGHT and w["cooki"] == 1.0
    assert "fix" not in w  # the conventional-commit type word says what kind of change, not where
    assert R.wants("docs(context): align comments") == (False, False)
    assert R.wants("add tests for the docs builder") == (True, True)


def test_tests_docs_and_vendored_code_rank_below_the_implementation(small_graph) -> None:
    g = small_graph
    run = A.run_activation(g, "session pool acquire", A.ActivationParams())
    test_node = g.nodes.index["file::tests/test_session_pool.py::fn::test_acquire"]
    impl = g.nodes.index["file::src/session_pool.py::class::SessionPool::fn::acquire"]
    assert run.activation[impl] > run.activation[test_node] > 0
    asked = A.run_activation(g, "test session pool acquire", A.ActivationParams())
    assert asked.activation[test_node] / asked.activation[impl] > run.activation[test_node] / run.activation[impl]


def test_one_file_cannot_fill_the_top(small_graph) -> None:
    g = small_graph
    run = A.run_activation(g, "session pool acquire release", A.ActivationParams())
    raw, _ = A.ranked(g, run, 4)
    diverse, _ = A.ranked(g, run, 4, per_file=1)
    files = [int(g.nodes.file_of[i]) if g.nodes.file_of[i] >= 0 else int(i) for i in diverse.tolist()]
    assert len(set(files)) == len(files)
    assert diverse[0] == raw[0]  # the best result stays first
    grouped = A.file_view(g, run, 3)
    assert len({f["source_path"] for f in grouped}) == len(grouped) <= 3
    assert all(1 <= len(f["nodes"]) <= A.FILE_VIEW_NODES for f in grouped)
    assert [f["score"] for f in grouped] == sorted((f["score"] for f in grouped), reverse=True)


def test_feedback_lifts_and_lowers_a_direct_match(small_graph) -> None:
    g = small_graph
    base = A.run_activation(g, "session pool", A.ActivationParams())
    i = g.nodes.index["file::src/session_pool.py::class::SessionPool::fn::release"]
    up = A.run_activation(g, "session pool", A.ActivationParams(), feedback=({i: 2.0}, {}))
    down = A.run_activation(g, "session pool", A.ActivationParams(), feedback=({i: 0.5}, {}))
    assert down.activation[i] < base.activation[i] < up.activation[i] <= 1.0
    others = np.flatnonzero(base.activation)
    others = others[others != i]
    np.testing.assert_array_equal(up.activation[others], base.activation[others])
    # a verdict on this very query moves the node further than the global factor alone
    lifted = A.run_activation(g, "session pool", A.ActivationParams(), feedback=({i: 2.0}, {i: 0.9}))
    sunk = A.run_activation(g, "session pool", A.ActivationParams(), feedback=({}, {i: -0.9}))
    assert up.activation[i] < lifted.activation[i] <= 1.0 and sunk.activation[i] < base.activation[i]


def test_a_conventional_scope_says_where_the_type_word_does_not() -> None:
    assert R.wants("chore(examples): fix module import") == (False, True)
    assert R.wants("docs: clarify the retry option") == (False, False)
    assert R.wants("test(parser): cover empty input") == (False, False)
    assert R.wants("fix(tests): flaky timeout") == (True, False)


def test_a_query_about_types_lifts_the_declaration_prior() -> None:
    # "types: …" names where the change is made, so here the conventional type word counts, unlike for tests/docs
    assert R.wants_declarations("types: allow port to be null in the request definition")
    assert R.wants_declarations("feat(types): add missing error types")
    assert R.wants_declarations("fix(ts): align router options")
    assert not R.wants_declarations("fix: error.code not present on some routing errors")
    assert not R.wants_declarations("Fix search of annotated type parameters")  # a type is not a declaration file
    prior = np.array([1.0, R.DECLARATION_PRIOR, R.DECLARATION_PRIOR * R.DIR_PRIOR, R.TEST_PRIOR], np.float32)
    # the last node is a test whose factor happens to equal the declaration prior's: not lifted by "types"
    prior[3] = R.DECLARATION_PRIOR
    pr = R.Priors(prior, np.array([False, False, False, True]), np.zeros(4, bool),
                  np.array([False, True, False, False]))
    idx = np.arange(4)
    plain = R.query_prior(pr, idx, tests_wanted=True, docs_wanted=False)
    asked = R.query_prior(pr, idx, tests_wanted=True, docs_wanted=False, decls_wanted=True)
    np.testing.assert_array_equal(plain, prior)
    np.testing.assert_array_equal(asked, np.array([1.0, 1.0, prior[2], prior[3]], np.float32))


def test_files_under_test_directories_are_tests_in_every_language() -> None:
    from m1nd.evaluation import is_source

    assert R.in_test_dir("test/unit/adapters/http.js") and R.in_test_dir("spec/models/user_spec.rb")
    assert not R.in_test_dir("lib/adapters/http.js") and not R.in_test_dir("src/contest/x.py")
    assert not is_source("test/unit/adapters/http.js", "javascript")
    assert is_source("lib/adapters/http.js", "javascript")


def test_words_commit_subjects_use_more_than_the_code_weigh_less_in_the_code_grains() -> None:
    from types import SimpleNamespace

    from m1nd.graph import history as H
    from test_history import FILES, table  # tests/graph is on sys.path (rootdir import mode), as ingest_helpers is

    # "fix" is in the subject of every commit (idf low there) but rare in the code (idf high): routed to history
    idx = H.HistoryIndex.build(table(FILES), [(1, [(100, "fix router", ["a.py"]), (200, "fix cookie", ["b.py"]),
                                                   (300, "fix header", ["c.py"])])])
    hidf = idx.term_idf(["fix", "router"])
    lex = SimpleNamespace(terms=["fix", "router", "parse"], file_idf=np.array([4.0, hidf["router"], 2.0], np.float32))
    keys, qw = np.array([0, 1, 2]), np.array([1.0, 2.0, 1.0], np.float32)
    got = R.route_weights(lex, idx, keys, qw, None)  # type: ignore[arg-type]
    assert got[0] == np.float32(max(hidf["fix"] / 4.0, R.ROUTE_MIN))  # clipped at ROUTE_MIN at most
    assert got[1] == 2.0 and got[2] == 1.0  # as common in both: unchanged; never in a subject: unchanged
    assert R.route_weights(lex, idx, keys, qw, 50)[0] == 1.0  # as of before every commit: no history, no routing


def test_by_best_divides_by_the_mean_of_the_best_values() -> None:
    x = np.array([1.0, 4.0, 2.0], np.float32)
    np.testing.assert_allclose(R.by_best(x), x / 4.0)
    np.testing.assert_allclose(R.by_best(x, 2), x / 3.0)  # a clear winner counts more than 1
    np.testing.assert_allclose(R.by_best(np.array([3.0, 3.0]), 2), [1.0, 1.0])
    assert len(R.by_best(np.zeros(0, np.float32), 2)) == 0
