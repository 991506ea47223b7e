"""Module-level aliases (``Lock = _allocate_lock``, ``SelectorEventLoop = _UnixSelectorEventLoop``): a module
variable bound once, by a statement of the module's top level (not under ``if`` / ``try``), to a (dotted) name,
is another name of what that name denotes, so other modules that import it, star-import it or reach it as
``mod.Lock`` find that object (the resolver follows ``extra.aliases``)."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest.extract._common import ScopeTypes
from m1nd.ingest.extract.python_types import SELF_NAMES, dotted, value_type

_NAME_NODES = ("identifier", "attribute")


def module_aliases(caps: dict[str, list[Any]], owner: Any, assigned: dict[str, list[int]], heads: set[str],
                   types: ScopeTypes, stars: bool = False) -> tuple[dict[str, str], dict[str, str]]:
    """``name -> dotted name`` for each top-level ``name = a.b`` that is the module scope's only binding of
    ``name``: not imported or defined there, bound by no other statement of the module scope (a second
    assignment, a loop or ``with`` target, ``del`` aside), and declared ``global`` by no function (which could
    re-bind it); and, on the same terms, ``name -> type expression`` of each ``name = Foo()`` (a call: a module's
    variable holding an instance, ``idleConf = IdleConf()``) for the modules that call ``mod.name.m()``.
    A name the module scope binds only so, several times or under ``if`` / ``try`` (``try: _CRLock =
    _thread.RLock`` / ``except: _CRLock = None``; ``if ...: DefaultSelector = KqueueSelector`` / ``elif ...``),
    each time to a dotted name or ``None``, is the union of those names (``a.b|c.d``; ``None`` holds nothing to
    call); not in a module with a star import, which may bind any name too (``from posix import *`` ... ``if not
    _exists('fspath'): fspath = _fspath``). ``assigned`` holds every binding's offset (-1 for a ``global``
    declaration)."""
    out: dict[str, str] = {}
    held: dict[str, str] = {}
    # name -> its module-scope bindings by assignment: (offset, dotted target / "" for None / None for other, top)
    found: dict[str, list[tuple[int, str | None, bool]]] = {}
    for node in caps.get("aname", ()):
        if owner(node.start_byte) >= 0:
            continue  # (first: a function's ``a = b = ... = z`` chain of 800 names stays linear)
        asg = node.parent
        right = asg.child_by_field_name("right")
        if right is None or asg.child_by_field_name("type") is not None:
            continue
        stmt = asg.parent
        steps = 0  # ``Future = _CFuture = _asyncio.Future``: the value at the chain's end, the statement at its top
        while right is not None and right.type == "assignment" and steps < _CHAIN:
            right = right.child_by_field_name("right")
            steps += 1
        while stmt is not None and stmt.type == "assignment" and steps < _CHAIN:
            stmt = stmt.parent
            steps += 1
        if steps >= _CHAIN:
            continue  # (a longer chain: no alias; bound so, the name is no alias anywhere)
        if stmt is None or stmt.type != "expression_statement":
            continue
        name = node.text.decode("utf-8", "replace")
        if name in heads:
            continue
        top = stmt.parent is not None and stmt.parent.type == "module"
        if not top and (stars or not _conditional(stmt.parent)):
            found.setdefault(name, []).append((node.start_byte, None, False))  # (in a loop: no alias)
            continue
        if right is None:
            val: str | None = None
        elif right.type == "call":
            val = None
            if top:
                texpr = value_type(right)
                if texpr and texpr[0] not in "=@":
                    held[name] = types.localize(-1, texpr)
        elif right.type == "none":
            val = ""
        elif right.type in _NAME_NODES:
            val = dotted(right)
            if val is None or val.partition(".")[0] in SELF_NAMES or val == name:
                val = None
        else:
            val = None
        found.setdefault(name, []).append((node.start_byte, val, top))
    for name, binds in found.items():
        mine = {p for p, _, _ in binds}
        offsets = assigned.get(name, ())
        if any(p < 0 or (p not in mine and owner(p) < 0) for p in offsets):
            held.pop(name, None)
            continue  # bound otherwise too (a loop or ``with`` target, a ``global`` declaration)
        if len(binds) == 1:
            _, val, top = binds[0]
            if top:
                if val:
                    out[name] = val
                continue
        held.pop(name, None)  # (bound twice: no one instance)
        vals = [v for _, v, _ in binds]
        if any(v is None for v in vals) or not any(vals):
            continue
        out[name] = "|".join(sorted({v for v in vals if v}))
    return out, held


#: functions that return the module their first argument names (``importlib.import_module``, the stdlib tests'
#: ``import_helper.import_module`` / ``import_fresh_module``, ``warnings_helper.import_deprecated``)
_IMPORTERS = frozenset({"import_module", "import_fresh_module", "import_deprecated"})
_MODULE_STRING = re.compile(rb"""(['"])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\1""")


def dynamic_imports(caps: dict[str, list[Any]], owner: Any) -> dict[str, tuple[str, int, int]]:
    """``name -> (module, line, offset)`` of each top-level ``name = import_module("a.b")`` (or another of
    ``_IMPORTERS``, dotted or not, with the module's absolute name as a string literal first): the module object,
    as ``import a.b as name`` would bind it; not ``import_fresh_module(..., fresh=[...])``, whose names are the C
    accelerator's (the graph's module has the Python ones). The caller keeps it only when nothing else binds
    ``name`` in the module scope (:func:`keep_dynamic_imports`)."""
    out: dict[str, tuple[str, int, int]] = {}
    for node in caps.get("aname", ()):
        if owner(node.start_byte) >= 0:
            continue
        asg = node.parent
        right = asg.child_by_field_name("right")
        stmt = asg.parent
        if (right is None or right.type != "call" or asg.child_by_field_name("type") is not None or stmt is None
                or stmt.type != "expression_statement" or stmt.parent is None or stmt.parent.type != "module"):
            continue
        fn = right.child_by_field_name("function")
        callee = dotted(fn) if fn is not None and fn.type in _NAME_NODES else None
        args = right.child_by_field_name("arguments")
        if callee is None or callee.rpartition(".")[2] not in _IMPORTERS or args is None or not args.named_child_count:
            continue
        if any(a.type == "keyword_argument" and a.child_by_field_name("name").text == b"fresh"
               for a in args.named_children):
            continue  # ``import_fresh_module("decimal", fresh=["_decimal"])``: the C version, outside the graph
        first = args.named_child(0)
        got = _MODULE_STRING.fullmatch(first.text) if first.type == "string" else None
        if got is not None:
            name = node.text.decode("utf-8", "replace")
            out[name] = (got.group(2).decode(), node.start_point[0] + 1, node.start_byte)
    return out


def keep_dynamic_imports(found: dict[str, tuple[str, int, int]], assigned: dict[str, list[int]],
                         owner: Any) -> dict[str, tuple[str, int, int]]:
    """The names of :func:`dynamic_imports` that the module scope binds nowhere else (a function's local of the
    same name aside; no ``global`` declaration)."""
    return {name: v for name, v in found.items()
            if not any(p < 0 or (p != v[2] and owner(p) < 0) for p in assigned.get(name, ()))}


#: longest ``a = b = ... = value`` chain whose names may be aliases (longer: linear time, no alias)
_CHAIN = 16
#: statements and clauses a module-scope assignment may sit in and still bind a module variable under a condition
_CONDITIONAL = frozenset({"block", "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
                          "except_group_clause", "finally_clause"})


def _conditional(node: Any) -> bool:
    """Is ``node`` (a statement's parent) inside ``if`` / ``try`` blocks of the module scope only?"""
    while node is not None and node.type != "module":
        if node.type not in _CONDITIONAL:
            return False
        node = node.parent
    return node is not None
