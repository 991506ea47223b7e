"""C# (issue 12 item 6) through the tags-query extractor (:mod:`m1nd.ingest.extract.tags`).

Definitions: classes and records (``class``), structs, interfaces, enums, delegates (``type``), methods,
constructors, destructors, operators, local functions (``fn``), namespaces (``mod``; the first one is the file's
package).
References: calls (``F()``, ``this.F()``, ``base.F()``, ``Type.F()``, ``obj.F()``), ``new T()``, base types, the
types of parameters, locals, properties and return values.
Imports: ``using A.B;`` (every type of the namespace: a star import), ``using X = A.B.C;``, ``using static A.B.C;``;
``global using A.B;`` (``scope`` = ``"global"``) holds for every C# file of the graph.
"""

from __future__ import annotations

from typing import Any

from m1nd.ingest.extract import tags
from m1nd.ingest.extract._common import import_binding

EXTRACTOR_VERSION = tags.EXTRACTOR_VERSION

_QUERY = r"""
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(delegate_declaration name: (identifier) @name) @def.type
(method_declaration name: (identifier) @name) @def.fn
(constructor_declaration name: (identifier) @name) @def.fn
(destructor_declaration name: (identifier) @name) @def.fn
(local_function_statement name: (identifier) @name) @def.fn
(operator_declaration operator: _ @name) @def.fn
(conversion_operator_declaration type: (_) @name) @def.fn
(namespace_declaration name: (_) @name) @def.mod
(file_scoped_namespace_declaration name: (_) @name) @def.mod
(namespace_declaration name: (_) @package)
(file_scoped_namespace_declaration name: (_) @package)
(using_directive) @ref.using
(invocation_expression function: (_) @ref.call)
(object_creation_expression type: (_) @ref.new)
(base_list (_) @ref.base)
(parameter type: (_) @ref.type)
(variable_declaration type: (_) @ref.type)
(property_declaration type: (_) @ref.type)
(method_declaration returns: (_) @ref.type)
"""


def _name_of(node: Any, name: Any, kind: str) -> tuple[str, str, str | None, Any] | None:
    if name is None:
        return None
    text = "".join(tags._txt(name).split())
    if node.type == "destructor_declaration":
        text = "~" + text
    elif node.type in ("operator_declaration", "conversion_operator_declaration"):
        text = "operator " + text  # ``operator ==``, ``operator DateTime`` (ctags' spelling)
    return text, kind, None, None


def _type_name(node: Any) -> str:
    """``Foo`` / ``A.B.Foo`` / ``Foo<T>`` -> dotted name without type arguments ("" for predefined types)."""
    if node.type in ("generic_name",):
        node = node.named_child(0) if node.named_child_count else node
    if node.type not in ("identifier", "qualified_name", "generic_name", "alias_qualified_name"):
        return ""
    return tags._dotted(tags._txt(node), "::")


def _ref(cap: str, node: Any, ctx: tags.Ctx) -> None:
    t = node.type
    if cap == "ref.call":
        if t == "identifier":
            ctx.ref("call", tags._txt(node), node)
        elif t == "generic_name":
            ctx.ref("call", tags._txt(node.named_child(0)), node)
        elif t == "member_access_expression":
            nm = node.child_by_field_name("name")
            if nm is None:
                return
            if nm.type == "generic_name" and nm.named_child_count:
                nm = nm.named_child(0)
            name = tags._txt(nm)
            obj = node.child_by_field_name("expression")
            if obj is None:
                obj = node.child(0)
            ot = obj.type if obj is not None else ""
            if ot == "this" or (obj is not None and obj.text == b"this"):
                ctx.ref("self", name, node)
            elif ot == "base" or (obj is not None and obj.text == b"base"):
                ctx.ref("super", name, node)
            elif ot in ("identifier", "member_access_expression", "qualified_name"):
                d = tags._txt(obj)
                if d[:1].isupper() and d.replace(".", "").replace("_", "").isalnum():
                    ctx.ref("qualified", f"{d}.{name}", node)
                else:
                    ctx.ref("method_call", name, node)
            else:
                ctx.ref("method_call", name, node)
    elif cap == "ref.new":
        d = _type_name(node)
        if d:
            ctx.ref("new", d, node)
    elif cap == "ref.type":
        if t == "nullable_type" and node.named_child_count:
            node = node.named_child(0)
        d = _type_name(node)
        if d and d != "var":
            ctx.ref("reference", d, node)
    elif cap == "ref.base":
        if t == "primary_constructor_base_type":
            node = node.named_child(0) if node.named_child_count else node
        d = _type_name(node)
        if d:
            ctx.ref("base", d, node)
    elif cap == "ref.using":
        static = any(c.type == "static" for c in node.children)
        alias_node = node.child_by_field_name("name")
        target = None
        for c in node.named_children:
            if c is not alias_node and c.type in ("identifier", "qualified_name"):
                target = tags._dotted(tags._txt(c), "::")
        if not target:
            return
        line = node.start_point[0] + 1
        if alias_node is not None:
            alias = tags._txt(alias_node)
            ctx.imports.append(import_binding(target, line, names=[[target.rsplit(".", 1)[-1], alias]]))
        else:  # ``using A.B;`` brings every type of namespace A.B; ``using static A.B.C;`` C's static members
            extra = {"scope": "global"} if any(c.type == "global" for c in node.children) else {}
            ctx.imports.append(import_binding(target, line, star=True, static=static, **extra))


def _package(node: Any) -> str | None:
    return tags._dotted(tags._txt(node), "::") or None


SPEC = tags.Spec("csharp", _QUERY, _name_of, _ref, package=_package)


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    return tags.extract_with(SPEC, relpath, data)
