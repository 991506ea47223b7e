"""Go extractor (graph.md §6): functions, methods (receiver type as container, or a ``recv::T`` id segment when
the receiver type is declared in another file), struct / interface / other named types, imports, calls,
embedded fields (inherits) and parameter / result / field type references."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    assign_ids,
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
from m1nd.ingest.extract._common import (
    go_default_binding as default_binding,
)

EXTRACTOR_VERSION = 2
LANG = "go"

QUERY = r"""
(package_clause (package_identifier) @pkg)
(function_declaration name: (identifier) @fn)
(method_declaration name: (field_identifier) @meth)
(type_spec name: (type_identifier) @type)
(type_alias name: (type_identifier) @alias)
(import_spec) @imp
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression) @scall)
(composite_literal type: (type_identifier) @new)
(composite_literal type: (qualified_type) @new)
(field_declaration !name type: (_) @embed)
(interface_type (type_elem) @iembed)
(parameter_declaration type: (_) @tref)
(variadic_parameter_declaration type: (_) @tref)
(field_declaration name: (_) type: (_) @tref)
(function_declaration result: (_) @tref)
(method_declaration result: (_) @tref)
(method_elem result: (_) @tref)
(type_parameter_declaration name: (identifier) @tparam)
"""

_DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def _txt(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _leading_doc(node: Any) -> str:
    lines: list[str] = []
    prev = node.prev_named_sibling
    expect = node.start_point[0] - 1
    while prev is not None and prev.type == "comment" and prev.end_point[0] == expect:
        lines.append(_txt(prev))
        expect = prev.start_point[0] - 1
        prev = prev.prev_named_sibling
    if not lines:
        return ""
    return comment_doc("\n".join(reversed(lines)))


def _type_name(node: Any) -> str | None:
    """Receiver / embedded type name: ``T``, ``*T``, ``T[X]``, ``pkg.T`` (dotted)."""
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        if node.type == "generic_type":
            node = node.child_by_field_name("type")
        else:
            node = node.named_children[0] if node.named_child_count else None
    if node is None:
        return None
    if node.type in ("type_identifier", "qualified_type"):
        t = node.text
        if _DOTTED.fullmatch(t):
            return t.decode("utf-8", "replace")
    return None


def _type_refs(node: Any, out: list[tuple[str, int]]) -> None:
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "type_identifier" or t == "qualified_type":
            out.append((_txt(n), n.start_byte))
        elif t in ("identifier", "field_identifier", "comment", "interpreted_string_literal"):
            continue
        else:
            stack.extend(n.named_children)


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    blob, root = parse_or_blob(LANG, EXTRACTOR_VERSION, relpath, data)
    if root is None:
        return blob
    file_test = blob["is_test"]
    caps = ts.captures(ts.query(LANG, QUERY), root)
    for node in caps.get("pkg", ()):
        blob["package"] = _txt(node)
        blob["doc"] = _leading_doc(node.parent)
        break

    defs: list[dict[str, Any]] = []
    spans: list[tuple[int, int, int]] = []
    for name_node in [*caps.get("type", ()), *caps.get("alias", ())]:
        spec = name_node.parent
        tnode = spec.child_by_field_name("type")
        kind = "type"
        if spec.type == "type_spec" and tnode is not None:
            kind = {"struct_type": "struct", "interface_type": "interface"}.get(tnode.type, "type")
        decl = spec.parent
        # a single `type X struct{}` spans its declaration (so its doc comment is found); grouped specs span
        # only themselves
        outer = spec
        if (
            decl is not None
            and decl.type == "type_declaration"
            and data[decl.start_byte : spec.start_byte].strip() == b"type"
        ):
            outer = decl
        s, e = outer.start_byte, outer.end_byte
        sig_end = tnode.start_byte if kind != "type" and tnode is not None else spec.end_byte
        sig = signature(data, outer.start_byte, sig_end)
        if kind in ("struct", "interface"):
            sig = f"{sig} {kind}"
        spans.append((s, e, len(defs)))
        defs.append(
            make_def(
                kind,
                _txt(name_node),
                outer.start_point[0] + 1,
                outer.end_point[0] + 1,
                sig,
                _leading_doc(outer),
                sha256(data[s:e]),
            )
        )
    for cap in ("fn", "meth"):
        for name_node in caps.get(cap, ()):
            node = name_node.parent
            name = _txt(name_node)
            body = node.child_by_field_name("body")
            s, e = node.start_byte, node.end_byte
            is_test = file_test and cap == "fn" and name.startswith("Test")
            d = make_def(
                "fn",
                name,
                node.start_point[0] + 1,
                node.end_point[0] + 1,
                signature(data, s, body.start_byte if body is not None else e),
                _leading_doc(node),
                sha256(data[s:e]),
                is_test,
            )
            if cap == "meth":
                recv = node.child_by_field_name("receiver")
                rtype = None
                if recv is not None:
                    for p in recv.named_children:
                        if p.type == "parameter_declaration":
                            rtype = _type_name(p.child_by_field_name("type"))
                            pn = p.child_by_field_name("name")
                            if pn is not None:
                                d["_rv"] = _txt(pn)
                            break
                if rtype:
                    d["recv"] = rtype
            spans.append((s, e, len(defs)))
            defs.append(d)
    owners = finish_defs(defs, spans, defer_ids=True)
    own = owners.owner
    # methods: container = receiver type declared in this file, else a `recv::T` id segment
    local_types = {}
    for i, d in enumerate(defs):
        if d["parent"] < 0 and d["kind"] in ("struct", "interface", "type") and d["name"] not in local_types:
            local_types[d["name"]] = i
    recv_name_of: dict[int, str] = {}
    for i, d in enumerate(defs):
        rv = d.pop("_rv", None)
        if rv is not None:
            recv_name_of[i] = rv
        r = d.get("recv")
        if r is None:
            continue
        t = local_types.get(r)
        if t is not None:
            d["parent"] = t
        else:
            d["prefix"] = f"recv::{r}"
            d["qprefix"] = r
    assign_ids(defs)

    imports: list[dict[str, Any]] = []
    bound: set[str] = set()
    for node in caps.get("imp", ()):
        path_node = node.child_by_field_name("path")
        if path_node is None:
            continue
        path = _txt(path_node).strip('"`')
        name_node = node.child_by_field_name("name")
        alias = None
        star = False
        if name_node is not None:
            a = _txt(name_node)
            if a == ".":
                star = True
            elif a != "_":
                alias = a
        imp = import_binding(path, node.start_point[0] + 1, alias=alias, star=star)
        imports.append(imp)
        bound.add(alias or default_binding(path))

    refs: list[list[Any]] = []
    add = refs.append
    for node in caps.get("call", ()):
        add(["call", _txt(node), own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("scall", ()):
        sb = node.start_byte
        line = node.start_point[0] + 1
        o = own(sb)
        t = node.text
        field = node.child_by_field_name("field")
        if field is None:
            continue
        fname = _txt(field)
        if _DOTTED.fullmatch(t) is None:
            add(["method_call", fname, o, line])
            continue
        d = t.decode("utf-8", "replace")
        head, _, rest = d.partition(".")
        if "." not in rest and o >= 0 and recv_name_of.get(o) == head:
            add(["self", rest, o, line])
        elif head in bound and "." not in rest:
            add(["qualified", d, o, line])
        else:
            add(["method_call", fname, o, line])
    for node in caps.get("new", ()):
        add(["new", _txt(node), own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("embed", ()):
        name = _type_name(node)
        if name:
            add(["base", name, own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("iembed", ()):
        if node.named_child_count != 1:
            continue
        name = _type_name(node.named_children[0])
        if name:
            add(["base", name, own(node.start_byte), node.start_point[0] + 1])
    tparams = {_txt(n) for n in caps.get("tparam", ())}
    out: list[tuple[str, int]] = []
    for node in caps.get("tref", ()):
        if node.type == "parameter_list":  # results list: its parameter_declarations are captured already
            continue
        out.clear()
        _type_refs(node, out)
        line = node.start_point[0] + 1
        for name, pos in out:
            if name not in tparams:
                add(["reference", name, own(pos), line])
    # receiver types declared in other files: the method references its receiver type
    for i, d in enumerate(defs):
        if "recv" in d and d["parent"] < 0:
            add(["reference", d["recv"], i, d["line_start"]])

    blob["definitions"] = defs
    blob["references"] = pack_refs(refs)
    blob["imports"] = imports
    blob["config_refs"] = config_tokens(data, root)
    return blob
