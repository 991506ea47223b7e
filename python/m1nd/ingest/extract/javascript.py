"""JavaScript / TypeScript / TSX extractor (graph.md §6).

Definitions: function and generator declarations, classes (incl. ``export default class {}`` → ``default``)
with their methods, getters/setters and arrow-function / function-expression fields, top-level
``const/let/var x = (…) => …`` or function expressions, TS interfaces, type aliases, enums and namespaces;
``export default function () {}`` → ``default``. TS overload signatures (no body) are not definitions.
Imports: ``import … from``, ``import 'x'``, ``export … from`` (re-exports), ``require('x')``, ``import('x')``.
"""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    clean_name,
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


def _words(text: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long tables readable)."""
    return frozenset(text.split())


_COMMON = r"""
(function_declaration name: (identifier) @fn.name) @fn
(generator_function_declaration name: (identifier) @fn.name) @fn
(class_declaration name: (_) @class.name) @class
(method_definition name: (_) @meth.name) @meth
(variable_declarator name: (identifier) @var.name
   value: [(arrow_function) (function_expression) (generator_function)] @var.value) @var
(export_statement) @export
(import_statement) @import
(call_expression function: (identifier) @call)
(call_expression function: (member_expression) @mcall)
(call_expression function: (import) arguments: (arguments . (string) @dynimport))
(new_expression constructor: (_) @new)
(class_heritage) @heritage
"""

_JS = (
    _COMMON
    + r"""
(field_definition property: (_) @field.name value: [(arrow_function) (function_expression)]) @field
(jsx_opening_element name: (identifier) @jsx)
(jsx_self_closing_element name: (identifier) @jsx)
"""
)

_TS_COMMON = (
    _COMMON
    + r"""
(abstract_class_declaration name: (_) @class.name) @class
(public_field_definition name: (_) @field.name value: [(arrow_function) (function_expression)]) @field
(interface_declaration name: (_) @iface.name) @iface
(type_alias_declaration name: (_) @alias.name) @alias
(enum_declaration name: (_) @enum.name) @enum
(internal_module name: (identifier) @ns.name) @ns
(module name: (identifier) @ns.name) @ns
(extends_type_clause) @iext
(type_identifier) @tref
(nested_type_identifier) @nref
(type_parameter name: (type_identifier) @tparam)
"""
)

_TSX = (
    _TS_COMMON
    + r"""
(jsx_opening_element name: (identifier) @jsx)
(jsx_self_closing_element name: (identifier) @jsx)
"""
)

_QUERIES = {"javascript": _JS, "typescript": _TS_COMMON, "tsx": _TSX}

_DOTTED = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$#][A-Za-z0-9_$]*)*")
_WSB = re.compile(rb"\s+")
_NAME_OK = re.compile(r"#?[A-Za-z_$][A-Za-z0-9_$]*")

#: globals of the JS runtimes: ``Object.assign(...)`` / ``console.log(...)`` are not references into the graph
JS_GLOBALS = _words("""
    Object Array JSON Math Promise Reflect Proxy Number String Boolean Symbol BigInt Date RegExp Error Map
    Set WeakMap WeakSet Intl console process Buffer globalThis window document navigator URL URLSearchParams
    crypto performance Atomics WebAssembly
""")

_DEF_CAPS = (
    ("fn", "fn"),
    ("class", "class"),
    ("meth", "fn"),
    ("field", "fn"),
    ("var", "fn"),
    ("iface", "interface"),
    ("alias", "type"),
    ("enum", "enum"),
    ("ns", "mod"),
)
_TOP_PARENTS = frozenset({"program", "statement_block"})


def _txt(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _string_value(node: Any) -> str | None:
    if node is None or node.type not in ("string", "template_string"):
        return None
    t = _txt(node)
    if len(t) >= 2 and t[0] in "'\"`" and t[-1] == t[0]:
        t = t[1:-1]
    if "${" in t:
        return None
    return t


def _leading_doc(node: Any) -> str:
    prev = node.prev_named_sibling
    if prev is None or prev.type != "comment":
        return ""
    if prev.end_point[0] < node.start_point[0] - 1:
        return ""
    t = _txt(prev)
    if not t.startswith("/**"):
        return ""
    return comment_doc(t)


def _dotted(node: Any) -> str | None:
    t = node.text
    if b"?." in t:
        t = t.replace(b"?.", b".")
    if _DOTTED.fullmatch(t) is None:
        t = _WSB.sub(b"", t)
        if _DOTTED.fullmatch(t) is None:
            return None
    return t.decode("utf-8", "replace")


def _is_top_level_var(decl: Any) -> bool:
    """``const x = …`` at module level (also inside ``export`` or a namespace body)."""
    stmt = decl.parent  # lexical_declaration / variable_declaration
    if stmt is None:
        return False
    par = stmt.parent
    if par is not None and par.type == "export_statement":
        par = par.parent
    if par is None:
        return False
    if par.type == "program":
        return True
    return (
        par.type == "statement_block"
        and par.parent is not None
        and par.parent.type in ("internal_module", "module")
    )


def extract(relpath: str, data: bytes, lang: str) -> dict[str, Any]:
    blob, root = parse_or_blob(lang, EXTRACTOR_VERSION, relpath, data)
    if root is None:
        return blob
    caps = ts.captures(ts.query(lang, _QUERIES[lang]), root)

    defs: list[dict[str, Any]] = []
    spans: list[tuple[int, int, int]] = []
    name_pos: set[int] = set()
    default_export: str | None = None

    def add_def(kind: str, name: str, node: Any, body: Any, outer: Any) -> None:
        s, e = outer.start_byte, outer.end_byte
        sig = signature(
            data, outer.start_byte, body.start_byte if body is not None else node.end_byte, strip_tail="{"
        )
        spans.append((s, e, len(defs)))
        defs.append(
            make_def(
                kind,
                name,
                outer.start_point[0] + 1,
                outer.end_point[0] + 1,
                sig,
                _leading_doc(outer),
                sha256(data[s:e]),
            )
        )

    for cap, kind in _DEF_CAPS:
        for name_node in caps.get(cap + ".name", ()):
            node = name_node.parent
            if cap == "var" and not _is_top_level_var(node):
                continue
            name = _txt(name_node)
            if _NAME_OK.fullmatch(name) is None:
                continue  # computed / string names
            name_pos.add(name_node.start_byte)
            name = clean_name(name)
            outer = node
            if cap == "var":
                outer = node.parent
                if outer.named_child_count > 1:  # `const a = () => 1, b = 2`: span of the declarator only
                    outer = node
                body = caps_value_body(node)
            else:
                body = node.child_by_field_name("body")
                if cap == "field":
                    val = node.child_by_field_name("value")
                    body = val.child_by_field_name("body") if val is not None else None
            par = outer.parent
            if par is not None and par.type == "export_statement":
                outer = par
                if cap in ("class", "fn") and any(c.type == "default" for c in par.children):
                    default_export = name
            add_def(kind, name, node, body, outer)

    imports: list[dict[str, Any]] = []
    bound: set[str] = set()
    for node in caps.get("import", ()):
        src = _string_value(node.child_by_field_name("source"))
        if src is None:
            continue
        imp = import_binding(src, node.start_point[0] + 1)
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for c in clause.named_children:
                if c.type == "identifier":
                    imp["names"].append(["default", _txt(c)])
                    bound.add(_txt(c))
                elif c.type == "namespace_import":
                    for ident in c.named_children:
                        imp["alias"] = _txt(ident)
                        bound.add(_txt(ident))
                elif c.type == "named_imports":
                    for spec in c.named_children:
                        if spec.type != "import_specifier":
                            continue
                        nm = spec.child_by_field_name("name")
                        al = spec.child_by_field_name("alias")
                        if nm is None:
                            continue
                        local = _txt(al if al is not None else nm)
                        imp["names"].append([_txt(nm), local])
                        bound.add(local)
        imports.append(imp)

    anon_default: list[tuple[str, Any, Any]] = []
    for node in caps.get("export", ()):
        src_node = node.child_by_field_name("source")
        if src_node is not None:
            src = _string_value(src_node)
            if src is None:
                continue
            imp = import_binding(src, node.start_point[0] + 1, reexport=True)
            clause = None
            for c in node.named_children:
                if c.type == "export_clause":
                    clause = c
                elif c.type == "namespace_export":
                    for ident in c.named_children:
                        imp["alias"] = _txt(ident)
            if clause is not None:
                for spec in clause.named_children:
                    nm = spec.child_by_field_name("name")
                    al = spec.child_by_field_name("alias")
                    if nm is not None:
                        imp["names"].append([_txt(nm), _txt(al if al is not None else nm)])
            elif imp["alias"] is None:
                imp["star"] = True
            imports.append(imp)
            continue
        if not any(c.type == "default" for c in node.children):
            continue
        val = node.child_by_field_name("value")
        if val is None:
            continue
        if val.type == "identifier":
            default_export = _txt(val)
        elif val.type in ("function_expression", "arrow_function", "generator_function", "function"):
            nm = val.child_by_field_name("name")
            if nm is None:
                anon_default.append(("fn", val, node))
        elif val.type == "class":
            nm = val.child_by_field_name("name")
            if nm is None:
                anon_default.append(("class", val, node))
            else:
                default_export = _txt(nm)
    for kind, val, outer in anon_default:
        add_def(kind, "default", val, val.child_by_field_name("body"), outer)
        default_export = "default"

    owners = finish_defs(defs, spans)
    own = owners.owner
    top_names = {d["name"] for d in defs if d["parent"] < 0}

    refs: list[list[Any]] = []
    add = refs.append
    for node in caps.get("call", ()):
        name = _txt(node)
        if name == "require":
            call = node.parent
            args = call.child_by_field_name("arguments")
            arg0 = args.named_children[0] if args is not None and args.named_child_count else None
            src = _string_value(arg0)
            if src is None:
                continue
            imp = import_binding(src, node.start_point[0] + 1)
            decl = call.parent
            if decl is not None and decl.type == "variable_declarator":
                pat = decl.child_by_field_name("name")
                if pat is not None and pat.type == "identifier":
                    imp["alias"] = _txt(pat)
                    bound.add(imp["alias"])
                elif pat is not None and pat.type == "object_pattern":
                    for p in pat.named_children:
                        if p.type == "shorthand_property_identifier_pattern":
                            imp["names"].append([_txt(p), _txt(p)])
                            bound.add(_txt(p))
                        elif p.type == "pair_pattern":
                            k, v = p.child_by_field_name("key"), p.child_by_field_name("value")
                            if k is not None and v is not None and v.type == "identifier":
                                imp["names"].append([_txt(k), _txt(v)])
                                bound.add(_txt(v))
            imports.append(imp)
            continue
        add(["call", name, own(node.start_byte), node.start_point[0] + 1])
    for node in caps.get("dynimport", ()):
        src = _string_value(node)
        if src is not None:
            imports.append(
                import_binding(src, node.start_point[0] + 1)
            )
    for node in caps.get("jsx", ()):
        name = _txt(node)
        if name[:1].isupper():
            add(["call", name, own(node.start_byte), node.start_point[0] + 1])

    heads = bound | top_names
    for node in caps.get("mcall", ()):
        sb = node.start_byte
        line = node.start_point[0] + 1
        d = _dotted(node)
        if d is None:
            prop = node.child_by_field_name("property")
            if prop is None:
                continue
            add(["method_call", _txt(prop).lstrip("#"), own(sb), line])
            continue
        head, _, rest = d.partition(".")
        if head in JS_GLOBALS and head not in heads:
            continue
        if head == "this":
            if "." in rest:
                add(["method_call", rest.rsplit(".", 1)[1].lstrip("#"), own(sb), line])
            else:
                add(["self", rest.lstrip("#"), own(sb), line])
        elif head == "super":
            add(["super", rest.rsplit(".", 1)[-1], own(sb), line])
        elif head in heads:
            add(["qualified", d, own(sb), line])
        else:
            add(["method_call", d.rsplit(".", 1)[1].lstrip("#"), own(sb), line])
    for node in caps.get("new", ()):
        d = _dotted(node)
        if d is not None:
            add(["new", d, own(node.start_byte), node.start_point[0] + 1])

    skip_pos: set[int] = set(name_pos)
    for node in caps.get("heritage", ()):
        for c in node.named_children:
            if c.type == "extends_clause":
                for v in c.children_by_field_name("value"):
                    _add_type_ref(add, "base", v, own, skip_pos)
            elif c.type == "implements_clause":
                for v in c.named_children:
                    _add_type_ref(add, "implements", v, own, skip_pos)
            else:  # JavaScript: class_heritage holds the base expression directly
                _add_type_ref(add, "base", c, own, skip_pos)
    for node in caps.get("iext", ()):
        for v in node.named_children:
            _add_type_ref(add, "base", v, own, skip_pos)

    if "tref" in caps:
        tparams = {_txt(n) for n in caps.get("tparam", ())}
        for node in caps.get("nref", ()):
            nm = node.child_by_field_name("name")
            if nm is not None:
                skip_pos.add(nm.start_byte)
            if node.start_byte in skip_pos:
                continue
            d = _dotted(node)
            if d is not None:
                add(["reference", d, own(node.start_byte), node.start_point[0] + 1])
        for node in caps["tref"]:
            sb = node.start_byte
            if sb in skip_pos:
                continue
            name = _txt(node)
            if name in tparams:
                continue
            add(["reference", name, own(sb), node.start_point[0] + 1])

    blob["definitions"] = defs
    blob["references"] = pack_refs(refs)
    blob["imports"] = imports
    blob["config_refs"] = config_tokens(data, root)
    if default_export is not None:
        blob["extra"]["default_export"] = default_export
    return blob


def caps_value_body(declarator: Any) -> Any:
    val = declarator.child_by_field_name("value")
    if val is None:
        return None
    return val.child_by_field_name("body")


def _add_type_ref(add: Any, kind: str, node: Any, own: Any, skip_pos: set[int]) -> None:
    t = node.type
    if t in ("generic_type",):
        node = node.child_by_field_name("name") or node
        t = node.type
    if t in ("type_identifier", "identifier", "member_expression", "nested_type_identifier"):
        d = _dotted(node)
        if d is not None:
            add([kind, d, own(node.start_byte), node.start_point[0] + 1])
        skip_pos.add(node.start_byte)
        if t == "nested_type_identifier":
            nm = node.child_by_field_name("name")
            if nm is not None:
                skip_pos.add(nm.start_byte)
    elif t == "call_expression":  # class A extends mixin(B) {}
        return
