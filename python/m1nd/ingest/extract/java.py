"""Java extractor (graph.md §6): classes, records, interfaces, annotation types, enums, methods and
constructors (name = class name; overloads get ``#n``), nested types; package declaration, imports (single,
``.*``, ``static``), calls, ``new``, extends / implements and field / parameter / return / generic type
references."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    UNKNOWN_TYPE,
    ScopeTypes,
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

EXTRACTOR_VERSION = 4
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
(field_declaration) @jfield
(local_variable_declaration) @jlocal
(formal_parameter) @jparam
(catch_formal_parameter) @jparam
(enhanced_for_statement) @jparam
(lambda_expression parameters: (_) @jlam)
(resource) @jparam
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



# ------------------------------------------------------------------------------------------ receiver types
# (type expressions as in the Python extractor: ``T`` a type, ``@`` the enclosing class, ``>field`` segments)


def _jtype(node: Any) -> str | None:
    """``Foo`` / ``a.b.Foo`` / ``Foo<T>`` (-> ``Foo``); primitives, arrays and ``var`` give None."""
    if node is None:
        return None
    if node.type == "generic_type" and node.named_child_count:
        node = node.named_child(0)
    if node.type in ("type_identifier", "scoped_type_identifier"):
        d = _dotted(node)
        return None if d in (None, "var") else d
    return None


def _collect_types(caps: dict[str, list[Any]], defs: list[dict[str, Any]], own: Any, wanted: set[str]) -> ScopeTypes:
    """Declared types of fields (class attributes), locals, parameters, for-each and catch variables; ``var x =
    new Foo()`` takes the created type; lambda parameters have none."""
    types = ScopeTypes(defs, wanted)
    kind_of = [d["kind"] for d in defs]
    for cap in ("jfield", "jlocal"):
        for node in caps.get(cap, ()):
            o = own(node.start_byte)
            ty = _jtype(node.child_by_field_name("type"))
            for dec in node.children_by_field_name("declarator"):
                nm = dec.child_by_field_name("name")
                if nm is None:
                    continue
                val = ty
                if val is None:
                    v = dec.child_by_field_name("value")
                    if v is not None and v.type == "object_creation_expression":
                        val = _jtype(v.child_by_field_name("type"))
                if cap == "jfield" and o >= 0 and kind_of[o] in ("class", "enum", "interface"):
                    types.bind_attr(o, _txt(nm), val or UNKNOWN_TYPE, o, declared=True)
                else:
                    types.bind(o, _txt(nm), val or UNKNOWN_TYPE, declared=True)
    for node in caps.get("jparam", ()):
        nm = node.child_by_field_name("name")
        if nm is None or nm.type != "identifier" or _txt(nm) not in wanted:
            continue
        ty = node.child_by_field_name("type")
        if ty is None and node.named_child_count and node.type == "catch_formal_parameter":
            ty = next((c for c in node.named_children if c.type == "catch_type"), None)
            ty = ty.named_child(0) if ty is not None and ty.named_child_count == 1 else None
        types.bind(own(node.start_byte), _txt(nm), _jtype(ty) or UNKNOWN_TYPE, declared=True)
    for node in caps.get("jlam", ()):
        o = own(node.start_byte)
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "identifier":
                types.bind(o, _txt(n), UNKNOWN_TYPE, declared=True)
            else:
                stack.extend(n.named_children)
    return types


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
    wanted: set[str] = set()
    for node in caps.get("call", ()):
        obj = node.child_by_field_name("object")
        if obj is not None and obj.type == "identifier":
            wanted.add(_txt(obj))
    types = _collect_types(caps, defs, own, wanted)
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
        o = own(sb)
        if ot == "identifier":
            head = _txt(obj)
            recv = types.lookup(o, head)
            if recv:
                add(["typed_call", f"{recv}:{name}", o, line])
                continue
            if recv is None and head not in bound and not head[:1].isupper() and o >= 0:
                add(["typed_call", f"@>{head}:{name}", o, line])  # a field of the enclosing class (or its bases)
                continue
        elif ot == "field_access":
            fo = obj.child_by_field_name("object")
            fld = obj.child_by_field_name("field")
            if fo is not None and fo.type == "this" and fld is not None:
                add(["typed_call", f"@>{_txt(fld)}:{name}", o, line])
                continue
        elif ot == "object_creation_expression":
            tp = _jtype(obj.child_by_field_name("type"))
            if tp:
                add(["typed_call", f"{tp}:{name}", o, line])
                continue
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

    for i, d in enumerate(defs):
        if d["kind"] in ("class", "enum", "interface"):
            attrs = types.attrs(i)
            if attrs:
                d["attrs"] = attrs
    blob["definitions"] = defs
    blob["references"] = pack_refs(refs)
    blob["imports"] = imports
    blob["config_refs"] = config_tokens(data, root)
    return blob
