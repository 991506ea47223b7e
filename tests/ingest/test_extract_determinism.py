"""Extraction is a function of the file's text: the same text extracted again (a fresh parse tree, in the same
process) gives the same extract, lists in the same order, and references in source order. The tree-sitter binding
returns a capture name's nodes in an order that follows where the nodes live in memory; the extractors emit
references and imports in capture order, so before the captures were sorted two extractions of one file could list
them differently (and the resolver, where the first import binding of a name wins, could differ too)."""

from __future__ import annotations

import pytest

from m1nd.ingest.extract import extract_file

N = 60


def _python() -> bytes:
    parts = ["import os\nimport sys as system\nfrom collections import OrderedDict, deque\n"]
    for i in range(N):
        parts.append(
            f"def helper_{i}(x):\n"
            f"    y = os.path.join(str(x), 'a{i}')\n"
            f"    z = deque([y]).pop()\n"
            f"    system.exit(len(z)) if x else print(repr(y), ord('{i % 10}'), chr({i}))\n"
            f"    return helper_{(i + 1) % N}(isinstance(x, int))\n"
        )
    return "".join(parts).encode()


def _javascript() -> bytes:
    parts = ["const fs = require('fs');\nimport { join } from 'path';\n"]
    for i in range(N):
        parts.append(
            f"function helper{i}(x) {{\n  const y = join(String(x), 'a{i}');\n"
            f"  fs.readFileSync(y).toString().trim();\n  return helper{(i + 1) % N}(parseInt(y, 10));\n}}\n"
        )
    return "".join(parts).encode()


def _go() -> bytes:
    parts = ['package demo\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\n']
    for i in range(N):
        parts.append(
            f"func helper{i}(x string) int {{\n\ty := strings.TrimSpace(x)\n\tfmt.Println(len(y))\n"
            f"\treturn helper{(i + 1) % N}(strings.ToUpper(y))\n}}\n\n"
        )
    return "".join(parts).encode()


def _c() -> bytes:
    parts = ["#include <stdio.h>\n#include \"demo.h\"\n\n"]
    for i in range(N):
        parts.append(
            f'int helper{i}(int x) {{\n  printf("%d", x);\n  puts("a{i}");\n  return helper{(i + 1) % N}(abs(x));\n}}\n'
        )
    return "".join(parts).encode()


SOURCES = {"python": ("pkg/demo.py", _python), "javascript": ("src/demo.js", _javascript),
           "go": ("demo/demo.go", _go), "c": ("src/demo.c", _c)}


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_same_text_same_extract(lang: str) -> None:
    relpath, make = SOURCES[lang]
    data = make()
    first = extract_file(relpath, data, lang)
    assert first["references"] and first["definitions"]
    for _ in range(4):
        again = extract_file(relpath, data, lang)
        assert again["imports"] == first["imports"]
        assert again["references"] == first["references"]
        assert again["definitions"] == first["definitions"]


def test_python_references_in_source_order() -> None:
    """Within one function the calls are listed in the order they are written (first occurrence)."""
    blob = extract_file("pkg/demo.py", _python(), "python")
    fns = [i for i, d in enumerate(blob["definitions"]) if d["name"] == "helper_7"]
    calls = [r[1] for r in blob["references"] if r[2] == fns[0] and r[0] == "call"]
    assert calls == ["str", "deque", "len", "print", "repr", "ord", "chr", "helper_8", "isinstance"]
    imports = [(i["module"], i["line"]) for i in blob["imports"]]
    assert imports == [("os", 1), ("sys", 2), ("collections", 3)]
