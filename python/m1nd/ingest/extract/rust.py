"""Rust extractor (graph.md §6): free / impl / trait functions, structs, enums, traits, impl blocks (named
``Type`` or ``Type:Trait``), inline modules, type aliases and trait associated types, ``macro_rules!`` macros
(kind ``macro``); ``use`` trees (groups, globs, aliases, ``pub use`` re-exports), ``mod x;`` declarations, calls,
macro invocations (``macro`` references), supertraits and signature / field type references.

Item-wrapping macros: an invocation in item position whose ``{ … }`` body parses as items (``cfg_rt! { pub fn
f() {} }``, ``cfg_if``-free wrappers of that shape, nested ones too) is unwrapped before extraction: the macro path,
``!`` and the braces are blanked (same byte length, newlines kept), the file is re-parsed, and the items become
ordinary definitions of the enclosing file / module / impl with their real lines.

Qualified names in references use ``.`` as the separator (``crate.util.f``); import module strings keep
``::`` (``crate::a::b::C``)."""

from __future__ import annotations

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
LANG = "rust"

QUERY = r"""
(function_item name: (identifier) @fn)
(function_signature_item name: (identifier) @fn)
(struct_item name: (type_identifier) @struct)
(union_item name: (type_identifier) @struct)
(enum_item name: (type_identifier) @enum)
(trait_item name: (type_identifier) @trait)
(type_item name: (type_identifier) @type)
(associated_type name: (type_identifier) @type)
(macro_definition name: (identifier) @macro)
(macro_invocation macro: (identifier) @mac)
(macro_invocation macro: (scoped_identifier) @mac)
(mod_item name: (identifier) @mod)
(impl_item) @impl
(use_declaration) @use
(call_expression function: (identifier) @call)
(call_expression function: (scoped_identifier) @qcall)
(call_expression function: (field_expression) @mcall)
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (scoped_identifier) @qcall))
(call_expression function: (generic_function function: (field_expression) @mcall))
(struct_expression name: (type_identifier) @new)
(struct_expression name: (scoped_type_identifier) @new)
(trait_item bounds: (trait_bounds) @bounds)
(type_identifier) @tref
(scoped_type_identifier) @sref
(type_parameter name: (type_identifier) @tparam)
"""

_DEF_CAPS = (
    ("fn", "fn"),
    ("struct", "struct"),
    ("enum", "enum"),
    ("trait", "trait"),
    ("type", "type"),
    ("mod", "mod"),
    ("macro", "macro"),
)

#: node types that may stand in an item list (what an item-wrapping macro's body must consist of)
_ITEM_TYPES = frozenset({
    "function_item", "function_signature_item", "struct_item", "enum_item", "union_item", "trait_item",
    "impl_item", "mod_item", "use_declaration", "type_item", "const_item", "static_item", "macro_definition",
    "macro_invocation", "attribute_item", "inner_attribute_item", "line_comment", "block_comment",
    "extern_crate_declaration", "foreign_mod_item", "associated_type", "empty_statement",
})
_ITEM_LISTS = frozenset({"source_file", "declaration_list"})
#: standard-library macros: never references into the graph unless the file defines a macro of that name
_STD_MACROS = frozenset({
    "println", "print", "eprintln", "eprint", "format", "format_args", "write", "writeln", "vec", "assert",
    "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne", "panic", "unreachable",
    "unimplemented", "todo", "matches", "cfg", "concat", "stringify", "include", "include_str", "include_bytes",
    "env", "option_env", "line", "file", "column", "module_path", "compile_error", "dbg", "thread_local",
    "macro_rules", "try",
})
_MAX_UNWRAP_ROUNDS = 4


def _item_macros(node: Any, out: list[Any], depth: int = 0) -> None:
    """Macro invocations in item position below ``node`` (source file, module / impl / trait bodies)."""
    for c in node.named_children:
        t = c.type
        if t == "macro_invocation":
            out.append(c)
        elif depth < 8 and t in ("mod_item", "impl_item", "trait_item"):
            body = c.child_by_field_name("body")
            if body is not None:
                _item_macros(body, out, depth + 1)


def _unwrap_item_macros(data: bytes, root: Any) -> bytes | None:
    """``data`` with every item-wrapping macro invocation's path, ``!`` and braces blanked (None: nothing to do)."""
    found: list[Any] = []
    _item_macros(root, found)
    edits: list[tuple[int, int]] = []
    for node in found:
        tt = node.named_children[-1] if node.named_child_count else None
        if tt is None or tt.type != "token_tree" or data[tt.start_byte:tt.start_byte + 1] != b"{":
            continue
        inner = data[tt.start_byte + 1:tt.end_byte - 1]
        if not inner.strip() or b"$" in inner:
            continue
        sub = ts.parse(LANG, inner).root_node
        if sub.has_error or not sub.named_child_count:
            continue
        if not all(c.type in _ITEM_TYPES for c in sub.named_children):
            continue
        if all(c.type in ("line_comment", "block_comment", "attribute_item") for c in sub.named_children):
            continue
        edits.append((node.start_byte, tt.start_byte + 1))
        edits.append((tt.end_byte - 1, node.end_byte))
    if not edits:
        return None
    buf = bytearray(data)
    for a, b in edits:
        for i in range(a, b):
            if buf[i] not in (10, 13):
                buf[i] = 32
    return bytes(buf)


def _txt(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _path(node: Any) -> str:
    """``a::b::<T>::c`` → ``a.b.c`` (whitespace and generic arguments dropped)."""
    t = _txt(node)
    if "<" in t:
        out, depth = [], 0
        for ch in t:
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
            elif depth == 0:
                out.append(ch)
        t = "".join(out)
    t = "".join(t.split())
    return ".".join(p for p in t.split("::") if p)


def _attrs_and_doc(node: Any) -> tuple[list[str], str]:
    """Outer attributes (``#[test]`` → ``"test"``) and the ``///`` doc comment right above ``node``."""
    attrs: list[str] = []
    docs: list[str] = []
    prev = node.prev_named_sibling
    expect = node.start_point[0] - 1
    while prev is not None and prev.end_point[0] >= expect - 0 and prev.end_point[0] <= node.start_point[0]:
        t = prev.type
        if t == "attribute_item":
            attrs.append("".join(_txt(prev)[2:-1].split()))
        elif t in ("line_comment", "block_comment"):
            txt = _txt(prev)
            if txt.startswith(("///", "/**")):
                docs.append(txt)
            elif txt.startswith(("//!", "/*!")):
                break
        else:
            break
        expect = prev.start_point[0] - 1
        prev = prev.prev_named_sibling
    return attrs, comment_doc("\n".join(reversed(docs))) if docs else ""


def _last_type_name(node: Any) -> str | None:
    """``Pool<T>`` / ``a::Pool`` / ``&mut Pool`` → ``Pool`` (last path segment, generics dropped)."""
    while node is not None:
        t = node.type
        if t == "type_identifier" or t == "primitive_type":
            return _txt(node)
        if t == "generic_type":
            node = node.child_by_field_name("type")
        elif t == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        elif t in ("reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        else:
            return None
    return None


def _type_path(node: Any) -> str | None:
    """Dotted path of a type for resolution (``fmt.Display``), generics dropped."""
    while node is not None and node.type in ("generic_type", "reference_type", "pointer_type"):
        node = node.child_by_field_name("type")
    if node is None or node.type not in ("type_identifier", "scoped_type_identifier"):
        return None
    return _path(node)


def _flatten_use(node: Any, prefix: list[str], out: list[tuple[list[str], str | None, bool]]) -> None:
    """Flatten a use tree into ``(path segments, alias, is_glob)``."""
    t = node.type
    if t in ("identifier", "crate", "self", "super", "metavariable"):
        out.append((prefix + [_txt(node)], None, False))
    elif t == "scoped_identifier":
        out.append((prefix + _path(node).split("."), None, False))
    elif t == "use_as_clause":
        p = node.child_by_field_name("path")
        a = node.child_by_field_name("alias")
        if p is not None:
            out.append((prefix + _path(p).split("."), _txt(a) if a is not None else None, False))
    elif t == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        out.append((prefix + (_path(inner).split(".") if inner is not None else []), None, True))
    elif t == "scoped_use_list":
        p = node.child_by_field_name("path")
        lst = node.child_by_field_name("list")
        sub = prefix + (_path(p).split(".") if p is not None else [])
        if lst is not None:
            for c in lst.named_children:
                _flatten_use(c, sub, out)
    elif t == "use_list":
        for c in node.named_children:
            _flatten_use(c, prefix, out)


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    blob, root = parse_or_blob(LANG, EXTRACTOR_VERSION, relpath, data)
    if root is None:
        return blob
    for _ in range(_MAX_UNWRAP_ROUNDS):  # nested wrappers (`cfg_rt! { cfg_net! { … } }`) take one round each
        unwrapped = _unwrap_item_macros(data, root)
        if unwrapped is None:
            break
        data = unwrapped
        root = ts.parse(LANG, data).root_node
    caps = ts.captures(ts.query(LANG, QUERY), root)

    defs: list[dict[str, Any]] = []
    spans: list[tuple[int, int, int]] = []
    name_pos: set[int] = set()
    mods: list[str] = []
    impl_refs: list[tuple[int, str, str | None, int]] = []  # (def index pre-sort, type path, trait path, pos)

    def add_def(kind: str, name: str, node: Any, body: Any, extra: dict[str, Any] | None = None) -> int:
        attrs, doc = _attrs_and_doc(node)
        s, e = node.start_byte, node.end_byte
        is_test = ("test" in attrs and kind == "fn") or (kind == "mod" and "cfg(test)" in attrs)
        sig = signature(data, s, body.start_byte if body is not None else e, strip_tail="{;")
        spans.append((s, e, len(defs)))
        d = make_def(
            kind, name, node.start_point[0] + 1, node.end_point[0] + 1, sig, doc, sha256(data[s:e]), is_test
        )
        if extra:
            d.update(extra)
        defs.append(d)
        return len(defs) - 1

    for cap, kind in _DEF_CAPS:
        for name_node in caps.get(cap, ()):
            node = name_node.parent
            body = node.child_by_field_name("body")
            if cap == "mod" and body is None:
                mods.append(_txt(name_node))
                continue
            name_pos.add(name_node.start_byte)
            if cap == "macro":  # signature `macro_rules! name`
                body = name_node.next_sibling
            add_def(kind, _txt(name_node), node, body)
    for node in caps.get("impl", ()):
        tnode = node.child_by_field_name("type")
        trnode = node.child_by_field_name("trait")
        tname = _last_type_name(tnode)
        if tname is None:
            continue
        trname = _last_type_name(trnode) if trnode is not None else None
        name = f"{tname}:{trname}" if trname else tname
        extra = {"impl_type": _type_path(tnode) or tname}
        if trnode is not None:
            extra["impl_trait"] = _type_path(trnode) or trname
        i = add_def("impl", name, node, node.child_by_field_name("body"), extra)
        for sub in (tnode, trnode):
            if sub is not None:
                # the header types are handled as implements / reference below, not as plain references
                stack = [sub]
                while stack:
                    n = stack.pop()
                    name_pos.add(n.start_byte)
                    stack.extend(n.named_children)
        impl_refs.append((i, extra["impl_type"], extra.get("impl_trait"), node.start_byte))

    pre_sort = list(defs)
    owners = finish_defs(defs, spans)
    own = owners.owner
    pos_of = {id(d): k for k, d in enumerate(defs)}

    refs: list[list[Any]] = []
    add = refs.append
    for i, tpath, trpath, _pos in impl_refs:
        k = pos_of[id(pre_sort[i])]
        line = defs[k]["line_start"]
        add(["reference", tpath, k, line])
        if trpath:
            add(["implements", trpath, k, line])

    imports: list[dict[str, Any]] = []
    bound: set[str] = set()
    for node in caps.get("use", ()):
        arg = node.child_by_field_name("argument")
        if arg is None:
            continue
        pub = any(c.type == "visibility_modifier" for c in node.children)
        # number of inline `mod x { }` blocks around the `use` (their `super` is a module of this file)
        depth = 0
        o = own(node.start_byte)
        while o >= 0:
            if defs[o]["kind"] == "mod":
                depth += 1
            o = defs[o]["parent"]
        flat: list[tuple[list[str], str | None, bool]] = []
        _flatten_use(arg, [], flat)
        line = node.start_point[0] + 1
        for segs, alias, glob in flat:
            if segs and segs[-1] == "self":
                segs = segs[:-1]
            if not segs:
                continue
            local = None if glob else (alias or segs[-1])
            if local == "_":
                local = None
            if local:
                bound.add(local)
            imp = import_binding("::".join(segs), line, alias=local, reexport=pub, star=glob)
            if depth:
                imp["mod_depth"] = depth
            imports.append(imp)

    for node in caps.get("call", ()):
        add(["call", _txt(node), own(node.start_byte), node.start_point[0] + 1])
    local_macros = {d["name"] for d in defs if d["kind"] == "macro"}
    for node in caps.get("mac", ()):
        p = _path(node)
        if p in _STD_MACROS and p not in local_macros:
            continue
        if p.startswith(("std.", "core.", "alloc.")):
            continue
        add(["macro", p, own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("qcall", ()):
        p = _path(node)
        head, _, rest = p.partition(".")
        if head == "Self" and "." not in rest:
            add(["self", rest, own(node.start_byte), node.start_point[0] + 1])
        else:
            add(["qualified", p, own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("mcall", ()):
        val = node.child_by_field_name("value")
        field = node.child_by_field_name("field")
        if field is None:
            continue
        kind = "self" if val is not None and val.type == "self" else "method_call"
        add([kind, _txt(field), own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("new", ()):
        name_pos.add(node.start_byte)
        p = _path(node)
        if p and p != "Self":
            add(["new", p, own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("bounds", ()):
        for b in node.named_children:
            p = _type_path(b)
            if p:
                add(["base", p, own(b.start_byte), b.start_point[0] + 1])
            stack = [b]
            while stack:
                n = stack.pop()
                name_pos.add(n.start_byte)
                stack.extend(n.named_children)

    tparams = {_txt(n) for n in caps.get("tparam", ())}
    for node in caps.get("sref", ()):
        nm = node.child_by_field_name("name")
        skip = node.start_byte in name_pos
        if nm is not None:
            name_pos.add(nm.start_byte)
        if not skip:
            add(["reference", _path(node), own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("tref", ()):
        sb = node.start_byte
        if sb in name_pos:
            continue
        name = _txt(node)
        if name == "Self" or name in tparams:
            continue
        add(["reference", name, own(sb), node.start_point[0] + 1])

    blob["definitions"] = defs
    blob["references"] = pack_refs(refs)
    blob["imports"] = imports
    blob["config_refs"] = config_tokens(data, root)
    if mods:
        blob["extra"]["mods"] = sorted(set(mods))
    # crate / module doc: leading //! comments
    inner_docs = []
    for c in root.named_children:
        if c.type in ("line_comment", "block_comment"):
            t = _txt(c)
            if t.startswith(("//!", "/*!")):
                inner_docs.append(t)
                continue
        break
    if inner_docs:
        blob["doc"] = comment_doc("\n".join(inner_docs))
    return blob
