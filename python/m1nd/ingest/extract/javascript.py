"""JavaScript / TypeScript / TSX extractor (graph.md §6).

Definitions (``fn`` unless said otherwise):

- function and generator declarations, named function expressions (``f(function onDone() {})``), classes and named
  class expressions (``class``), with their methods, getters / setters and arrow-function / function-expression
  fields;
- ``const/let/var x = (…) => …`` / ``function …`` / ``class …`` at any depth (nested ones are contained in their
  enclosing function);
- CommonJS and plain assignments of a function or class: ``exports.x = …``, ``module.exports.x = …``,
  ``obj.x = function …`` (qname ``obj.x``), ``this.x = …``; ``X.prototype.m = …`` and the members of
  ``X.prototype = {…}`` are contained in ``X`` when ``X`` is defined alongside; ``module.exports = function f``
  / ``class X`` / an anonymous function (``default``) is the file's default export;
- object-literal methods and function-valued properties (``{ m() {}, n: () => 1, 'o': function () {} }``);
- TS interfaces, type aliases, enums and namespaces (``mod``, dotted names kept: ``A.B``); TS declarations without
  a body (``declare function f(): T;``, interface / object-type method signatures, abstract methods) are
  definitions too; overload signatures followed by their implementation form one definition spanning from the
  first signature to the implementation's end (signature of the implementation);
- ``export default function () {}`` / ``export default class {}`` → ``default``.

Declaration files (``.d.ts``, ``.d.mts``, ``.d.cts``) are extracted like any TS file; :func:`is_declaration_file`
tells them apart (their nodes are declarations: ``source_path`` ends with one of those suffixes).

Imports: ``import … from``, ``import 'x'``, ``export … from`` (re-exports), ``require('x')`` (alias, destructuring
``const {a, b: c} = require('x')``, member ``const a = require('x').a``), ``module.exports = require('x')``
(re-export of everything), TS ``import x = require('x')``, ``import('x')``.

Why one module of this size: JavaScript, TypeScript and TSX share one tree-sitter grammar family and one walk; the
constructs above are cases of that walk, and splitting them would scatter one traversal's state over modules.
"""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    UNKNOWN_TYPE,
    ScopeTypes,
    assign_ids,
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

EXTRACTOR_VERSION = 5


def _words(text: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long tables readable)."""
    return frozenset(text.split())


_COMMON = r"""
(function_declaration name: (identifier) @fn.name) @fn
(generator_function_declaration name: (identifier) @fn.name) @fn
(class_declaration name: (_) @class.name) @class
(class name: (_) @cexpr.name) @cexpr
(function_expression name: (identifier) @fexpr.name) @fexpr
(method_definition name: (_) @meth.name) @meth
(variable_declarator name: (identifier) @var.name
   value: [(arrow_function) (function_expression) (generator_function) (class)] @var.value) @var
(assignment_expression left: [(member_expression) (identifier)] @assign.name
   right: [(arrow_function) (function_expression) (generator_function) (class)] @assign.value) @assign
(pair key: [(property_identifier) (string) (number)] @pair.name
   value: [(arrow_function) (function_expression) (generator_function) (class)] @pair.value) @pair
(export_statement) @export
(import_statement) @import
(call_expression function: (identifier) @call)
(call_expression function: (member_expression) @mcall)
(call_expression function: (import) arguments: (arguments . (string) @dynimport))
(new_expression constructor: (_) @new)
(class_heritage) @heritage
(variable_declarator name: (identifier) @jvar)
(assignment_expression left: (identifier) @jvar)
(assignment_expression left: (member_expression object: (this) property: (property_identifier) @jthis))
(formal_parameters) @jparams
(variable_declarator name: [(object_pattern) (array_pattern)] @jpat)
(for_in_statement left: (_) @jpat)
(catch_clause parameter: (_) @jpat)
(arrow_function parameter: (identifier) @jpat)
"""

_JS = (
    _COMMON
    + r"""
(field_definition property: (_) @field.name value: [(arrow_function) (function_expression)]) @field
(field_definition property: (property_identifier) @jfield)
(jsx_opening_element name: (identifier) @jsx)
(jsx_self_closing_element name: (identifier) @jsx)
"""
)

_TS_COMMON = (
    _COMMON
    + r"""
(abstract_class_declaration name: (_) @class.name) @class
(public_field_definition name: (_) @field.name value: [(arrow_function) (function_expression)]) @field
(public_field_definition name: (property_identifier) @jfield)
(interface_declaration name: (_) @iface.name) @iface
(type_alias_declaration name: (_) @alias.name) @alias
(enum_declaration name: (_) @enum.name) @enum
(internal_module name: [(identifier) (nested_identifier)] @ns.name) @ns
(module name: [(identifier) (nested_identifier)] @ns.name) @ns
(function_signature name: (identifier) @sig.name) @sig
(method_signature name: (_) @msig.name) @msig
(abstract_method_signature name: (_) @msig.name) @msig
(import_require_clause (identifier) @reqalias source: (string) @reqsrc)
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

#: plain declarations: capture -> kind
_DECL_CAPS = (
    ("class", "class"),
    ("field", "fn"),
    ("iface", "interface"),
    ("alias", "type"),
    ("enum", "enum"),
    ("ns", "mod"),
)
#: callables that may form TS overload groups: capture -> kind
_CALL_CAPS = (("fn", "fn"), ("meth", "fn"), ("sig", "fn"), ("msig", "fn"))
#: bodiless TS callables (overload signatures, declarations)
_SIGNATURES = frozenset({"function_signature", "method_signature", "abstract_method_signature"})
_CALLABLES = _SIGNATURES | {"function_declaration", "generator_function_declaration", "method_definition"}
_WRAPPERS = frozenset({"export_statement", "ambient_declaration"})
_FUNC_VALUES = frozenset({"arrow_function", "function_expression", "generator_function", "function"})
_DECL_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")


def is_declaration_file(relpath: str) -> bool:
    """A TypeScript declaration file (``.d.ts`` / ``.d.mts`` / ``.d.cts``): its nodes declare, not implement."""
    return relpath.endswith(_DECL_SUFFIXES)


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


def _outer(node: Any) -> Any:
    """``node`` or its ``export`` / ``declare`` wrapper (the statement that spans the definition)."""
    par = node.parent
    while par is not None and par.type in _WRAPPERS:
        node, par = par, par.parent
    return node


def _unwrap(node: Any) -> Any:
    """The declaration inside ``export`` / ``declare`` wrappers (None when there is none)."""
    while node is not None and node.type in _WRAPPERS:
        inner = node.child_by_field_name("declaration")
        if inner is None:
            inner = next((c for c in node.named_children if c.type != "comment"), None)
        node = inner
    return node


def _sibling(node: Any, forward: bool) -> Any:
    n = node.next_named_sibling if forward else node.prev_named_sibling
    while n is not None and n.type == "comment":
        n = n.next_named_sibling if forward else n.prev_named_sibling
    return n


def _same_callable(node: Any, name: bytes) -> bool:
    if node is None or node.type not in _CALLABLES:
        return False
    nm = node.child_by_field_name("name")
    return nm is not None and nm.text == name


def _key_name(node: Any) -> str | None:
    """Name of a property key / method name: identifiers as written, string keys without quotes."""
    t = node.type
    if t == "string":
        v = _string_value(node)
        if v is None or not v or len(v) > 80 or any(c.isspace() for c in v):
            return None
        return v
    if t == "number":
        return _txt(node)
    name = _txt(node)
    return name if _NAME_OK.fullmatch(name) else None



# ------------------------------------------------------------------------------------------ receiver types
# (type expressions as in the Python extractor: ``Foo`` a type, ``@`` the enclosing class, ``>attr`` segments)

_LITERAL_TYPES = {
    "string": "String",
    "template_string": "String",
    "array": "Array",
    "number": "Number",
    "regex": "RegExp",
    "true": "Boolean",
    "false": "Boolean",
}


def _annotation_type(node: Any) -> str | None:
    """``Foo`` / ``ns.Foo`` / ``Foo | null`` / ``Foo<T>`` (-> ``Foo``) from a TS type annotation; else None."""
    for _ in range(6):
        t = node.type
        if t in ("type_annotation", "parenthesized_type"):
            if not node.named_child_count:
                return None
            node = node.named_child(0)
        elif t in ("type_identifier", "nested_type_identifier", "identifier"):
            return _txt(node).replace(" ", "")
        elif t == "generic_type":
            node = node.named_child(0)
        elif t == "union_type":
            kids = [k for k in node.named_children
                    if not (k.type == "literal_type" and _txt(k) in ("null", "undefined"))
                    and not (k.type == "predefined_type" and _txt(k) in ("null", "undefined"))]
            if len(kids) != 1:
                return None
            node = kids[0]
        else:
            return None
    return None


def _value_type(node: Any) -> str | None:
    """``new Foo()`` -> ``Foo``, literals -> their builtin type, another name -> ``=x``, null -> None."""
    for _ in range(4):
        if node.type in ("parenthesized_expression", "non_null_expression") and node.named_child_count:
            node = node.named_child(0)
        else:
            break
    t = node.type
    if t in ("null", "undefined"):
        return None
    lit = _LITERAL_TYPES.get(t)
    if lit is not None:
        return lit
    if t == "new_expression":
        c = node.child_by_field_name("constructor")
        if c is not None and c.type in ("identifier", "member_expression"):
            d = _dotted(c)
            if d is not None and "#" not in d:
                return d
        return UNKNOWN_TYPE
    if t == "identifier":
        return "=" + _txt(node)
    return UNKNOWN_TYPE


def _pattern_idents(node: Any, out: list[str]) -> None:
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("identifier", "shorthand_property_identifier_pattern"):
            out.append(_txt(n))
        elif t not in ("member_expression", "subscript_expression", "type_annotation", "string", "number"):
            stack.extend(n.named_children)


def _bind_unknown(types: ScopeTypes, owner: int, pattern: Any, names: list[str]) -> None:
    """Every name a binding pattern introduces in ``owner`` gets an unknown type (``names`` is a reused buffer)."""
    names.clear()
    _pattern_idents(pattern, names)
    for nm in names:
        types.bind(owner, nm, UNKNOWN_TYPE)


def _collect_types(caps: dict[str, list[Any]], defs: list[dict[str, Any]], own: Any, wanted: set[str]) -> ScopeTypes:
    """Receiver types per scope: ``const x = new Foo()``, ``x: Foo``, parameters, ``this.x = new Foo()``, class
    fields and TS parameter properties; every other binding of a name makes its type unknown."""
    types = ScopeTypes(defs, wanted)
    kind_of = [d["kind"] for d in defs]
    asgs: list[tuple[Any, int, int]] = []
    for node in caps.get("jvar", ()):
        if _txt(node) in wanted:
            asgs.append((node, own(node.start_byte), -1))
    for node in caps.get("jthis", ()):
        o = own(node.start_byte)
        cls = types.class_of_method(o)
        if cls >= 0:
            asgs.append((node, o, cls))
    for node, _, _ in asgs:
        right = node.parent.child_by_field_name("value" if node.parent.type == "variable_declarator" else "right")
        if node.parent.type == "member_expression":
            right = node.parent.parent.child_by_field_name("right")
        if right is not None and right.type == "identifier":
            wanted.add(_txt(right))
    for d in defs:
        p = d["parent"]
        if d["name"] in wanted and (p < 0 or kind_of[p] != "class"):
            types.bind(p, d["name"], UNKNOWN_TYPE)
    names: list[str] = []
    for node in caps.get("jparams", ()):
        o = own(node.start_byte)
        for prm in node.named_children:
            pat = (
                prm.child_by_field_name("pattern") if prm.type in ("required_parameter", "optional_parameter") else None
            )
            if pat is not None and pat.type == "identifier":
                ty = prm.child_by_field_name("type")
                val = (_annotation_type(ty) if ty is not None else None) or UNKNOWN_TYPE
                nm = _txt(pat)
                types.bind(o, nm, val, declared=ty is not None)
                if prm.named_child(0).type == "accessibility_modifier" or "readonly" in _txt(prm).split(nm, 1)[0]:
                    cls = types.class_of_method(o)
                    if cls >= 0:
                        types.bind_attr(cls, nm, val, o, declared=ty is not None)
                continue
            _bind_unknown(types, o, prm, names)
    for node in caps.get("jpat", ()):
        _bind_unknown(types, own(node.start_byte), node, names)
    for node in caps.get("jfield", ()):
        o = own(node.start_byte)
        if o < 0 or kind_of[o] != "class":
            continue
        fld = node.parent
        ty = fld.child_by_field_name("type")
        if ty is not None:
            types.bind_attr(o, _txt(node), _annotation_type(ty) or UNKNOWN_TYPE, o, declared=True)
        else:
            val = fld.child_by_field_name("value")
            if val is not None:
                types.bind_attr(o, _txt(node), _value_type(val), o)
    for node, o, cls in asgs:
        par = node.parent
        if par.type == "member_expression":
            asg = par.parent
            ty = None
            right = asg.child_by_field_name("right")
        elif par.type == "variable_declarator":
            ty = par.child_by_field_name("type")
            right = par.child_by_field_name("value")
        else:
            ty = None
            right = par.child_by_field_name("right")
        if ty is not None:
            val: str | None = _annotation_type(ty) or UNKNOWN_TYPE
        elif right is not None:
            val = _value_type(right)
        else:
            continue  # `let x;`
        if cls >= 0:
            types.bind_attr(cls, _txt(node), val, o, declared=ty is not None)
        else:
            types.bind(o, _txt(node), val, declared=ty is not None)
    return types


def extract(relpath: str, data: bytes, lang: str) -> dict[str, Any]:
    blob, root = parse_or_blob(lang, EXTRACTOR_VERSION, relpath, data)
    if root is None:
        return blob
    caps = ts.captures(ts.query(lang, _QUERIES[lang]), root)

    defs: list[dict[str, Any]] = []
    spans: list[tuple[int, int, int]] = []
    name_pos: set[int] = set()
    default_export: str | None = None

    consumed: set[int] = set()  # function / class values named by their binding (not by their own name)
    links: dict[int, str] = {}  # def index (pre-sort) -> name of the `X` whose prototype it belongs to

    def add_def(kind: str, name: str, node: Any, body: Any, outer: Any, first: Any = None, last: Any = None,
                qprefix: str = "") -> int:
        start = first if first is not None else outer
        end = last if last is not None else outer
        s, e = start.start_byte, end.end_byte
        head = outer.start_byte
        sig = signature(data, head, body.start_byte if body is not None else node.end_byte, strip_tail="{;")
        spans.append((s, e, len(defs)))
        d = make_def(kind, name, start.start_point[0] + 1, end.end_point[0] + 1, sig,
                     _leading_doc(start) or (_leading_doc(outer) if start is not outer else ""), sha256(data[s:e]))
        if qprefix:
            d["qprefix"] = qprefix
        defs.append(d)
        return len(defs) - 1

    def is_default(outer: Any) -> bool:
        return outer.type == "export_statement" and any(c.type == "default" for c in outer.children)

    # callables: TS overload signatures merge into the definition that follows them (one node per group)
    for cap, kind in _CALL_CAPS:
        for name_node in caps.get(cap + ".name", ()):
            node = name_node.parent
            raw = name_node.text
            name = _key_name(name_node)
            if name is None:
                continue  # computed names
            prev = _unwrap(_sibling(_outer(node), False))
            if prev is not None and prev.type in _SIGNATURES and _same_callable(prev, raw):
                continue  # a later member of an overload group: its head emits the group
            group = [node]
            while group[-1].type in _SIGNATURES:
                nxt = _unwrap(_sibling(_outer(group[-1]), True))
                if not _same_callable(nxt, raw):
                    break
                group.append(nxt)
            rep = group[-1] if group[-1].type not in _SIGNATURES else node
            name_pos.update(g.child_by_field_name("name").start_byte for g in group)
            outer = _outer(rep)
            if cap == "fn" and is_default(outer):
                default_export = name
            first, last = (_outer(node), _outer(group[-1])) if len(group) > 1 else (None, None)
            add_def(kind, clean_name(name), rep, rep.child_by_field_name("body"), outer, first, last)

    for cap, kind in _DECL_CAPS:
        for name_node in caps.get(cap + ".name", ()):
            node = name_node.parent
            name = _txt(name_node)
            if cap == "ns":
                name = "".join(name.split())
            elif _NAME_OK.fullmatch(name) is None:
                continue  # computed / string names
            name_pos.add(name_node.start_byte)
            body = node.child_by_field_name("body")
            if cap == "field":
                val = node.child_by_field_name("value")
                body = val.child_by_field_name("body") if val is not None else None
                if val is not None:
                    consumed.add(val.start_byte)
            outer = _outer(node)
            if cap == "class" and is_default(outer):
                default_export = name
            add_def(kind, clean_name(name), node, body, outer)

    # values bound to a name: `const x = () => …`, `a.b = function …`, `{ k: () => … }`
    for node in caps.get("var", ()):
        nm = node.child_by_field_name("name")
        val = node.child_by_field_name("value")
        if nm is None or val is None:
            continue
        consumed.add(val.start_byte)
        name_pos.add(nm.start_byte)
        outer = node.parent
        if outer is None or outer.named_child_count > 1:  # `const a = () => 1, b = 2`: the declarator only
            outer = node
        outer = _outer(outer)
        kind = "class" if val.type == "class" else "fn"
        add_def(kind, clean_name(_txt(nm)), node, val.child_by_field_name("body"), outer)
    for node in caps.get("assign", ()):
        left = node.child_by_field_name("left")
        val = node.child_by_field_name("right")
        if left is None or val is None:
            continue
        kind = "class" if val.type == "class" else "fn"
        qprefix = ""
        proto = None
        if left.type == "identifier":
            name = _txt(left)
        else:
            dotted = _dotted(left)
            if dotted is None:
                continue
            obj, _, prop = dotted.rpartition(".")
            prop = prop.lstrip("#")
            if dotted == "module.exports":
                own_name = val.child_by_field_name("name")
                name = _txt(own_name) if own_name is not None else "default"
                default_export = name
            elif val.type == "function_expression" and val.child_by_field_name("name") is not None:
                name = _txt(val.child_by_field_name("name"))  # `req.onload = function handleLoad () {}`
                if obj.endswith(".prototype"):
                    proto = obj[: -len(".prototype")]
                elif obj not in ("exports", "module.exports", "this"):
                    qprefix = obj
            elif obj in ("exports", "module.exports", "this"):
                name = prop
            elif obj.endswith(".prototype"):
                name, proto = prop, obj[: -len(".prototype")]
            else:
                name, qprefix = prop, obj
        if _NAME_OK.fullmatch(name) is None:
            continue
        consumed.add(val.start_byte)
        stmt = node.parent
        outer = stmt if stmt is not None and stmt.type == "expression_statement" else node
        i = add_def(kind, clean_name(name), node, val.child_by_field_name("body"), outer, qprefix=qprefix)
        if proto and "." not in proto:
            links[i] = proto
    for node in caps.get("pair", ()):
        key = node.child_by_field_name("key")
        val = node.child_by_field_name("value")
        if key is None or val is None:
            continue
        name = _key_name(key)
        own_name = val.child_by_field_name("name") if val.type == "function_expression" else None
        if own_name is not None:
            name = _txt(own_name)  # `{ get: function getRouter () {} }`
        if name is None:
            continue
        consumed.add(val.start_byte)
        name_pos.add(key.start_byte)
        kind = "class" if val.type == "class" else "fn"
        i = add_def(kind, clean_name(name), node, val.child_by_field_name("body"), node)
        proto = _prototype_owner(node.parent)
        if proto:
            links[i] = proto
    for node in caps.get("meth", ()):  # object-literal methods of `X.prototype = { m() {} }`
        proto = _prototype_owner(node.parent)
        if proto:
            for i, d in enumerate(defs):
                if spans[i][0] == node.start_byte and d["kind"] == "fn":
                    links[i] = proto

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
        consumed.add(val.start_byte)
        add_def(kind, "default", val, val.child_by_field_name("body"), outer)
        default_export = "default"
    for cap in ("fexpr", "cexpr"):  # named function / class expressions not bound to another name
        for name_node in caps.get(cap + ".name", ()):
            node = name_node.parent
            if node.start_byte in consumed:
                continue
            name = _txt(name_node)
            if _NAME_OK.fullmatch(name) is None:
                continue
            name_pos.add(name_node.start_byte)
            add_def("fn" if cap == "fexpr" else "class", clean_name(name), node, node.child_by_field_name("body"),
                    node)

    pre_sort = list(defs)
    owners = finish_defs(defs, spans, defer_ids=True)
    if links:
        pos_of = {id(d): k for k, d in enumerate(defs)}
        for i, owner_name in links.items():
            k = pos_of[id(pre_sort[i])]
            par = defs[k]["parent"]
            for j, d in enumerate(defs):
                if d["name"] == owner_name and d["parent"] == par and d["kind"] in ("fn", "class") and j != k:
                    defs[k]["parent"] = j
                    break
    assign_ids(defs)
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
            member = None
            if decl is not None and decl.type == "member_expression":  # const a = require('x').a
                prop = decl.child_by_field_name("property")
                member = _txt(prop) if prop is not None else None
                decl = decl.parent
            if decl is not None and decl.type == "assignment_expression":
                left = decl.child_by_field_name("left")
                if left is not None and _dotted(left) == "module.exports" and member is None:
                    imp["reexport"] = True  # module.exports = require('./impl')
                    imp["star"] = True
            elif decl is not None and decl.type == "variable_declarator" and member is not None:
                pat = decl.child_by_field_name("name")
                if pat is not None and pat.type == "identifier":
                    imp["names"].append([member, _txt(pat)])
                    bound.add(_txt(pat))
            elif decl is not None and decl.type == "variable_declarator":
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
    for node in caps.get("reqsrc", ()):  # TS: import x = require('x')
        src = _string_value(node)
        alias = node.parent.named_children[0] if node.parent is not None else None
        if src is not None:
            imp = import_binding(src, node.start_point[0] + 1)
            if alias is not None and alias.type == "identifier":
                imp["alias"] = _txt(alias)
                bound.add(imp["alias"])
            imports.append(imp)
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
    mcalls = [(node, _dotted(node)) for node in caps.get("mcall", ())]
    wanted = {d.partition(".")[0] for _, d in mcalls if d is not None and "." in d}
    wanted.discard("this")
    types = _collect_types(caps, defs, own, wanted)
    for node, d in mcalls:
        sb = node.start_byte
        line = node.start_point[0] + 1
        if d is None:
            prop = node.child_by_field_name("property")
            if prop is None:
                continue
            obj = node.child_by_field_name("object")
            recv = _value_type(obj) if obj is not None else None
            if recv and recv[0] != "=":  # new Foo().m(), "a".trim(), [..].map()
                add(["typed_call", f"{recv}:{_txt(prop).lstrip('#')}", own(sb), line])
            else:
                add(["method_call", _txt(prop).lstrip("#"), own(sb), line])
            continue
        head, _, rest = d.partition(".")
        if head == "this":
            if "." in rest:
                mid, _, m = rest.rpartition(".")
                add(["typed_call", "@>" + mid.replace(".", ">").replace("#", "") + ":" + m.lstrip("#"), own(sb), line])
            else:
                add(["self", rest.lstrip("#"), own(sb), line])
            continue
        recv = types.lookup(own(sb), head) if head in types.typed_names and head not in heads else None
        if recv:
            mid, _, m = rest.rpartition(".")
            texpr = recv + ">" + mid.replace(".", ">") if mid else recv
            add(["typed_call", texpr.replace("#", "") + ":" + m.lstrip("#"), own(sb), line])
            continue
        if head in JS_GLOBALS and head not in heads:
            continue
        if head == "super":
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

    for i, d in enumerate(defs):
        if d["kind"] == "class":
            attrs = types.attrs(i)
            if attrs:
                d["attrs"] = attrs
    blob["definitions"] = defs
    blob["references"] = pack_refs(refs)
    blob["imports"] = imports
    blob["config_refs"] = config_tokens(data, root)
    if default_export is not None:
        blob["extra"]["default_export"] = default_export
    return blob


def _prototype_owner(obj: Any) -> str | None:
    """``X`` when ``obj`` is the object literal of ``X.prototype = {…}``."""
    if obj is None or obj.type != "object":
        return None
    par = obj.parent
    if par is None or par.type != "assignment_expression":
        return None
    left = par.child_by_field_name("left")
    d = _dotted(left) if left is not None else None
    if d is None or not d.endswith(".prototype"):
        return None
    head = d[: -len(".prototype")]
    return head if "." not in head else None


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
