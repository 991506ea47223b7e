"""Regex fallback for source files without a bundled grammar (graph.md §6): definition nodes for
``def|function|fn|func|class|struct|interface|type NAME`` at the start of a statement, without line ends
(``line_end = line_start``), all directly under the file (``contains`` only, no references)."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest.extract._common import assign_ids, empty_blob, is_test_path, make_def, sha256, signature

EXTRACTOR_VERSION = 3
LANG = "other"

_DEF = re.compile(
    rb"^[ \t]*(?:(?:export|public|private|protected|internal|static|abstract|final|open|sealed|data|async|"
    rb"pub|local|inline|extern|typedef|override|cdef|cpdef)[ \t]+)*"
    rb"(def|function|fn|func|class|struct|interface|type)[ \t]+([A-Za-z_][A-Za-z0-9_]*)",
    re.MULTILINE,
)
# Cython's C-level functions: ``cdef [inline] <type> name(`` / ``cpdef <type> name(`` (``.pyx .pxd .pxi``).
_CDEF = re.compile(
    rb"^[ \t]*c(?:p)?def[ \t]+(?:(?:inline|public|api|const|unsigned|signed|long|short|extern)[ \t]+)*"
    rb"[A-Za-z_][\w\[\]:,.]*[ \t*&]+\**([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(",
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
    matches = [(m.start(), _KIND[m.group(1)], m.group(2)) for m in _DEF.finditer(data)]
    if relpath.endswith((".pyx", ".pxd", ".pxi")):
        matches += [(m.start(), "fn", m.group(1)) for m in _CDEF.finditer(data)]
        matches.sort()
    for start, kind, name in matches:
        line += data.count(b"\n", last, start)
        last = start
        eol = data.find(b"\n", start)
        if eol == -1:
            eol = len(data)
        defs.append(
            make_def(
                kind,
                name.decode("ascii"),
                line,
                line,
                signature(data, start, eol, strip_tail="{:"),
                "",
                sha256(data[start:eol]),
            )
        )
    assign_ids(defs)
    blob["definitions"] = defs
    return blob
