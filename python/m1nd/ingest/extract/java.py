"""Java extractor (graph.md §6): classes, records, interfaces, annotation types, enums, methods and
constructors (name = class name; overloads get ``#n``), nested types; package declaration, imports (single,
``.*``, ``static``), calls, ``new``, extends / implements and field / parameter / return / generic type
references."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    comment_doc,
    config_tokens,
    finish_defs,
    import_binding,
    make_def,
    pack_refs,
    parse_or_blob,
    sha256,
    signature,
)

EXTRACTOR_VERSION = 3
LANG = "java"

QUERY = r"""
(package_declaration (_) @pkg)
(class_declaration name: (identifier) @class)
(record_declaration name: (identifier) @class)
(interface_declaration name: (identifier) @iface)
(annotation_type_declaration name: (identifier) @iface)
(enum_declaration name: (identifier) @enum)
(method_declaration name: (identifier) @fn)
(constructor_declaration name: (identifier) @fn)
(compact_constructor_declaration name: (identifier) @fn)
(annotation_type_element_declaration name: (identifier) @fn)
(import_declaration) @imp
(method_invocation) @call
(object_creation_expression type: (_) @new)
(superclass (_) @base)
(super_interfaces (type_list (_) @impl))
(extends_interfaces (type_list (_) @base))
(type_identifier) @tref
(scoped_type_identifier) @sref
(type_parameter (type_identifier) @tparam)
"""

_DOTTED = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
_WSB = re.compile(rb"\s+")
_CAPS = (("class", "class"), ("iface", "interface"), ("enum", "enum"), ("fn", "fn"))


def _txt(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _dotted(node: Any) -> str | None:
    t = node.text
    if _DOTTED.fullmatch(t) is None:
        t = _WSB.sub(b"", t)
        if _DOTTED.fullmatch(t) is None:
            return None
    return t.decode("utf-8", "replace")


def _type_path(node: Any) -> str | None:
    while node is not None and node.type in ("generic_type", "annotated_type"):
        inner = None
        for c in node.named_children:
            if c.type in ("type_identifier", "scoped_type_identifier", "generic_type"):
                inner = c
                break
        node = inner
    if node is None or node.type not in ("type_identifier", "scoped_type_identifier"):
        return None
    return _dotted(node)


def _doc_and_annotations(node: Any) -> tuple[str, list[str]]:
    annotations: list[str] = []
    for c in node.named_children:
        if c.type == "modifiers":
            for m in c.named_children:
                if m.type in ("marker_annotation", "annotation"):
                    nm = m.child_by_field_name("name")
                    if nm is not None:
                        annotations.append(_txt(nm).rsplit(".", 1)[-1])
            break
    prev = node.prev_named_sibling
    doc = ""
    if prev is not None and prev.type == "block_comment" and prev.end_point[0] >= node.start_point[0] - 1:
        t = _txt(prev)
        if t.startswith("/**"):
            doc = comment_doc(t)
    return doc, annotations


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    blob, root = parse_or_blob(LANG, EXTRACTOR_VERSION, relpath, data)
    if root is None:
        return blob
    caps = ts.captures(ts.query(LANG, QUERY), root)
    for node in caps.get("pkg", ()):
        if node.type in ("scoped_identifier", "identifier"):
            blob["package"] = "".join(_txt(node).split())
            break

    defs: list[dict[str, Any]] = []
    spans: list[tuple[int, int, int]] = []
    for cap, kind in _CAPS:
        for name_node in caps.get(cap, ()):
            node = name_node.parent
            body = node.child_by_field_name("body")
            doc, ann = _doc_and_annotations(node)
            s, e = node.start_byte, node.end_byte
            # the signature starts after annotations (modifiers keep public/static/...)
            sig_start = s
            for c in node.named_children:
                if c.type == "modifiers":
                    for m in c.children:
                        if m.type not in ("marker_annotation", "annotation", "line_comment", "block_comment"):
                            sig_start = m.start_byte
                            break
                    else:
                        sig_start = c.end_byte
                    break
            sig = signature(data, sig_start, body.start_byte if body is not None else e, strip_tail="{;")
            is_test = kind == "fn" and "Test" in ann
            spans.append((s, e, len(defs)))
            defs.append(
                make_def(
                    kind,
                    _txt(name_node),
                    node.start_point[0] + 1,
                    node.end_point[0] + 1,
                    sig,
                    doc,
                    sha256(data[s:e]),
                    is_test,
                )
            )
    owners = finish_defs(defs, spans)
    own = owners.owner

    imports: list[dict[str, Any]] = []
    bound: set[str] = set()
    for node in caps.get("imp", ()):
        static = any(c.type == "static" for c in node.children)
        star = any(c.type == "asterisk" for c in node.children)
        target = None
        for c in node.named_children:
            if c.type in ("scoped_identifier", "identifier"):
                target = "".join(_txt(c).split())
        if not target:
            continue
        local = None if star else target.rsplit(".", 1)[-1]
        if local:
            bound.add(local)
        imports.append(
            import_binding(target, node.start_point[0] + 1, names=[] if star else [[local, local]], star=star,
                           static=static)
        )

    refs: list[list[Any]] = []
    add = refs.append
    for node in caps.get("call", ()):
        nm = node.child_by_field_name("name")
        if nm is None:
            continue
        name = _txt(nm)
        obj = node.child_by_field_name("object")
        sb = node.start_byte
        line = node.start_point[0] + 1
        if obj is None:
            add(["call", name, own(sb), line])
            continue
        ot = obj.type
        if ot == "this":
            add(["self", name, own(sb), line])
        elif ot == "super":
            add(["super", name, own(sb), line])
        elif ot in ("identifier", "field_access", "scoped_identifier"):
            d = _dotted(obj)
            if d is None:
                add(["method_call", name, own(sb), line])
                continue
            head = d.split(".", 1)[0]
            if head in bound or head[:1].isupper():
                add(["qualified", f"{d}.{name}", own(sb), line])
            else:
                add(["method_call", name, own(sb), line])
        else:
            add(["method_call", name, own(sb), line])

    skip: set[int] = set()
    for cap, kind in (("base", "base"), ("impl", "implements"), ("new", "new")):
        for node in caps.get(cap, ()):
            p = _type_path(node)
            stack = [node]
            while stack:
                n = stack.pop()
                if n.type in ("type_identifier", "scoped_type_identifier"):
                    if n.parent is not None and n.parent.type == "type_arguments":
                        continue  # generic arguments stay plain references
                    skip.add(n.start_byte)
                stack.extend(n.named_children)
            if p:
                add([kind, p, own(node.start_byte), node.start_point[0] + 1])

    tparams = {_txt(n) for n in caps.get("tparam", ())}
    for node in caps.get("sref", ()):
        par = node.parent
        if par is not None and par.type == "scoped_type_identifier":
            continue  # inner part of a longer path, handled with its outermost node
        sb = node.start_byte
        already = sb in skip
        stack = [node]
        while stack:
            n = stack.pop()
            skip.add(n.start_byte)
            stack.extend(n.named_children)
        d = None if already else _dotted(node)
        if d:
            add(["reference", d, own(sb), node.start_point[0] + 1])
    for node in caps.get("tref", ()):
        sb = node.start_byte
        if sb in skip:
            continue
        name = _txt(node)
        if name in tparams:
            continue
        add(["reference", name, own(sb), node.start_point[0] + 1])

    blob["definitions"] = defs
    blob["references"] = pack_refs(refs)
    blob["imports"] = imports
    blob["config_refs"] = config_tokens(data, root)
    return blob
