"""Regex fallback for source files without a bundled grammar (graph.md §6): definition nodes for
``def|function|fn|func|class|struct|interface|type NAME`` at the start of a statement, without line ends
(``line_end = line_start``), all directly under the file (``contains`` only, no references)."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest.extract._common import assign_ids, empty_blob, is_test_path, make_def, sha256, signature

EXTRACTOR_VERSION = 2
LANG = "other"

_DEF = re.compile(
    rb"^[ \t]*(?:(?:export|public|private|protected|internal|static|abstract|final|open|sealed|data|async|"
    rb"pub|local|inline|extern|typedef|override)[ \t]+)*"
    rb"(def|function|fn|func|class|struct|interface|type)[ \t]+([A-Za-z_][A-Za-z0-9_]*)",
    re.MULTILINE,
)
_KIND = {
    b"def": "fn",
    b"function": "fn",
    b"fn": "fn",
    b"func": "fn",
    b"class": "class",
    b"struct": "struct",
    b"interface": "interface",
    b"type": "type",
}


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    blob = empty_blob(LANG, EXTRACTOR_VERSION, data, is_test_path(relpath, LANG))
    defs: list[dict[str, Any]] = []
    line = 1
    last = 0
    for m in _DEF.finditer(data):
        line += data.count(b"\n", last, m.start())
        last = m.start()
        eol = data.find(b"\n", m.start())
        if eol == -1:
            eol = len(data)
        defs.append(
            make_def(
                _KIND[m.group(1)],
                m.group(2).decode("ascii"),
                line,
                line,
                signature(data, m.start(), eol, strip_tail="{:"),
                "",
                sha256(data[m.start() : eol]),
            )
        )
    assign_ids(defs)
    blob["definitions"] = defs
    return blob
