"""PHP (issue 12 item 6) through the tags-query extractor (:mod:`m1nd.ingest.extract.tags`).

Definitions: classes, interfaces, traits (``trait``), enums, functions and methods (``fn``), namespaces (``mod``;
the file's namespace is its package, ``A\\B`` written ``A.B``). References: calls (``f()``, ``$this->f()``,
``self::f()`` / ``static::f()``, ``parent::f()``, ``Cls::f()``, ``$obj->f()``), ``new Cls``, ``extends``,
``implements`` and trait ``use`` inside a class. Imports: ``use A\\B\\C [as D];`` and group uses, as ``A.B.C``.
"""

from __future__ import annotations

from typing import Any

from m1nd.ingest.extract import tags
from m1nd.ingest.extract._common import import_binding

EXTRACTOR_VERSION = tags.EXTRACTOR_VERSION

_QUERY = r"""
(namespace_definition name: (_) @name) @def.mod
(namespace_definition name: (_) @package)
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.fn
(method_declaration name: (name) @name) @def.fn
(namespace_use_declaration) @ref.use
(function_call_expression function: (_) @ref.call)
(member_call_expression) @ref.member
(nullsafe_member_call_expression) @ref.member
(scoped_call_expression) @ref.scoped
(object_creation_expression) @ref.new
(base_clause (_) @ref.base)
(class_interface_clause (_) @ref.implements)
(use_declaration (_) @ref.base)
"""


def _name_of(node: Any, name: Any, kind: str) -> tuple[str, str, str | None, Any] | None:
    if name is None:
        return None
    text = tags._txt(name)
    if kind == "mod":
        text = "".join(text.split())
    return (text, kind, None, None) if text else None


def _qname(node: Any) -> str:
    if node.type in ("name", "qualified_name", "namespace_name"):
        return tags._dotted(tags._txt(node), "\\")
    return ""


def _ref(cap: str, node: Any, ctx: tags.Ctx) -> None:
    if cap == "ref.call":
        d = _qname(node)
        if d:
            ctx.ref("call", d.rsplit(".", 1)[-1], node)
    elif cap == "ref.member":
        nm = node.child_by_field_name("name")
        obj = node.child_by_field_name("object")
        if nm is None or nm.type != "name":
            return
        name = tags._txt(nm)
        if obj is not None and obj.type == "variable_name" and obj.text == b"$this":
            ctx.ref("self", name, node)
        else:
            ctx.ref("method_call", name, node)
    elif cap == "ref.scoped":
        nm = node.child_by_field_name("name")
        scope = node.child_by_field_name("scope")
        if nm is None or nm.type != "name" or scope is None:
            return
        name = tags._txt(nm)
        if scope.type == "relative_scope":
            ctx.ref("super" if scope.text == b"parent" else "self", name, node)
        else:
            d = _qname(scope)
            ctx.ref("qualified" if d else "method_call", f"{d}.{name}" if d else name, node)
    elif cap == "ref.new":
        for c in node.named_children:
            d = _qname(c)
            if d:
                ctx.ref("new", d, node)
                break
    elif cap in ("ref.base", "ref.implements"):
        d = _qname(node)
        if d:
            ctx.ref("base" if cap == "ref.base" else "implements", d, node)
    elif cap == "ref.use":
        _use(node, ctx)


def _use(node: Any, ctx: tags.Ctx) -> None:
    line = node.start_point[0] + 1
    prefix = ""
    kind = ""
    for c in node.children:
        if c.type in ("function", "const"):
            kind = c.type
        elif c.type == "namespace_name":
            prefix = _qname(c)
    clauses = [c for c in node.named_children if c.type == "namespace_use_clause"]
    group = node.child_by_field_name("body")
    if group is not None:
        clauses += [c for c in group.named_children if c.type == "namespace_use_clause"]
    for cl in clauses:
        alias_node = cl.child_by_field_name("alias")
        target = ""
        for c in cl.named_children:
            if c is not alias_node and c.type in ("name", "qualified_name"):
                target = _qname(c)
                break
        if not target:
            continue
        full = f"{prefix}.{target}" if prefix else target
        local = tags._txt(alias_node) if alias_node is not None else full.rsplit(".", 1)[-1]
        ctx.imports.append(import_binding(full, line, names=[[full.rsplit(".", 1)[-1], local]],
                                          **({"use_kind": kind} if kind else {})))


def _package(node: Any) -> str | None:
    return _qname(node) or None


SPEC = tags.Spec("php", _QUERY, _name_of, _ref, package=_package)


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    return tags.extract_with(SPEC, relpath, data)
