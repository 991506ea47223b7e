"""Module-level aliases (``Lock = _allocate_lock``, ``SelectorEventLoop = _UnixSelectorEventLoop``): a module
variable bound once, by a statement of the module's top level (not under ``if`` / ``try``), to a (dotted) name,
is another name of what that name denotes, so other modules that import it, star-import it or reach it as
``mod.Lock`` find that object (the resolver follows ``extra.aliases``)."""

from __future__ import annotations

from typing import Any

from m1nd.ingest.extract._common import ScopeTypes
from m1nd.ingest.extract.python_types import SELF_NAMES, dotted, value_type

_NAME_NODES = ("identifier", "attribute")


def module_aliases(caps: dict[str, list[Any]], owner: Any, assigned: dict[str, list[int]], heads: set[str],
                   types: ScopeTypes) -> tuple[dict[str, str], dict[str, str]]:
    """``name -> dotted name`` for each top-level ``name = a.b`` that is the module scope's only binding of
    ``name``: not imported or defined there, bound by no other statement of the module scope (a second
    assignment, a loop or ``with`` target, ``del`` aside), and declared ``global`` by no function (which could
    re-bind it); and, on the same terms, ``name -> type expression`` of each ``name = Foo()`` (a call: a module's
    variable holding an instance, ``idleConf = IdleConf()``) for the modules that call ``mod.name.m()``.
    ``assigned`` holds every binding's offset (-1 for a ``global`` declaration)."""
    out: dict[str, str] = {}
    held: dict[str, str] = {}
    for node in caps.get("aname", ()):
        asg = node.parent
        right = asg.child_by_field_name("right")
        if right is None or asg.child_by_field_name("type") is not None:
            continue
        call = right.type == "call"
        if not call and right.type not in _NAME_NODES:
            continue
        stmt = asg.parent
        if stmt is None or stmt.type != "expression_statement" or stmt.parent is None or stmt.parent.type != "module":
            continue  # (under ``if`` / ``try``: only one of the module's possible bindings, e.g. a fallback)
        name = node.text.decode("utf-8", "replace")
        if name in heads or name in out or name in held or owner(node.start_byte) >= 0:
            continue
        offsets = assigned.get(name, ())
        if any(p < 0 or (p != node.start_byte and owner(p) < 0) for p in offsets):
            out[name] = ""  # bound twice in the module scope (or declared global): no alias
            continue
        if call:
            texpr = value_type(right)
            if texpr and texpr[0] not in "=@":
                held[name] = types.localize(-1, texpr)
            continue
        target = dotted(right)
        if target is None or target.partition(".")[0] in SELF_NAMES or target == name:
            continue
        out[name] = target
    return {k: v for k, v in out.items() if v}, held
