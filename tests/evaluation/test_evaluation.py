"""The change-localization set, the FTS5 BM25 baseline and the figures of :mod:`m1nd.evaluation`, on a real git
history (see ``conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from m1nd import evaluation as E
from m1nd.config import Settings
from m1nd.errors import InvalidInputError, M1ndError
from m1nd.tools.registry import call_tool
from m1nd.store.file_fts import FileTextIndex, code_tokens
from m1nd.workspace import Workspace

from .conftest import EXPECTED, EXPECTED_SKIPPED, git


def _ws(home: Path, key: Path) -> Workspace:
    return Workspace(Settings(home=home, workspace_key=key, busy_timeout_ms=10000))


@pytest.fixture
def ingested(shop_history: Path, tmp_path: Path):
    ws = _ws(tmp_path / "home", shop_history)
    r = call_tool(ws, "ingest", {"agent_id": "t", "path": str(shop_history), "embed": "sync"})
    assert not r.is_error, r.structured
    yield ws
    ws.close()


# ------------------------------------------------------------------------------------------------------ the set
def test_set_from_history_newest_first_with_skip_reasons(shop_history: Path) -> None:
    s = E.build_localization_set(shop_history)
    assert [(q.query, q.gold) for q in s.queries] == EXPECTED
    assert s.skipped == EXPECTED_SKIPPED
    assert s.commits_scanned == 13
    assert s.head == git(shop_history, "rev-parse", "HEAD").strip()
    assert all(len(q.commit) == 40 for q in s.queries)
    # tests, docs and config are never candidates
    assert sorted(s.source_files) == ["src/shop/__init__.py", "src/shop/cart.py", "src/shop/payment.py",
                                      "src/shop/pricing.py", "src/shop/shipping.py"]


def test_set_is_capped_and_deterministic(shop_history: Path) -> None:
    a = E.build_localization_set(shop_history, max_queries=2)
    b = E.build_localization_set(shop_history, max_queries=2)
    assert [q.query for q in a.queries] == [q for q, _ in EXPECTED[:2]]
    assert a.to_dict() == b.to_dict()


def test_max_files_limits_the_answer_size(shop_history: Path) -> None:
    s = E.build_localization_set(shop_history, max_files=1)
    assert [q.query for q in s.queries] == [EXPECTED[0][0], EXPECTED[2][0], EXPECTED[3][0]]
    assert s.skipped["more than 1 source files"] == 2


@pytest.mark.parametrize(("subject", "reason"), [
    ("fix it", "short"),
    ("Merge branch 'main' into feature", "merge"),
    ('Revert "Add retries to the client"', "revert"),
    ("Release 2.3.0", "release"),
    ("v1.4.2", "release"),
    ("wip", "wip"),
    ("chore(deps): bump serde from 1.0.1 to 1.0.2", "release"),
    ("Update dependencies to the latest versions", "dependencies"),
    ("Fix typos in the option parser docs", "typo"),
    ("Run black on the whole code base", "formatting"),
    ("Add retry with exponential backoff to the client", None),
    ("fix(router): handle trailing slashes in mounted apps", None),
])
def test_subject_filters(subject: str, reason: str | None) -> None:
    assert E.subject_skip_reason(E.clean_subject(subject)) == reason


def test_subject_cleaning() -> None:
    assert E.clean_subject("Fix the pager  (#2817)") == "Fix the pager"
    assert E.clean_subject("[skip ci] Tidy the loader") == "Tidy the loader"


def test_not_a_git_repository(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    with pytest.raises(InvalidInputError, match="not inside a git work tree"):
        E.build_localization_set(tmp_path)


def test_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    with pytest.raises(InvalidInputError, match="has no commits yet"):
        E.build_localization_set(tmp_path)


def test_subdirectory_root_uses_paths_relative_to_it(shop_history: Path) -> None:
    s = E.build_localization_set(shop_history / "src")
    assert [q.gold for q in s.queries] == [tuple(g.removeprefix("src/") for g in gold) for _, gold in EXPECTED]


# ------------------------------------------------------------------------------------------------------ metrics
def test_metric_functions() -> None:
    ranks = E.gold_ranks(["a.py", "b.py"], ["x.py", "b.py", "y.py", "z.py", "q.py", "a.py"])
    assert ranks == [6, 2]
    assert E.recall_at(ranks, 1) == 0.0 and E.recall_at(ranks, 5) == 0.5 and E.recall_at(ranks, 10) == 1.0
    assert E.reciprocal_rank(ranks) == 0.5
    assert E.reciprocal_rank([None]) == 0.0 and E.recall_at([None], 10) == 0.0


def test_distinct_files_keep_first_occurrence_order() -> None:
    nodes = [{"source_path": "b.py", "kind": "fn"}, {"source_path": "src", "kind": "dir"},
             {"source_path": "a.py", "kind": "class"}, {"source_path": "b.py", "kind": "file"},
             {"source_path": "", "kind": "fn"}]
    assert E.distinct_files(nodes) == ["b.py", "a.py"]


def test_score_averages_over_queries() -> None:
    qs = [E.LocalizationQuery("1" * 40, "alpha beta gamma", ("a.py",)),
          E.LocalizationQuery("2" * 40, "delta epsilon zeta", ("b.py", "c.py"))]
    fixed = {"alpha beta gamma": ["a.py", "b.py"], "delta epsilon zeta": ["x.py", "c.py"]}
    ev = E.score([E.Ranker("fixed", fixed.__getitem__)], qs)
    s = ev.score("fixed")
    assert s.recall == {1: 0.5, 5: 0.75, 10: 0.75}
    assert s.mrr == pytest.approx(0.75) and s.hit_at_10 == 1.0
    assert ev.per_query[1]["ranks"]["fixed"] == [None, 2]
    assert ev.per_query[1]["top"]["fixed"] == ["x.py", "c.py"]


# ------------------------------------------------------------------------------------------------------ FTS5
def test_code_tokens_split_identifiers_and_keep_them_whole() -> None:
    assert code_tokens("HTTPClient.send_request(url) a _private") == [
        "httpclient", "http", "client", "send_request", "send", "request", "url", "private"]


def test_fts5_ranks_by_bm25_and_is_injection_safe() -> None:
    with FileTextIndex() as idx:
        idx.add([("src/pool.py", "class SessionPool:\n    def acquire(self): ...\n"),
                 ("src/db.py", "def connect(url):\n    return Session(url)  # NOT AND OR\n"),
                 ("src/misc.py", "x = 1\n")])
        assert len(idx) == 3
        assert [r for r, _ in idx.search("session pool acquire")][:2] == ["src/pool.py", "src/db.py"]
        assert idx.search("connect")[0][0] == "src/db.py"
        assert idx.search("misc")[0][0] == "src/misc.py"  # the relpath is part of the document
        assert [r for r, _ in idx.search('NOT "AND" OR')] == ["src/db.py"]
        assert idx.search("... !!") == []
        assert idx.search("nothing-matches-this") == []


# ------------------------------------------------------------------------------------------------------ evaluate
def test_evaluate_ranks_the_named_file_first_for_both_rankers(ingested: Workspace, shop_history: Path) -> None:
    s = E.build_localization_set(shop_history)
    ev = E.evaluate(ingested, s)
    assert [x.name for x in ev.scores] == ["m1nd", "fts5"]
    by_query = {pq["query"]: pq for pq in ev.per_query}
    # each of these names a function defined in exactly one file
    for query, gold in (EXPECTED[2], EXPECTED[3]):
        assert by_query[query]["ranks"] == {"m1nd": [1], "fts5": [1]}, by_query[query]["top"]
        assert by_query[query]["gold"] == list(gold)
    fts = ev.score("fts5")
    assert fts.queries == 4 and fts.notes["documents"] == 5
    assert fts.recall[10] == 1.0 and fts.hit_at_10 == 1.0  # 5 candidate files: every answer is in the top 10
    m = ev.score("m1nd")
    assert m.recall[10] == 1.0 and m.mrr >= 0.75
    assert m.notes["semantic_backends"] == {"embedding": 4}  # the hashing embedder, code vectors from the ingest
    assert m.notes["truncated_results"] == 0
    # figures agree with the per-query ranks
    assert m.mrr == pytest.approx(sum(E.reciprocal_rank(pq["ranks"]["m1nd"]) for pq in ev.per_query) / 4)
    d = ev.to_dict()
    assert d["queries"] == 4 and d["rankers"][0]["name"] == "m1nd" and "recall@10" in d["rankers"][1]


def test_evaluate_does_not_change_the_weights(ingested: Workspace, shop_history: Path) -> None:
    g = ingested.graph.graph()
    before = g.engine.weights.copy()
    E.evaluate(ingested, E.build_localization_set(shop_history), baseline=False)
    assert (ingested.graph.graph().engine.weights == before).all()


def test_activate_arguments_and_embeddings_off(ingested: Workspace, shop_history: Path) -> None:
    from m1nd.memory.embeddings import get_embedder

    s = E.build_localization_set(shop_history)
    emb = get_embedder()
    ev = E.evaluate(ingested, s, activate_args={"dimensions": ["structural", "temporal"]}, embeddings=False,
                    baseline=False,
                    extra_rankers=[E.activate_ranker(ingested, name="m1nd-max-hops-1", args={"max_hops": 1})])
    assert [x.name for x in ev.scores] == ["m1nd", "m1nd-max-hops-1"]
    m = ev.score("m1nd")
    assert m.notes["activate_args"]["dimensions"] == ["structural", "temporal"]
    assert m.notes["semantic_backends"] == {"trigram": 4}
    assert ev.score("m1nd-max-hops-1").notes["semantic_backends"] == {"embedding": 4}
    assert get_embedder() is emb  # restored after the ranker's scope


def test_bad_activate_arguments_fail_clearly(ingested: Workspace, shop_history: Path) -> None:
    s = E.build_localization_set(shop_history)
    with pytest.raises(M1ndError, match="activate failed"):
        E.evaluate(ingested, s, activate_args={"dimensions": ["smell"]}, baseline=False)


def test_evaluate_needs_queries(ingested: Workspace) -> None:
    with pytest.raises(InvalidInputError, match="no queries"):
        E.evaluate(ingested, [])


# ------------------------------------------------------------------------------------------------------ ingest
def test_ensure_ingested(fresh_shop: Path, tmp_path: Path) -> None:
    ws = _ws(tmp_path / "home", fresh_shop)
    try:
        assert E.ensure_ingested(ws, fresh_shop) == "ingested"
        assert E.ensure_ingested(ws, fresh_shop) == "up to date"
        (fresh_shop / "src/shop/coupons.py").write_text("def redeem_coupon(code):\n    return code\n")
        git(fresh_shop, "add", "-A")
        git(fresh_shop, "commit", "-q", "-m", "Add redeem_coupon for coupon codes", day=20)
        assert E.ensure_ingested(ws, fresh_shop) == "re-ingested"
        assert "file::src/shop/coupons.py" in ws.graph.graph().nodes.index
        assert E.ensure_ingested(ws, fresh_shop, force=True) == "re-ingested"
        with pytest.raises(InvalidInputError, match="ingested from"):
            E.ensure_ingested(ws, fresh_shop / "src")
    finally:
        ws.close()
