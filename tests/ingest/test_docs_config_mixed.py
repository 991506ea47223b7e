"""Markdown sections / mentions, config files / uses_config, a mixed-language repo, broken files, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS
from m1nd.ingest.extract import extract_file, extractor_version
from m1nd.ingest.resolve import resolve

FILES = {
    "README.md": """
        # Project

        Entry point is `main.go` and the pool lives in backend/session_pool.py.

        ## Storage :: WAL #mode

        `SessionPool.acquire` and `release()` manage sessions; `ambiguous()` is defined twice.

        ```python
        # not a heading
        `SessionPool.never` is in a code block
        ```

        ### Deep

        Nothing here.

        # Second
        """,
    "docs/design.md": """
        Preamble mentions `backend/session_pool.py`.

        ## Notes
        See ../README.md and `SessionPool`.
        """,
    "backend/session_pool.py": """
        import json

        CONFIG = "config/settings.yaml"


        class SessionPool:
            def acquire(self):
                with open("app.toml") as f:
                    return json.load(f)

            def release(self):
                pass


        def ambiguous():
            pass
        """,
    "backend/other.py": """
        # "settings.yaml" in a comment does not count
        def ambiguous():
            return "short.ini"
        """,
    "config/settings.yaml": "a: 1\n",
    "app.toml": "[x]\n",
    "short.ini": "[x]\n",
    "web/app.ts": """
        const cfg = "settings.yaml";
        export function start() { return cfg; }
        """,
    "main.go": """
        package main

        func main() {}
        """,
    "tool.swift": """
        class Tool {
          func run() {
          }
        }
        """,
    "broken.py": "def broken(:\n    pass\n",
    "latin1.py": b"x = '\xe9\xe8\xe0\xe7\xf9\xe9\xe8\xe0'\n" * 3,
    "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00",
    "blob.py": b"print(1)\x00\x00\x00",
    "package-lock.json": "{}",
    ".hidden/secret.py": "def s(): pass\n",
    ".github/workflows/ci.yml": "on: push\n",
    "node_modules/dep/index.js": "module.exports = 1;\n",
    "build/out.py": "x = 1\n",
    "weird::name.py": "x = 1\n",
    "hash#name.py": "x = 1\n",
    "data.bin": "not code\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = write_files(tmp_path_factory.mktemp("mixed") / "repo", FILES)
    (root / "link.py").symlink_to(root / "main.go")
    return root


@pytest.fixture(scope="module")
def g(repo):
    return build(repo)


def test_walk_rules(g) -> None:
    files = {k[len("file::") :] for k, n in g.nodes.items() if n.kind == KINDS["file"]}
    assert files == {
        "README.md",
        "docs/design.md",
        "backend/session_pool.py",
        "backend/other.py",
        "config/settings.yaml",
        "app.toml",
        "short.ini",
        "web/app.ts",
        "main.go",
        "tool.swift",
        "broken.py",
    }
    skipped = g.stats["skipped"]
    assert skipped["binary"] == 2  # latin1.py (> 1 % replacement chars) and blob.py (NUL)
    assert skipped["parse_error"] == 1
    assert g.stats["parse_errors"] == {"broken.py": "syntax error at line 1"}
    assert g.stats["languages"] == {
        "config": 3,
        "go": 1,
        "markdown": 2,
        "other": 1,
        "python": 3,
        "typescript": 1,
    }


def test_markdown_sections(g) -> None:
    r = "file::README.md"
    proj = g.node(f"{r}::section::Project")
    assert proj.kind == KINDS["section"] and (proj.line_start, proj.line_end) == (1, 17)
    assert proj.signature == "# Project"
    st = f"{r}::section::Project::section::Storage WAL mode"  # '::' and '#' removed, whitespace collapsed
    assert g.node(st).line_start == 5
    assert g.has(f"{r}::section::Project", st, "contains")
    assert f"{st}::section::Deep" in g.nodes
    assert g.node(f"{r}::section::Second").line_start == 18
    assert not any("not a heading" in k for k in g.nodes)
    assert g.node(r).lang == "markdown"


def test_mentions(g) -> None:
    r = "file::README.md"
    proj = f"{r}::section::Project"
    st = f"{proj}::section::Storage WAL mode"
    assert g.has(proj, "file::main.go", "mentions")
    assert g.has(proj, "file::backend/session_pool.py", "mentions")
    assert g.has(st, "file::backend/session_pool.py::class::SessionPool::fn::acquire", "mentions")
    assert g.has(st, "file::backend/session_pool.py::class::SessionPool::fn::release", "mentions")
    assert not any(d.endswith("::fn::ambiguous") for d, _ in g.out(st, "mentions"))  # not unique
    assert g.out(f"{st}::section::Deep", "mentions") == []  # code-block content is ignored
    assert g.edge(st, "file::backend/session_pool.py::class::SessionPool::fn::acquire", "mentions").w0 == 0.3
    d = "file::docs/design.md"
    assert g.has(d, "file::backend/session_pool.py", "mentions")  # preamble -> the file node
    assert g.has(f"{d}::section::Notes", "file::README.md", "mentions")  # relative to the doc
    assert g.has(f"{d}::section::Notes", "file::backend/session_pool.py::class::SessionPool", "mentions")


def test_uses_config(g) -> None:
    sp = "file::backend/session_pool.py"
    assert g.has(sp, "file::config/settings.yaml", "uses_config")
    assert g.has(sp, "file::app.toml", "uses_config")
    assert g.has("file::web/app.ts", "file::config/settings.yaml", "uses_config")
    assert g.edge(sp, "file::app.toml", "uses_config").w0 == pytest.approx(0.4)
    # "short.ini" has 9 chars but lives in a comment-free string; basename < 5 chars would be ignored;
    # comments never count
    assert not g.has("file::backend/other.py", "file::config/settings.yaml", "uses_config")
    assert g.has("file::backend/other.py", "file::short.ini", "uses_config")
    assert g.node("file::config/settings.yaml").lang == "config"


def test_other_language_fallback(g) -> None:
    t = g.node("file::tool.swift::class::Tool")
    assert t.lang == "other" and t.line_start == t.line_end == 1
    assert g.node("file::tool.swift::fn::run").line_start == 2
    assert g.has("file::tool.swift", "file::tool.swift::fn::run", "contains")


def test_parse_error_keeps_recovered_definitions(g) -> None:
    # the syntax error is reported (above), and what tree-sitter recovered is still extracted
    assert g.node("file::broken.py").kind == KINDS["file"]
    assert g.node("file::broken.py::fn::broken").line_start == 1


def test_dotfiles_and_exclude(repo) -> None:
    g2 = build(repo, include_dotfiles=True)
    assert "file::.hidden/secret.py" in g2.nodes and "file::.github/workflows/ci.yml" in g2.nodes
    assert "file::node_modules/dep/index.js" not in g2.nodes  # always skipped, even with dotfiles
    g3 = build(repo, dotfile_patterns=[".github/**"])
    assert "file::.github/workflows/ci.yml" in g3.nodes and "file::.hidden/secret.py" not in g3.nodes
    g4 = build(repo, exclude=["docs/", "*.toml", "/backend/other.py"])
    assert "file::docs/design.md" not in g4.nodes and "file::app.toml" not in g4.nodes
    assert "file::backend/other.py" not in g4.nodes and "file::backend/session_pool.py" in g4.nodes
    g5 = build(repo, max_file_bytes=40)
    assert g5.stats["skipped"]["large"] > 0 and "file::backend/session_pool.py" not in g5.nodes


def test_determinism(repo, g) -> None:
    again = build(repo)
    assert [n for n in again.parts.nodes] == [n for n in g.parts.nodes]
    assert [e for e in again.parts.edges] == [e for e in g.parts.edges]
    # extraction blobs are JSON and resolve() is a pure function of them
    import json

    blobs = {}
    for rel in ("backend/session_pool.py", "README.md", "main.go"):
        data = (repo / rel).read_bytes()
        lang = {"py": "python", "md": "markdown", "go": "go"}[rel.rsplit(".", 1)[1]]
        b = extract_file(rel, data, lang)
        assert json.loads(json.dumps(b)) == b
        assert b["version"] == extractor_version(lang)
        blobs[rel] = b
    p1 = resolve(blobs, git=None, mtimes={}, namespace="tools")
    p2 = resolve(json.loads(json.dumps(blobs)), git=None, mtimes={}, namespace="tools")
    assert p1 == p2
    assert all(n.ext_id.startswith("tools::") for n in p1.nodes)
    assert "tools::file::backend/session_pool.py::class::SessionPool" in {n.ext_id for n in p1.nodes}
    assert "tools::dir::." in {n.ext_id for n in p1.nodes}
    assert p1.edges and all(e.src.startswith("tools::") and e.dst.startswith("tools::") for e in p1.edges)


def test_warnings_for_bad_paths(repo, tmp_path) -> None:
    import os

    from m1nd.ingest.walker import walk

    wr = walk(repo)
    assert any("weird::name.py" in w for w in wr.warnings)
    assert any("hash#name.py" in w for w in wr.warnings)
    assert [f.relpath for f in wr.files] == sorted(f.relpath for f in wr.files)
    # a file name that is not valid UTF-8 is skipped with a warning (ids must be text)
    root = tmp_path / "bytesname"
    root.mkdir()
    try:
        with open(os.path.join(os.fsencode(root), b"bad\xff.py"), "w") as fh:
            fh.write("x = 1\n")
    except OSError:
        pytest.skip("file system refuses non-UTF-8 names")
    (root / "ok.py").write_text("y = 2\n")
    wr = walk(root)
    assert [f.relpath for f in wr.files] == ["ok.py"]
    assert any("not valid UTF-8" in w for w in wr.warnings)


def test_invariants(g) -> None:
    assert_invariants(g)
