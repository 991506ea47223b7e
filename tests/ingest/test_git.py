"""Git-derived temporal data and co-change edges (graph.md §9), walking inside a work tree (§10)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from ingest_helpers import assert_invariants, build, git, write_files
from m1nd.ingest.gitdata import read_git, status, worktree_state
from m1nd.ingest.walker import walk

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

DAY = 86400
BASE = (int(time.time()) // DAY - 30) * DAY  # 30 days ago, on a day boundary: inside the 365-day window


def _commit(root: Path, msg: str, epoch: int, *paths: str) -> None:
    git(root, "add", "-A", *paths)
    git(root, "commit", "-q", "-m", msg, epoch=epoch)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    top = tmp_path_factory.mktemp("git") / "top"
    write_files(
        top,
        {
            "sub/a.py": "def fa():\n    return 1\n",
            "sub/b.py": "from a import fa\n\ndef fb():\n    return fa()\n",
            "sub/c.py": "def fc():\n    pass\n",
            "sub/.gitignore": "ignored.py\n",
            "outside.py": "x = 1\n",
        },
    )
    git(top, "init", "-q", "-b", "main")
    _commit(top, "init", BASE)
    for k in range(3):  # a and b change together three times
        for rel in ("sub/a.py", "sub/b.py"):
            with open(top / rel, "a") as fh:
                fh.write(f"# change {k}\n")
        _commit(top, f"ab {k}", BASE + (k + 1) * DAY)
    with open(top / "sub/c.py", "a") as fh:  # c alone, plus outside
        fh.write("# c\n")
    with open(top / "outside.py", "a") as fh:
        fh.write("# o\n")
    _commit(top, "c", BASE + 5 * DAY)
    # a sweep touching 60 files (a, c and 58 new ones) never counts for co-change
    for i in range(58):
        (top / f"sub/gen/g{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (top / f"sub/gen/g{i}.py").write_text(f"x = {i}\n")
    for rel in ("sub/a.py", "sub/c.py"):
        with open(top / rel, "a") as fh:
            fh.write("# sweep\n")
    _commit(top, "sweep", BASE + 6 * DAY)
    # work-tree only: an untracked file, an ignored file
    (top / "sub/new.py").write_text("def fn():\n    pass\n")
    (top / "sub/ignored.py").write_text("x = 1\n")
    return top


def test_read_git_subdirectory_root(repo) -> None:
    gd = read_git(repo / "sub")
    assert gd.available and gd.reason is None and gd.head and len(gd.head) == 40
    assert gd.commits_read == 6
    assert "outside.py" not in gd.files and "sub/a.py" not in gd.files  # root-relative, outside ignored
    assert gd.files["a.py"] == ((BASE + 6 * DAY) * 1000, 5)
    assert gd.files["b.py"] == ((BASE + 3 * DAY) * 1000, 4)
    assert gd.files["c.py"] == ((BASE + 6 * DAY) * 1000, 3)
    assert gd.churn("a.py") == pytest.approx(5 / 50)
    # a,b: n = 3 (the init commit has 5 files -> counts too: n = 4), s = n / min(5, 4)
    pairs = {(a, b): (n, s) for a, b, n, s in gd.co_change}
    assert pairs[("a.py", "b.py")] == (4, pytest.approx(1.0))
    # c co-changed with a/b only in the init commit (n = 1) and in the sweep (ignored)
    assert ("a.py", "c.py") not in pairs and ("b.py", "c.py") not in pairs
    assert all(a < b for a, b, _, _ in gd.co_change)


def test_read_git_window(repo) -> None:
    # the window ends at HEAD's commit, not at the wall clock: one day holds the newest commits only
    everything = read_git(repo / "sub")
    gd = read_git(repo / "sub", window_days=1)
    newest = max(ms for ms, _ in everything.files.values())
    assert gd.available and 1 <= gd.commits_read < everything.commits_read
    assert gd.files and all(newest - ms <= DAY * 1000 for ms, _ in gd.files.values())
    gd = read_git(repo / "sub", max_commits=2)
    assert gd.commits_read == 2


def test_read_git_window_of_an_archived_repository(tmp_path) -> None:
    """Commits from years ago (an archived project, or a checkout of an old commit) still count."""
    old = BASE - 3 * 365 * DAY
    _commit_repo = tmp_path / "old"
    _commit_repo.mkdir()
    git(_commit_repo, "init", "-q")
    (_commit_repo / "x.py").write_text("x = 1\n")
    _commit(_commit_repo, "one", old, "x.py")
    (_commit_repo / "x.py").write_text("x = 2\n")
    _commit(_commit_repo, "two", old + DAY, "x.py")
    gd = read_git(_commit_repo, window_days=365)
    assert gd.commits_read == 2 and gd.files["x.py"] == ((old + DAY) * 1000, 2)


def test_walk_uses_git_ls_files(repo) -> None:
    wr = walk(repo / "sub")
    rels = [f.relpath for f in wr.files]
    assert wr.source == "git"
    assert "new.py" in rels  # untracked but not ignored
    assert "ignored.py" not in rels  # .gitignore honoured
    assert "a.py" in rels and "outside.py" not in rels
    assert all(not r.startswith("sub/") for r in rels)


def test_graph_temporal_and_co_changes(repo) -> None:
    g = build(repo / "sub")
    a = g.node("file::a.py")
    assert a.last_change_ms == (BASE + 6 * DAY) * 1000 and a.commit_count == 5
    assert a.churn == pytest.approx(0.1)
    fa = g.node("file::a.py::fn::fa")  # symbols inherit their file's temporal data
    assert (fa.last_change_ms, fa.commit_count, fa.churn) == (a.last_change_ms, 5, a.churn)
    new = g.node("file::new.py")  # no commit: mtime, no churn
    assert new.commit_count == 0 and new.churn == 0.0
    assert abs(new.last_change_ms - os.stat(repo / "sub/new.py").st_mtime_ns // 1_000_000) <= 1
    e = g.edge("file::a.py", "file::b.py", "co_changes")
    assert e.w0 == pytest.approx(0.2 + 0.6 * 1.0) and e.count == 4
    assert g.stats["git"]["available"] and g.stats["git"]["co_change_edges"] == 1
    assert g.has("file::b.py", "file::a.py", "imports")
    assert_invariants(g)


def test_no_git(tmp_path) -> None:
    root = write_files(tmp_path / "plain", {"m.py": "def f():\n    pass\n"})
    gd = read_git(root)
    assert not gd.available and gd.reason and gd.files == {} and gd.co_change == []
    assert worktree_state(root) is None
    st = status(root)
    assert st["available"] is False and st["missing_git"] is False
    g = build(root)
    n = g.node("file::m.py")
    assert n.last_change_ms == os.stat(root / "m.py").st_mtime_ns // 1_000_000 and n.churn == 0.0
    assert g.stats["git"]["available"] is False


def test_status(repo) -> None:
    st = status(repo / "sub")
    assert st["available"] and st["toplevel"] == str(repo) and len(st["head"]) == 40
    gd = read_git(repo / "sub", window_days=30)
    assert (gd.window_days, gd.max_commits) == (30, 5000)


def test_worktree_state(repo) -> None:
    s1 = worktree_state(repo / "sub")
    assert s1 is not None and s1 == worktree_state(repo / "sub")
    p = repo / "sub/c.py"
    old = p.read_text()
    p.write_text(old + "# dirty\n")
    try:
        assert worktree_state(repo / "sub") != s1
    finally:
        p.write_text(old)
    assert worktree_state(repo / "sub") == s1


OUTPUT_DIRS = ("build", "env", "dist", "vendor", "target")


def test_tracked_files_in_output_named_directories_are_ingested(tmp_path: Path) -> None:
    # issue 14: a project may keep sources in build/ or vendored code in vendor/; what git tracks is the project
    top = tmp_path / "proj"
    write_files(top, {f"{d}/src_{d}.py": f"def in_{d}():\n    pass\n" for d in OUTPUT_DIRS})
    write_files(top, {"app.py": "x = 1\n"})
    git(top, "init", "-q", "-b", "main")
    _commit(top, "init", BASE)
    write_files(top, {f"{d}/generated_{d}.py": "y = 2\n" for d in OUTPUT_DIRS})  # untracked, not ignored
    write_files(top, {"node_modules/m/index.js": "module.exports = 1;\n"})
    git(top, "add", "-f", "node_modules/m/index.js")
    rels = {f.relpath for f in walk(top).files}
    assert rels == {"app.py", *(f"{d}/src_{d}.py" for d in OUTPUT_DIRS)}


def test_without_git_gitignore_files_are_honoured(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, {
        ".gitignore": "secret/\n*.gen.py\n!keep.gen.py\n/top_only.py\n",
        "a.py": "x = 1\n", "x.gen.py": "x = 1\n", "keep.gen.py": "x = 1\n", "top_only.py": "x = 1\n",
        "secret/s.py": "x = 1\n", "sub/top_only.py": "x = 1\n", "sub/.gitignore": "local.py\n!x.gen.py\n",
        "sub/local.py": "x = 1\n", "sub/x.gen.py": "x = 1\n", "other/local.py": "x = 1\n",
        "build/out.py": "x = 1\n",
    })
    w = walk(root)
    assert w.source == "scandir"
    assert {f.relpath for f in w.files} == {"a.py", "keep.gen.py", "sub/top_only.py", "sub/x.gen.py",
                                            "other/local.py"}
