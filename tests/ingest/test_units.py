"""Unit tests of the pipeline's building blocks: gitignore matcher, language detection, read_text, blobs,
extract_many, id assignment and the relation / kind tables."""

from __future__ import annotations

import json

import pytest
from m1nd.graph import schema
from m1nd.ingest.extract import extract_file, extract_many, extractor_version
from m1nd.ingest.extract._common import Owners, assign_ids
from m1nd.ingest.extract.config import strip_jsonc
from m1nd.ingest.walker import GitignoreMatcher, detect_lang, read_text


@pytest.mark.parametrize(
    "patterns,path,hit",
    [
        (["*.py"], "a/b/c.py", True),
        (["*.py"], "a/b/c.pyc", False),
        (["/c.py"], "a/c.py", False),
        (["/c.py"], "c.py", True),
        (["docs/"], "docs/x.md", True),
        (["docs/"], "docs", False),  # a file named docs is not a directory
        (["docs/"], "a/docs/x.md", True),
        (["a/**/z.py"], "a/z.py", True),
        (["a/**/z.py"], "a/b/c/z.py", True),
        (["a/**"], "a/b/c.py", True),
        (["**/gen/*"], "x/gen/y.py", True),
        (["file?.py"], "file1.py", True),
        (["file[0-9].py"], "file7.py", True),
        (["file[!0-9].py"], "file7.py", False),
        (["*.py", "!keep.py"], "keep.py", False),
        (["*.py", "!keep.py"], "drop.py", True),
        (["# comment", ""], "x.py", False),
        ([".github/*"], ".github/ci.yml", True),
        ([".github/*"], ".github/workflows/ci.yml", True),  # matches the directory .github/workflows
    ],
    ids=lambda v: str(v),
)
def test_gitignore_matcher(patterns, path, hit) -> None:
    assert GitignoreMatcher(patterns).matches(path) is hit


def test_prunes_dir() -> None:
    assert GitignoreMatcher(["site-packages/"]).prunes_dir("site-packages")
    assert not GitignoreMatcher(["site-packages/", "!x"]).prunes_dir("site-packages")
    assert not GitignoreMatcher(["*.py"]).prunes_dir("src")


@pytest.mark.parametrize(
    "path,lang",
    [
        ("a.py", "python"),
        ("a.pyi", "python"),
        ("a.js", "javascript"),
        ("a.mjs", "javascript"),
        ("a.jsx", "javascript"),
        ("a.ts", "typescript"),
        ("a.d.ts", "typescript"),
        ("a.tsx", "tsx"),
        ("a.go", "go"),
        ("a.rs", "rust"),
        ("A.java", "java"),
        ("README.md", "markdown"),
        ("x.markdown", "markdown"),
        ("c.toml", "config"),
        ("c.yml", "config"),
        ("c.json", "config"),
        ("setup.cfg", "config"),
        ("x/.env.example", "config"),
        ("go.mod", "config"),
        ("m.c", "c"),
        ("m.h", "c"),
        ("m.cc", "cpp"),
        ("m.hpp", "cpp"),
        ("M.cs", "csharp"),
        ("m.rb", "ruby"),
        ("m.php", "php"),
        ("m.kt", "kotlin"),
        ("build.gradle.kts", "kotlin"),
        ("m.swift", "other"),
        ("m.lua", "other"),
        ("Makefile", None),
        ("x.png", None),
        ("x.txt", None),
        (".bashrc", None),
    ],
    ids=lambda v: str(v),
)
def test_detect_lang(path, lang) -> None:
    assert detect_lang(path) == lang


def test_read_text(tmp_path) -> None:
    p = tmp_path / "f"
    p.write_bytes("héllo\n".encode())
    assert read_text(p) == ("héllo\n".encode(), "héllo\n")
    p.write_bytes(b"ab\x00cd")
    assert read_text(p) is None
    p.write_bytes(b"a" * 200 + b"\xff")  # 1 bad byte in 201 chars: < 1 %
    assert read_text(p) is not None
    p.write_bytes(b"a" * 50 + b"\xff")
    assert read_text(p) is None
    with pytest.raises(OSError):
        read_text(tmp_path / "missing")


def test_blob_shape_python() -> None:
    src = b'''"""Doc."""
import os.path as osp
from ..pkg import a as b, c
from . import *

@deco
class A(B, metaclass=M):
    def m(self, x: "T") -> List[int]:
        self.n()
        return cfg("my_app.yaml")
'''
    b = extract_file("x/y.py", src, "python")
    assert b["lang"] == "python" and b["version"] == extractor_version("python")
    assert b["line_count"] == 10 and len(b["content_hash"]) == 64 and b["parse_error"] is None
    assert b["doc"] == "Doc."
    defs = {d["id"]: d for d in b["definitions"]}
    assert set(defs) == {"class::A", "class::A::fn::m"}
    assert defs["class::A"]["line_start"] == 6 and defs["class::A"]["line_end"] == 10
    assert defs["class::A::fn::m"]["parent"] == 0 and defs["class::A::fn::m"]["qname"] == "A.m"
    refs = {(r[0], r[1], r[2]) for r in b["references"]}
    assert ("decorator", "deco", 0) in refs
    assert ("base", "B", 0) in refs and not any(r[1] == "M" for r in refs if r[0] == "base")
    assert ("self", "n", 1) in refs and ("call", "cfg", 1) in refs
    assert ("reference", "List", 1) in refs and ("reference", "int", 1) in refs
    imports = b["imports"]
    assert imports[0] == {
        "module": "os.path",
        "names": [],
        "alias": "osp",
        "level": 0,
        "reexport": False,
        "star": False,
        "line": 2,
    }
    assert imports[1]["level"] == 2 and imports[1]["module"] == "pkg"
    assert imports[1]["names"] == [["a", "b"], ["c", "c"]]
    assert imports[2]["star"] and imports[2]["level"] == 1
    assert b["config_refs"] == ["my_app.yaml"]
    assert json.loads(json.dumps(b)) == b


def test_parse_error_blob() -> None:
    b = extract_file("bad.go", b"package x\nfunc (\n", "go")
    assert b["parse_error"].startswith("syntax error at line")
    assert b["definitions"] == [] and b["references"] == [] and b["imports"] == []
    assert b["line_count"] == 2


def test_extract_many_parallel_equals_serial() -> None:
    items = [(f"m{i}.py", f"def f{i}():\n    return g{i}()\n".encode(), "python") for i in range(30)]
    items.append(("x.go", b"package x\nfunc F() {}\n", "go"))
    serial = extract_many(items, workers=1)
    parallel = extract_many(items, workers=2)
    assert serial == parallel
    assert [b["definitions"][0]["name"] for b in serial[:3]] == ["f0", "f1", "f2"]


def test_extract_many_in_a_threaded_process() -> None:
    """With other threads alive the pool must not fork (forkserver / spawn); results are identical."""
    import threading

    items = [
        (f"m{i}.py", f"class C{i}:\n    def m(self):\n        self.n()\n".encode(), "python")
        for i in range(8)
    ]
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert extract_many(items, workers=2) == extract_many(items, workers=1)
    finally:
        stop.set()
        t.join()


def test_owners_and_ids() -> None:
    spans = [(0, 100, 0), (10, 50, 1), (20, 30, 2), (60, 90, 3)]
    o = Owners(spans, 4)
    assert o.parents == [-1, 0, 1, 0]
    assert [o.owner(p) for p in (0, 5, 15, 25, 35, 55, 70, 95, 150)] == [0, 0, 1, 2, 1, 0, 3, 0, -1]
    defs = [
        {"kind": "class", "name": "A", "parent": -1},
        {"kind": "fn", "name": "get", "parent": 0},
        {"kind": "fn", "name": "get", "parent": 0},
        {"kind": "fn", "name": "get", "parent": -1},
        {"kind": "fn", "name": "Submit", "parent": -1, "prefix": "recv::Pool", "qprefix": "Pool"},
    ]
    assign_ids(defs)
    assert [d["id"] for d in defs] == [
        "class::A",
        "class::A::fn::get",
        "class::A::fn::get#2",
        "fn::get",
        "recv::Pool::fn::Submit",
    ]
    assert defs[4]["qname"] == "Pool.Submit" and defs[2]["qname"] == "A.get"


def test_strip_jsonc() -> None:
    text = '{\n // c\n "a": "x//y", /* b */ "b": [1, 2,],\n}'
    assert json.loads(strip_jsonc(text)) == {"a": "x//y", "b": [1, 2]}


def test_schema_tables() -> None:
    assert (
        schema.KINDS["dir"] == 0
        and schema.KINDS["section"] == 11
        and len(schema.KINDS) == 13
        and schema.KINDS["macro"] == 12
    )
    assert [r.code for r in schema.RELATIONS] == list(range(12))
    assert schema.RELATIONS[schema.CALLS] == (2, "calls", 0.5, 0.8, 0.5, "called_by")
    assert schema.RELATION_CODES["co_changes"] == 7 and schema.INVERSE_RELATION_CODES["tested_by"] == 6
    for r in schema.RELATIONS:
        assert schema.W_MIN <= r.w0 <= schema.W_MAX
    from m1nd.ingest.schema import KINDS

    assert KINDS is schema.KINDS


def test_python_test_symbols() -> None:
    src = b"def testmod():\n    pass\n\ndef test_x():\n    pass\n\nclass TestCase:\n    pass\n"
    regular = {d["name"]: d["is_test"] for d in extract_file("doctest_like.py", src, "python")["definitions"]}
    assert regular == {"testmod": False, "test_x": True, "TestCase": False}
    in_tests = {d["name"]: d["is_test"] for d in extract_file("tests/t.py", src, "python")["definitions"]}
    assert in_tests == {"testmod": True, "test_x": True, "TestCase": True}


@pytest.mark.parametrize("lang", ["python", "javascript", "rust", "c", "cpp", "csharp", "ruby", "php", "kotlin"])
def test_deeply_nested_line_is_bounded_and_reported(lang: str) -> None:
    # one line of 50,000 nested calls: the query cursor starts no match below MAX_START_DEPTH (without the bound
    # ~40 s on such a line), and the blob says what was left out
    n = 50_000
    body = b"f(" * n + b")" * n
    src = {"python": b"x = " + body + b"\n", "javascript": b"x = " + body + b";\n",
           "rust": b"fn main() { " + body + b"; }\n", "c": b"int main(void) { return " + body + b"; }\n",
           "cpp": b"int main() { return " + body + b"; }\n",
           "csharp": b"class A { int M() { return " + body + b"; } }\n",
           "ruby": b"def m\n  " + body + b"\nend\n", "php": b"<?php function m() { return " + body + b"; }\n",
           "kotlin": b"fun m() = " + body + b"\n"}[lang]
    b = extract_file("p.x", src, lang)
    assert b["parse_error"] is None
    # cut by depth, or earlier by the captured-bytes budget (the shape of the tree differs per grammar)
    assert "deeper than 4000 levels" in b["cut"] or "nested too deeply for its size" in b["cut"]


def _cpu(fn) -> float:
    import time

    best = float("inf")
    for _ in range(2):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return max(best, 1e-3)


@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_long_call_chain_work_grows_linearly(lang: str) -> None:
    # `a.b().b()….b()`: every call's callee spans the whole chain before it, so reading the captured text is
    # quadratic (20,000 calls: 9 s) unless the captured bytes are bounded; x4 calls must cost well under x16
    def src(n: int) -> bytes:
        return b"def g():\n    pass\n" * (lang == "python") + b"x = a" + b".b()" * n + b";\n" * (lang != "python") \
            + b"\n" * (lang == "python")

    ratios = []
    for _ in range(3):
        small, big = src(5_000), src(20_000)
        ratios.append(_cpu(lambda: extract_file("p.x", big, lang)) / _cpu(lambda: extract_file("p.x", small, lang)))
        if ratios[-1] < 10:
            break
    assert min(ratios) < 10, ratios
    b = extract_file("p.x", src(20_000), lang)
    assert "nested too deeply for its size" in b["cut"]
    if lang == "python":
        assert [d["name"] for d in b["definitions"]] == ["g"]  # shallow definitions survive the bound


def test_ordinary_code_is_never_cut() -> None:
    src = b"".join(b"def f%d(x):\n    return g(h(x), [i for i in range(3)])\n" % i for i in range(2000))
    assert "cut" not in extract_file("p.py", src, "python")
