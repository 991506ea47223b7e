"""Go extractor (graph.md §6): functions, methods (receiver type as container, or a ``recv::T`` id segment when
the receiver type is declared in another file), struct / interface / other named types, imports, calls,
embedded fields (inherits) and parameter / result / field type references."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    UNKNOWN_TYPE,
    ScopeTypes,
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

EXTRACTOR_VERSION = 3
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
(short_var_declaration) @gasg
(assignment_statement) @gasg
(var_spec) @gvar
(range_clause left: (_) @gpat)
(parameter_declaration) @gprm
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



# ------------------------------------------------------------------------------------------ receiver types
# (type expressions as in the Python extractor: ``T`` a type, ``F()`` what F returns, ``@`` the receiver type,
# ``>field`` segments)


def _struct_fields(st: Any) -> dict[str, str]:
    """Named fields of a struct type with a named type (``db *sql.DB`` -> ``sql.DB``; others -> "")."""
    out: dict[str, str] = {}
    fl = st.named_children[0] if st is not None and st.named_child_count else None
    for fd in fl.named_children if fl is not None else ():
        if fd.type != "field_declaration":
            continue
        ty = fd.child_by_field_name("type")
        tn = (_type_name(ty) or UNKNOWN_TYPE) if ty is not None else UNKNOWN_TYPE
        for nm in fd.children_by_field_name("name"):
            out[_txt(nm)] = tn
    return out


def _value_type(node: Any) -> str | None:
    t = node.type
    if t == "unary_expression" and node.named_child_count == 1 and node.text[:1] == b"&":
        node = node.named_children[0]
        t = node.type
    if t == "composite_literal":
        return _type_name(node.child_by_field_name("type")) or UNKNOWN_TYPE
    if t == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type in ("identifier", "selector_expression") and _DOTTED.fullmatch(fn.text):
            return _txt(fn) + "()"
        return UNKNOWN_TYPE
    if t in ("interpreted_string_literal", "raw_string_literal"):
        return "string"
    if t == "nil":
        return None
    if t == "identifier":
        return "=" + _txt(node)
    return UNKNOWN_TYPE


def _collect_types(caps: dict[str, list[Any]], defs: list[dict[str, Any]], own: Any, wanted: set[str]) -> ScopeTypes:
    """Local receiver types: ``x := Foo{}`` / ``&Foo{}`` / ``NewFoo()``, ``var x Foo``, parameters ``x *Foo``;
    any other binding of the name (another value, range, multiple results but the first) makes it unknown."""
    types = ScopeTypes(defs, wanted)
    for node in caps.get("gasg", ()):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            continue
        o = own(node.start_byte)
        lefts, rights = left.named_children, right.named_children
        for i, ln in enumerate(lefts):
            if ln.type != "identifier" or ln.text.decode("utf-8", "replace") not in wanted:
                continue
            if len(rights) == len(lefts):
                val = _value_type(rights[i])
            elif len(rights) == 1 and i == 0 and rights[0].type == "call_expression":
                val = _value_type(rights[0])  # x, err := NewFoo()
            else:
                val = UNKNOWN_TYPE
            types.bind(o, _txt(ln), val)
    for node in caps.get("gvar", ()):
        o = own(node.start_byte)
        ty = node.child_by_field_name("type")
        vals = node.child_by_field_name("value")
        names = node.children_by_field_name("name")
        for i, nm in enumerate(names):
            if _txt(nm) not in wanted:
                continue
            if ty is not None:
                types.bind(o, _txt(nm), _type_name(ty) or UNKNOWN_TYPE, declared=True)
            elif vals is not None and vals.named_child_count == len(names):
                types.bind(o, _txt(nm), _value_type(vals.named_children[i]))
            else:
                types.bind(o, _txt(nm), UNKNOWN_TYPE)
    for node in caps.get("gprm", ()):
        ty = node.child_by_field_name("type")
        if (
            node.parent is not None
            and node.parent.parent is not None
            and node.parent.parent.type == "method_declaration"
            and node.parent.parent.child_by_field_name("receiver") == node.parent
        ):
            continue  # the receiver: `@`
        o = -2
        for nm in node.children_by_field_name("name"):
            if _txt(nm) in wanted:
                if o == -2:
                    o = own(node.start_byte)
                types.bind(o, _txt(nm), (_type_name(ty) if ty is not None else None) or UNKNOWN_TYPE, declared=True)
    for node in caps.get("gpat", ()):
        o = own(node.start_byte)
        for nm in node.named_children if node.type == "expression_list" else (node,):
            if nm.type == "identifier" and _txt(nm) in wanted:
                types.bind(o, _txt(nm), UNKNOWN_TYPE)
    return types


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
        d = make_def(
            kind,
            _txt(name_node),
            outer.start_point[0] + 1,
            outer.end_point[0] + 1,
            sig,
            _leading_doc(outer),
            sha256(data[s:e]),
        )
        if kind == "struct":
            attrs = _struct_fields(tnode)
            if attrs:
                d["attrs"] = attrs
        defs.append(d)
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
            res = node.child_by_field_name("result")
            if res is not None:
                if res.type == "parameter_list":
                    first = res.named_children[0] if res.named_child_count else None
                    res = first.child_by_field_name("type") if first is not None else None
                ret = _type_name(res) if res is not None else None
                if ret:
                    d["ret"] = ret
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
    scalls = [(node, node.text) for node in caps.get("scall", ())]
    wanted = {h.decode("utf-8", "replace") for h in {t.partition(b".")[0] for _, t in scalls}}
    types = _collect_types(caps, defs, own, wanted)
    for node, t in scalls:
        sb = node.start_byte
        line = node.start_point[0] + 1
        o = own(sb)
        field = node.child_by_field_name("field")
        if field is None:
            continue
        fname = _txt(field)
        if _DOTTED.fullmatch(t) is None:
            add(["method_call", fname, o, line])
            continue
        d = t.decode("utf-8", "replace")
        head, _, rest = d.partition(".")
        if o >= 0 and recv_name_of.get(o) == head:
            if "." not in rest:
                add(["self", rest, o, line])
            else:  # s.field.M(): the receiver type's field
                mid, _, m = rest.rpartition(".")
                add(["typed_call", "@>" + mid.replace(".", ">") + ":" + m, o, line])
            continue
        recv = types.lookup(o, head) if head in types.typed_names and head not in bound else None
        if recv:
            mid, _, m = rest.rpartition(".")
            add(["typed_call", (recv + ">" + mid.replace(".", ">") if mid else recv) + ":" + m, o, line])
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
