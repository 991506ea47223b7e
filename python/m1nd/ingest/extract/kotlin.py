"""Kotlin (issue 12 item 6) through the tags-query extractor (:mod:`m1nd.ingest.extract.tags`).

Definitions: classes (``class``; ``interface`` and ``enum class`` by their keyword), objects and companion objects
(``class``; an unnamed companion is ``Companion``), functions and methods (``fn``; extension functions keep their
name), type aliases (``type``). ``@A annotation class X`` (which the grammar reads as an infix expression) is still
a class, and declarations inside text the grammar gave up on are read from their header line. References: calls
(``f()``, ``this.f()``, ``super.f()``, ``Type.f()``, ``obj.f()``; ``Foo()`` is a constructor call), supertypes.
Imports: ``import a.b.C [as D]`` and ``import a.b.*``; the package header is the file's package.
"""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest.extract import tags
from m1nd.ingest.extract._common import import_binding

EXTRACTOR_VERSION = tags.EXTRACTOR_VERSION

_QUERY = r"""
(package_header (qualified_identifier) @package)
(class_declaration name: (_) @name) @def.class
(object_declaration name: (_) @name) @def.class
(companion_object) @def.class
(function_declaration name: (_) @name) @def.fn
(type_alias type: (_) @name) @def.type
(infix_expression . (identifier) @_ann . (identifier) @_cls . (identifier) @name
  (#eq? @_ann "annotation") (#eq? @_cls "class")) @def.class
(import) @ref.import
(call_expression . (_) @ref.call)
(delegation_specifier) @ref.base
"""


def _name_of(node: Any, name: Any, kind: str) -> tuple[str, str, str | None, Any] | None:
    if name is None:
        if node.type != "companion_object":
            return None
        # ``companion object { … }`` without a name is named ``Companion`` (``Foo.Companion``)
        nm = node.child_by_field_name("name")
        return (tags._txt(nm) if nm is not None else "Companion"), kind, None, None
    text = tags._txt(name).strip("`")
    if node.type == "class_declaration":
        for c in node.children:
            if c.type == "interface":
                kind = "interface"
                break
            if c.type == "modifiers" and any(m.type == "class_modifier" and m.text == b"enum"
                                             for m in c.named_children):
                kind = "enum"
                break
    return (text, kind, None, None) if text else None


def _user_type(node: Any) -> str:
    """``a.b.Foo<T>`` (a ``user_type``) -> ``a.b.Foo``."""
    parts = [tags._txt(c) for c in node.named_children if c.type == "identifier"]
    return ".".join(parts)


def _ref(cap: str, node: Any, ctx: tags.Ctx) -> None:
    t = node.type
    if cap == "ref.call":
        if t == "identifier":
            ctx.ref("call", tags._txt(node).strip("`"), node)
        elif t == "navigation_expression" and node.named_child_count == 2:
            obj, nm = node.named_child(0), node.named_child(1)
            if nm.type != "identifier":
                return
            name = tags._txt(nm).strip("`")
            ot = obj.type
            if ot == "this_expression":
                ctx.ref("self", name, node)
            elif ot == "super_expression":
                ctx.ref("super", name, node)
            elif ot in ("identifier", "navigation_expression") and obj.text[:1].isupper():
                d = tags._txt(obj)
                if d.replace(".", "").replace("_", "").isalnum():
                    ctx.ref("qualified", f"{d}.{name}", node)
                else:
                    ctx.ref("method_call", name, node)
            else:
                ctx.ref("method_call", name, node)
    elif cap == "ref.base":
        ut = None
        for c in node.named_children:
            if c.type == "user_type":
                ut = c
            elif c.type in ("constructor_invocation", "explicit_delegation"):
                ut = next((x for x in c.named_children if x.type == "user_type"), None)
            if ut is not None:
                break
        if ut is not None:
            d = _user_type(ut)
            if d:
                ctx.ref("base", d, node)
    elif cap == "ref.import":
        target = None
        alias = None
        star = False
        for c in node.children:
            if c.type == "qualified_identifier" or (c.type == "identifier" and target is None):
                target = tags._txt(c)
            elif c.type == "identifier":
                alias = tags._txt(c)
            elif c.type == "*":
                star = True
        if not target:
            return
        target = "".join(target.split())
        local = alias or target.rsplit(".", 1)[-1]
        ctx.imports.append(import_binding(target, node.start_point[0] + 1,
                                          names=[] if star else [[target.rsplit(".", 1)[-1], local]], star=star))


def _package(node: Any) -> str | None:
    return "".join(tags._txt(node).split()) or None


#: a declaration header at the start of a line (after modifiers / annotations), for text the grammar gave up on
_RECOVER = re.compile(
    rb"^[ \t]*(?:(?:@[\w.]+(?:\([^)\n]*\))?|[a-z]+)[ \t]+)*(?P<kw>fun|class|interface|object)[ \t]+"
    rb"(?:<[^>\n]*>[ \t]*)?(?:[\w.]+\.)?(?P<name>`[^`\n]+`|[A-Za-z_]\w*)",
    re.MULTILINE,
)
_RECOVER_KINDS = {b"fun": "fn", b"class": "class", b"interface": "interface", b"object": "class"}

SPEC = tags.Spec("kotlin", _QUERY, _name_of, _ref, comments=("line_comment", "block_comment"), package=_package,
                 recover=_RECOVER, recover_kinds=_RECOVER_KINDS)


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    return tags.extract_with(SPEC, relpath, data)
