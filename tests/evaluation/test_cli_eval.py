"""``m1nd eval`` end to end on the shop repository's real git history (see ``conftest.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from m1nd.cli.app import run

from .conftest import EXPECTED, git


@pytest.fixture
def m1nd(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    home = tmp_path / "home"

    def invoke(*argv: str, cwd: Path) -> tuple[int, str, str]:
        import os

        old = Path.cwd()
        os.chdir(cwd)
        try:
            code = run(["--home", str(home), *argv])
        finally:
            os.chdir(old)
        out = capsys.readouterr()
        return code, out.out, out.err

    return invoke


def _row(out: str, label: str) -> list[float]:
    line = next(x for x in out.splitlines() if x.startswith(label))
    return [float(v) for v in line[len(label):].split()]


def test_eval_table_ingests_first_and_ranks_named_functions_first(m1nd, fresh_shop: Path) -> None:
    code, out, err = m1nd("eval", cwd=fresh_shop / "src")  # the workspace is the git top-level
    assert code == 0, err
    assert "ingested" in err
    lines = out.splitlines()
    assert re.fullmatch(rf"Change localization on {re.escape(str(fresh_shop))} \(HEAD [0-9a-f]{{12}}\): 4 queries "
                        r"from 13 commits, 5 candidate files", lines[0])
    assert lines[1].split() == ["ranker", "queries", "R@1", "R@5", "R@10", "MRR", "hit@10", "p50", "ms"]
    m, bm25 = _row(out, "m1nd activate"), _row(out, "BM25 (FTS5)")
    assert m[0] == bm25[0] == 4
    assert bm25[3] == 1.0 and m[3] == 1.0  # recall@10: 5 candidate files
    assert m[4] >= 0.75 and bm25[4] >= 0.75  # MRR
    assert "activate semantic backend:" in out
    # the graph is up to date now: no second ingest
    code, out, err = m1nd("eval", "--details", cwd=fresh_shop)
    assert code == 0 and "ingested" not in err
    rows = [re.fullmatch(r"([0-9a-f]{8})  m1nd (\S+)\s+fts5 (\S+)\s+(.+) -> (.+)", line) for line in out.splitlines()]
    detail = {m.group(4): m.groups() for m in rows if m}
    assert list(detail) == [q for q, _ in EXPECTED]
    assert detail["Compute shipping_cost from weight and destination country"][1:3] == ("1", "1")
    assert detail[EXPECTED[1][0]][4] == "src/shop/cart.py, src/shop/pricing.py"


def test_eval_json(m1nd, fresh_shop: Path) -> None:
    code, out, err = m1nd("eval", "--json", "--max-queries", "2", "--no-embeddings", "--dimensions",
                          "structural,temporal", cwd=fresh_shop)
    assert code == 0, err
    r = json.loads(out)
    assert r["queries"] == 2 and r["set"]["commits_scanned"] == 2  # the two newest commits are usable
    assert [x["name"] for x in r["rankers"]] == ["m1nd", "fts5"]
    m = r["rankers"][0]
    assert m["notes"]["activate_args"]["dimensions"] == ["structural", "temporal"]
    assert m["notes"]["semantic_backends"] == {"trigram": 2}
    assert [pq["query"] for pq in r["per_query"]] == [q for q, _ in EXPECTED[:2]]
    assert all(set(pq["ranks"]) == {"m1nd", "fts5"} for pq in r["per_query"])


def test_eval_reingests_after_a_commit(m1nd, fresh_shop: Path) -> None:
    assert m1nd("eval", "--max-queries", "1", cwd=fresh_shop)[0] == 0
    (fresh_shop / "src/shop/coupons.py").write_text("def redeem_coupon(code):\n    return code\n")
    git(fresh_shop, "add", "-A")
    git(fresh_shop, "commit", "-q", "-m", "Add redeem_coupon for coupon codes", day=20)
    code, out, err = m1nd("eval", "--json", cwd=fresh_shop)
    assert code == 0 and "re-ingested" in err
    first = json.loads(out)["per_query"][0]
    assert first["query"] == "Add redeem_coupon for coupon codes"
    assert first["ranks"] == {"m1nd": [1], "fts5": [1]}


def test_eval_outside_a_git_repository(m1nd, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n")
    code, out, err = m1nd("eval", "--workspace", str(plain), cwd=plain)
    assert code == 1 and out == ""
    assert err.startswith(f"Error (invalid_argument): {plain} is not inside a git work tree")
    assert "Recover:" in err


def test_eval_without_usable_commits(m1nd, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("# hi\n")
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    (repo / "README.md").write_text("# hi there\n")
    git(repo, "commit", "-q", "-am", "Explain the project in the README")
    code, out, err = m1nd("eval", cwd=repo)
    assert code == 1 and out == ""
    assert err.startswith(f"Error (not_found): no usable commits in {repo}: 2 commits read, skipped: "
                          "1 no source files (docs, config or tests only), 1 short")
    assert not (tmp_path / "home" / "workspaces").exists() or not any((tmp_path / "home" / "workspaces").iterdir())


def test_eval_no_ingest_on_an_empty_graph(m1nd, fresh_shop: Path) -> None:
    code, out, err = m1nd("eval", "--no-ingest", cwd=fresh_shop)
    assert code == 1 and out == ""
    assert err.startswith("Error (graph_empty): the graph is empty and --no-ingest was given Recover: run `m1nd "
                          f"ingest {fresh_shop}` first")


def test_eval_refuses_a_graph_of_another_root(m1nd, fresh_shop: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.py").write_text("def b():\n    pass\n")
    assert m1nd("--workspace", str(fresh_shop), "ingest", str(other), cwd=tmp_path)[0] == 0
    code, out, err = m1nd("eval", cwd=fresh_shop)
    assert code == 1 and out == ""
    assert err.startswith(f"Error (invalid_argument): this workspace's graph was ingested from {other.resolve()}")
