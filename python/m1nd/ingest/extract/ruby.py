"""Ruby (issue 12 item 6) through the tags-query extractor (:mod:`m1nd.ingest.extract.tags`).

Definitions: classes (``class``; ``class A::B`` is named ``B``), modules (``mod``), methods and singleton methods
(``def self.f``) (``fn``). References: calls (``f(…)``, ``self.f``, ``Const.f``, ``obj.f``), ``Const.new``, the
superclass and mixins (``include`` / ``extend`` / ``prepend`` of a constant) as bases. Imports: ``require`` and
``require_relative`` (``level`` 1 for the latter: relative to the file).
"""

from __future__ import annotations

from typing import Any

from m1nd.ingest.extract import tags
from m1nd.ingest.extract._common import import_binding

EXTRACTOR_VERSION = tags.EXTRACTOR_VERSION

_QUERY = r"""
(class name: (_) @name) @def.class
(module name: (_) @name) @def.mod
(method name: (_) @name) @def.fn
(singleton_method name: (_) @name) @def.fn
(superclass (_) @ref.base)
(call) @ref.call
"""

_MIXINS = frozenset({"include", "extend", "prepend"})
_REQUIRES = frozenset({"require", "require_relative", "load"})


def _name_of(node: Any, name: Any, kind: str) -> tuple[str, str, str | None, Any] | None:
    if name is None:
        return None
    if name.type == "scope_resolution":
        inner = name.child_by_field_name("name")
        name = inner if inner is not None else name
    text = tags._txt(name)
    return (text, kind, None, None) if text else None


def _const(node: Any) -> str:
    if node.type in ("constant", "scope_resolution"):
        return tags._dotted(tags._txt(node), "::")
    return ""


def _string(node: Any) -> str | None:
    """The text of a plain string literal (no interpolation)."""
    if node.type != "string":
        return None
    parts = node.named_children
    if len(parts) == 1 and parts[0].type == "string_content":
        return tags._txt(parts[0])
    return None


def _ref(cap: str, node: Any, ctx: tags.Ctx) -> None:
    if cap == "ref.base":
        d = _const(node)
        if d:
            ctx.ref("base", d, node)
        return
    meth = node.child_by_field_name("method")
    if meth is None:
        return
    name = tags._txt(meth)
    recv = node.child_by_field_name("receiver")
    if recv is None:
        if name in _REQUIRES or name in _MIXINS:
            args = node.child_by_field_name("arguments")
            for a in args.named_children if args is not None else ():
                if name in _MIXINS:
                    d = _const(a)
                    if d:
                        ctx.ref("base", d, a)
                else:
                    path = _string(a)
                    if path:
                        ctx.imports.append(import_binding(path, node.start_point[0] + 1,
                                                          level=1 if name == "require_relative" else 0))
            return
        ctx.ref("call", name, node)
        return
    rt = recv.type
    if rt == "self":
        ctx.ref("self", name, node)
    elif rt in ("constant", "scope_resolution"):
        d = _const(recv)
        if not d:
            ctx.ref("method_call", name, node)
        elif name == "new":
            ctx.ref("new", d, node)
        else:
            ctx.ref("qualified", f"{d}.{name}", node)
    else:
        ctx.ref("method_call", name, node)


SPEC = tags.Spec("ruby", _QUERY, _name_of, _ref)


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    return tags.extract_with(SPEC, relpath, data)
