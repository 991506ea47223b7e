"""One extractor for C, C++, C#, Ruby, PHP and Kotlin (issue 12 item 6), driven by a tags query per grammar.

Each language is a :class:`Spec`: a tree-sitter query written in the convention of the grammars' own
``queries/tags.scm`` (``@def.<kind>`` on a definition node with its ``@name``; ``@ref.<what>`` on calls, bases,
imports) plus a few small functions that read what a query cannot (a C declarator's name, a call's receiver, an
import's path). The queries are ours, not the packaged ``tags.scm``: those are missing for C# and Kotlin, tag C enums
as types, have no imports, and Ruby's rely on predicates (``#select-adjacent!``, ``#is-not? local``) that py-tree-sitter
does not run. The engine (definitions, containment, ids, docs, signatures, references, imports) is shared.

Kinds: functions, methods, constructors -> ``fn``; classes, records, Kotlin objects -> ``class``; C/C++ structs and
unions, C# structs -> ``struct``; interfaces (PHP / Kotlin / C#) -> ``interface``; PHP traits -> ``trait``; enums ->
``enum``; typedefs, ``using X = …``, type aliases, C# delegates -> ``type``; namespaces and Ruby modules -> ``mod``.
A C++ method defined outside its class (``void Pool::submit() {…}``) keeps its receiver in ``recv`` (like a Go
method) so that the resolver can attach it to the class.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    clean_name,
    comment_doc,
    config_tokens,
    finish_defs,
    make_def,
    pack_refs,
    parse_or_blob,
    sha256,
    signature,
)

EXTRACTOR_VERSION = 1

Ref = list[Any]  # [kind, name, owner, line]


def _txt(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _dotted(text: str, sep: str) -> str:
    """``A::B<T>::c`` / ``A\\B\\c`` -> ``A.B.c`` (template / generic arguments dropped)."""
    out = []
    depth = 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0 and not ch.isspace():
            out.append(ch)
    s = "".join(out).replace(sep, ".").strip(".")
    return s


@dataclass(frozen=True)
class Spec:
    lang: str
    query: str
    #: (definition node, @name node or None, kind) -> (name, kind, recv, span node or None) or None to drop the
    #: definition; the span node replaces the definition node's span (one of several C typedef names)
    name_of: Callable[[Any, Any, str], tuple[str, str, str | None, Any] | None]
    #: (capture, node, ctx) -> adds references / imports to ctx
    ref: Callable[[str, Any, Ctx], None]
    #: comment node types that may hold a definition's doc
    comments: tuple[str, ...] = ("comment",)
    #: package / namespace from the first ``@package`` capture
    package: Callable[[Any], str | None] | None = None
    #: definition headers looked for inside the text of ``ERROR`` nodes (a grammar that gives up on a construct
    #: must not hide the definitions around it): a bytes pattern whose groups ``kw`` and ``name`` give the keyword
    #: (mapped to a kind by ``recover_kinds``) and the name; such a definition spans its header line only
    recover: re.Pattern[bytes] | None = None
    recover_kinds: dict[bytes, str] | None = None


class Ctx:
    __slots__ = ("add", "blob", "imports", "own", "refs")

    def __init__(self, blob: dict[str, Any], own: Callable[[int], int]) -> None:
        self.blob = blob
        self.own = own
        self.refs: list[Ref] = []
        self.add = self.refs.append
        self.imports: list[dict[str, Any]] = []

    def ref(self, kind: str, name: str, node: Any) -> None:
        if name:
            self.add([kind, name, self.own(node.start_byte), node.start_point[0] + 1])


_XML_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def _doc(node: Any, comments: tuple[str, ...]) -> str:
    # a definition that opens a wrapper (Ruby's ``body_statement``) has its comment before the wrapper
    while node.prev_named_sibling is None and node.parent is not None and node.parent.start_byte == node.start_byte:
        node = node.parent
    prev = node.prev_named_sibling
    if prev is None or prev.type not in comments or prev.end_point[0] < node.start_point[0] - 1:
        return ""
    lines = [_txt(prev)]
    cur = prev.prev_named_sibling
    while cur is not None and cur.type in comments and cur.end_point[0] >= prev.start_point[0] - 1 and len(lines) < 40:
        lines.append(_txt(cur))
        prev = cur
        cur = cur.prev_named_sibling
    doc = comment_doc("\n".join(reversed(lines)))
    if "<" in doc:  # C# ``/// <summary>…</summary>``
        doc = " ".join(_XML_TAG.sub(" ", doc).split())
    return doc


def extract_with(spec: Spec, relpath: str, data: bytes) -> dict[str, Any]:
    blob, root = parse_or_blob(spec.lang, EXTRACTOR_VERSION, relpath, data)
    if root is None:
        return blob
    q = ts.query(spec.lang, spec.query)
    defs: list[dict[str, Any]] = []
    spans: list[tuple[int, int, int]] = []
    seen: set[tuple[int, str]] = set()
    other: list[tuple[str, Any]] = []
    for _, caps in ts.matches(q, root):
        def_cap = None
        for cap, nodes in caps.items():
            if cap.startswith("def."):
                def_cap = cap
                node = nodes[0]
            elif cap != "name" and cap[0] != "_":  # ``_x``: captures only read by the query's predicates
                for n in nodes:
                    other.append((cap, n))
        if def_cap is None:
            continue
        name_nodes = caps.get("name")
        got = spec.name_of(node, name_nodes[0] if name_nodes else None, def_cap[4:])
        if got is None:
            continue
        name, kind, recv, span = got
        name = clean_name(name)  # ids split on ``::`` / ``#`` (a Kotlin backticked name may hold anything)
        if not name:
            continue
        if span is not None:
            node = span
        key = (node.start_byte, name)
        if key in seen:
            continue
        seen.add(key)
        s, e = node.start_byte, node.end_byte
        body = node.child_by_field_name("body")
        if body is not None and body.start_byte > s:
            sig = signature(data, s, body.start_byte, strip_tail="{:")
        else:
            eol = data.find(b"\n", s, e)
            sig = signature(data, s, e if eol < 0 else eol, strip_tail="{;")
        extra: dict[str, Any] = {}
        if recv:
            extra["recv"] = recv
            extra["prefix"] = f"recv::{recv}"
        spans.append((s, e, len(defs)))
        # definitions of a test file are tests (as in Python); these languages mark test methods only by
        # annotations or DSL calls the extractor does not interpret
        defs.append(make_def(kind, name, node.start_point[0] + 1, node.end_point[0] + 1, sig,
                             _doc(node, spec.comments), sha256(data[s:e]), blob["is_test"], **extra))
    if root.has_error and spec.recover is not None:
        _recover(spec, root, data, defs, spans, blob["is_test"])
    owners = finish_defs(defs, spans)
    ctx = Ctx(blob, owners.owner)
    for cap, node in other:
        if cap == "package":
            if blob["package"] is None and spec.package is not None:
                blob["package"] = spec.package(node)
        else:
            spec.ref(cap, node, ctx)
    blob["definitions"] = defs
    blob["references"] = pack_refs(ctx.refs)
    blob["imports"] = ctx.imports
    blob["config_refs"] = config_tokens(data, root)
    return blob


def _recover(spec: Spec, root: Any, data: bytes, defs: list[dict[str, Any]], spans: list[tuple[int, int, int]],
             is_test: bool) -> None:
    """Definitions whose headers sit inside ``ERROR`` nodes (outermost ones only), unless already found."""
    assert spec.recover is not None and spec.recover_kinds is not None
    have = {(d["line_start"], d["name"]) for d in defs} | {(d["line_end"], d["name"]) for d in defs}
    errors = ts.captures(ts.query(spec.lang, "(ERROR) @error"), root).get("error", ())
    last_end = -1
    for err in sorted(errors, key=lambda n: (n.start_byte, -n.end_byte)):
        if err.start_byte < last_end:
            continue
        last_end = err.end_byte
        line = err.start_point[0] + 1
        pos = err.start_byte
        for m in spec.recover.finditer(data, err.start_byte, err.end_byte):
            line += data.count(b"\n", pos, m.start("kw"))
            pos = m.start("kw")
            name = clean_name(m.group("name").decode("utf-8", "replace").strip("`"))
            kind = spec.recover_kinds.get(m.group("kw"))
            if kind is None or not name or (line, name) in have:
                continue
            have.add((line, name))
            s = data.rfind(b"\n", 0, pos) + 1
            e = data.find(b"\n", pos)
            e = len(data) if e < 0 else e
            spans.append((s, e, len(defs)))
            defs.append(make_def(kind, name, line, line, signature(data, s, e, strip_tail="{:="), "",
                                 sha256(data[s:e]), is_test))
