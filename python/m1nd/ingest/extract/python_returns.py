"""What Python functions give their callers: the ``ret`` inferred from ``return`` statements, the ``items`` of the
tuples they return (``a, b = f()``) and what a ``@contextmanager`` generator ``yields`` (``with f() as x``), as type
expressions (see the ``extract`` package docstring). The extractor (``python.py``) calls :func:`infer_returns`
once per file, after :func:`~m1nd.ingest.extract.python_types.collect_types`."""

from __future__ import annotations

from typing import Any

from m1nd.ingest.extract._common import ScopeTypes, union_of
from m1nd.ingest.extract.python_types import SELF_NAMES, UNKNOWN, dotted, value_type

_NAME_NODES = ("identifier", "attribute")


def infer_returns(
    caps: dict[str, list[Any]],
    defs: list[dict[str, Any]],
    owners: Any,
    types: ScopeTypes,
    fn_nodes: dict[int, Any],
) -> None:
    """``ret`` of a function without a return annotation, from its ``return`` statements: set when every
    returned value has a known type expression, their union when they differ (``return None`` / bare ``return``
    say nothing; ``return self``
    is the enclosing type). Generators and ``async def`` are left out: calling them gives a generator or a
    coroutine, not the returned value."""
    skip = {owners.owner(n.start_byte) for n in caps.get("yield", ())}
    if skip:
        _context_yields(caps, defs, owners, types, fn_nodes)
    rets: dict[int, set[str]] = {}
    items: dict[int, list[list[str]]] = {}  # function -> the item types of each tuple it returns
    for node in caps.get("ret", ()):
        o = owners.owner(node.start_byte)
        if o < 0 or o in skip or defs[o]["kind"] != "fn":
            continue
        fn = fn_nodes.get(o)
        if fn is None or fn.child_by_field_name("return_type") is not None or fn.children[0].type == "async":
            skip.add(o)
            continue
        val = node.named_child(0) if node.named_child_count else None
        if val is None:
            continue
        if val.type in _TUPLES:  # ``return sock, addr``: each item's type, for ``a, b = f()`` (``f()>#0``)
            items.setdefault(o, []).append([_returned_type(types, o, item) or UNKNOWN for item in val.named_children])
        elif val.type != "none":
            items.setdefault(o, []).append([])  # (a value that may be no tuple: no item types)
        if val.type == "identifier":
            nm = val.text.decode("utf-8", "replace")
            if nm == "self" and types.class_of_method(o) >= 0:
                texpr: str | None = "@"
            elif nm in SELF_NAMES:
                texpr = UNKNOWN  # ``return cls``: the class object, not an instance
            else:
                texpr = types.lookup(o, nm) or UNKNOWN
                if "!" in texpr:
                    texpr = UNKNOWN  # ``return Foo``: the class object (not followed), not an instance
        else:
            texpr = value_type(val, 0, types.rebound_self.get(o, SELF_NAMES))
            if texpr is not None and texpr.startswith("="):
                texpr = UNKNOWN
            elif texpr:
                texpr = types.localize(o, texpr)
        if texpr is None:
            continue
        rets.setdefault(o, set()).add(texpr)
    for o, vals in rets.items():
        if o in skip or not vals or not all(vals):
            continue
        # several returned types: their union (the resolver links a call on it when all agree on the method)
        texpr = next(iter(vals)) if len(vals) == 1 else union_of(vals)
        if texpr:
            defs[o]["ret"] = texpr
    for o, rows in items.items():
        # every ``return`` a tuple of one length (``return None`` aside): each position's type, or their union
        if o in skip or len({len(r) for r in rows}) != 1 or not rows[0]:
            continue
        cols = [union_of(set(col)) if all(col) else UNKNOWN for col in zip(*rows)]
        if any(cols):
            defs[o]["items"] = cols
    for o, fn in fn_nodes.items():
        if o not in rets and defs[o]["kind"] == "fn" and _only_raises_not_implemented(fn):
            defs[o]["abstract"] = True


def _only_raises_not_implemented(fn: Any) -> bool:
    """Is the body of function ``fn`` only ``raise NotImplementedError[(...)]`` (a docstring aside)? Such a method
    returns nothing: the types derived from its class give what ``self.m()`` returns."""
    body = fn.child_by_field_name("body")
    if body is None or body.named_child_count > 2:
        return False
    stmts = [c for c in body.named_children if c.type != "comment"]
    if len(stmts) == 2 and stmts[0].type == "expression_statement" and stmts[0].named_child_count == 1 \
            and stmts[0].named_child(0).type == "string":
        stmts = stmts[1:]
    if len(stmts) != 1 or stmts[0].type != "raise_statement" or not stmts[0].named_child_count:
        return False
    exc = stmts[0].named_child(0)
    if exc.type == "call":
        exc = exc.child_by_field_name("function")
    return exc is not None and exc.type == "identifier" and exc.text == b"NotImplementedError"


_TUPLES = ("expression_list", "tuple")
_CONTEXT_MANAGERS = frozenset({"contextmanager", "contextlib.contextmanager"})


def _context_yields(
    caps: dict[str, list[Any]], defs: list[dict[str, Any]], owners: Any, types: ScopeTypes, fn_nodes: dict[int, Any]
) -> None:
    """``yields`` of a ``@contextmanager`` generator: the type ``with f() as x`` gives ``x`` (``f()>__enter__()``),
    set when every ``yield`` gives a known type expression (a bare ``yield`` / ``yield None`` says nothing), their
    union when they differ."""
    vals: dict[int, set[str]] = {}
    managers: dict[int, bool] = {}
    for node in caps.get("yield", ()):
        o = owners.owner(node.start_byte)
        if o < 0:
            continue
        is_cm = managers.get(o)
        if is_cm is None:
            fn = fn_nodes.get(o)
            par = fn.parent if fn is not None else None
            is_cm = managers[o] = par is not None and par.type == "decorated_definition" and any(
                dotted(d.named_child(0)) in _CONTEXT_MANAGERS for d in par.named_children
                if d.type == "decorator" and d.named_child_count and d.named_child(0).type in _NAME_NODES
            )
        if not is_cm:
            continue
        val = node.named_child(0) if node.named_child_count else None
        if val is None or val.type == "none":
            continue
        vals.setdefault(o, set()).add(_returned_type(types, o, val) or UNKNOWN)
    for o, got in vals.items():
        if all(got):
            texpr = next(iter(got)) if len(got) == 1 else union_of(got)
            if texpr:
                defs[o]["yields"] = texpr


def _returned_type(types: ScopeTypes, o: int, val: Any) -> str | None:
    """Type expression of one returned value (an item of a returned tuple), seen from function ``o``."""
    if val.type == "identifier":
        nm = val.text.decode("utf-8", "replace")
        if nm == "self" and types.class_of_method(o) >= 0:
            return "@"
        if nm in SELF_NAMES:
            return UNKNOWN
        texpr = types.lookup(o, nm) or UNKNOWN
        return UNKNOWN if "!" in texpr else texpr
    texpr = value_type(val, 0, types.rebound_self.get(o, SELF_NAMES))
    if texpr is None or texpr.startswith("="):
        return UNKNOWN
    return types.localize(o, texpr) if texpr else texpr
