"""What the flow of a Python function tells about a name's type, beyond its bindings: ``isinstance`` tests that
narrow a receiver inside an ``if`` or after an early exit, and the writes that fill a local list or set a loop then
reads (``items.append(A())``). Split from ``python_types`` (bindings and value types); the extractor
(``python.py``) calls :func:`narrowed_type` for method calls on untyped names and :func:`container_writes` once per
file."""

from __future__ import annotations

import functools
import re
from typing import Any

from m1nd.ingest.extract._common import UNION_MAX, UNKNOWN_TYPE, ScopeTypes
from m1nd.ingest.extract.python_types import dotted, value_type

UNKNOWN = UNKNOWN_TYPE
_NAME_NODES = ("identifier", "attribute")

# ------------------------------------------------------------------------------------------ container writes

#: methods that put an element into a list or set (their argument's type is an element type)
_ADDERS = {"append": 0, "add": 0, "insert": 1}
#: other methods that change a container's elements (their elements are not known)
_MUTATORS = frozenset(
    {"extend", "update", "__setitem__", "__iadd__", "setdefault", "__ior__", "symmetric_difference_update"}
)


def container_writes(
    caps: dict[str, list[Any]], acall_texts: list[bytes], owners: Any, types: ScopeTypes, data: bytes
) -> None:
    """What goes into local lists and sets that loops read (``items.append(A())``); a container changed any other
    way (``extend``, ``items[i] = …``, ``+=``, passed to a call that may fill it) has elements of unknown type."""
    # (only containers bound to a literal or comprehension somewhere: the others' elements are unknown anyway)
    wanted = types.wanted
    names = {
        n for d in types.inf.values() for n, vals in d.items()
        if n + "[]" in wanted and any(v in ("list", "tuple", "set") for v, _ in vals)
    }
    if not names:
        return
    owner = owners.owner
    heads = {n.encode() for n in names}
    for node, text in zip(caps.get("acall", ()), acall_texts):
        head, _, meth_b = text.partition(b".")
        head = head.strip()
        if head not in heads or b"." in meth_b:
            continue
        name = head.decode("utf-8", "replace")
        meth = meth_b.decode("utf-8", "replace").strip()
        pos = _ADDERS.get(meth)
        if pos is None and meth not in _MUTATORS:
            continue
        o = owner(node.start_byte)
        s = types.scope_of(o, name)
        if s is None:
            continue
        args = node.parent.child_by_field_name("arguments")
        val: str | None = UNKNOWN
        if pos is not None and args is not None and args.named_child_count == pos + 1:
            arg = args.named_child(pos)
            val = value_type(arg) if arg.type != "keyword_argument" else UNKNOWN
        types.bind(s, name + "[]", val, at=o)
    for name in names:  # writes the captures above do not show
        scopes = {s for s, d in types.inf.items() if name + "[]" in d}
        nb = name.encode()
        for s in scopes:
            fn = types.fn_nodes.get(s)
            if fn is None or _written(data, fn.start_byte, fn.end_byte, nb):
                types.bind(s, name + "[]", UNKNOWN)


@functools.lru_cache(maxsize=4096)  # bounded: an in-process ingest runs inside a long-lived server
def _word_pattern(name: bytes) -> re.Pattern[bytes]:
    return re.compile(rb"(?<![\w.])" + re.escape(name) + rb"(?![\w])")


def _written(data: bytes, start: int, end: int, name: bytes) -> bool:
    """Is container ``name`` changed in ``data[start:end]`` in a way the captures do not show: ``name += …``,
    ``name |= …``, ``name[i] = …``, or passed to a call (other than a builtin that only reads it)?"""
    for m in _word_pattern(name).finditer(data, start, end):
        after = data[m.end() : m.end() + 40].lstrip(b" \t")
        if after[:2] in (b"+=", b"|=") or (after[:1] == b"[" and _SUBSCRIPT_SET.match(after)):
            return True
        before = data[max(start, m.start() - 40) : m.start()].rstrip(b" \t*")
        if before[-1:] in (b"(", b",") and after[:1] in (b")", b","):
            callee = _CALLEE.search(before)
            if callee is None or callee.group(1) not in _READERS:
                return True
    return False


_SUBSCRIPT_SET = re.compile(rb"\[[^\]\n]*\]\s*=(?!=)")
_CALLEE = re.compile(rb"([\w.]*)\s*\($")


#: builtins that read a container passed to them (``len(items)``: no write); any other call may fill it
_READERS = frozenset(
    b"len sorted list tuple set frozenset enumerate iter reversed any all sum min max print zip isinstance repr str "
    b"bool".split()
)


# ------------------------------------------------------------------------------------------ isinstance narrowing

_SCOPE_NODES = frozenset({"function_definition", "class_definition", "lambda", "module"})
_EXITS = frozenset({"raise_statement", "return_statement", "continue_statement", "break_statement"})


def _isinstance_of(cond: Any, name: bytes) -> str | None:
    """``T`` for a condition ``isinstance(name, T)`` (``A|B`` for a tuple of types), else None."""
    if cond.type != "call":
        return None
    fn = cond.child_by_field_name("function")
    if fn is None or fn.type != "identifier" or fn.text != b"isinstance":
        return None
    args = cond.child_by_field_name("arguments")
    if args is None or args.named_child_count != 2:
        return None
    what, types = args.named_child(0), args.named_child(1)
    if what.type != "identifier" or what.text != name:
        return None
    alts = types.named_children if types.type == "tuple" else [types]
    names = [dotted(a) if a.type in _NAME_NODES else None for a in alts]
    if not names or None in names or len(names) > UNION_MAX:
        return None
    return "|".join(sorted({"^" + n for n in names if n}))  # type: ignore[operator]


def _rebinds(data: bytes, start: int, end: int, name: bytes) -> bool:
    """Does ``data[start:end]`` assign ``name`` (``name =``, ``name +=``, ``for name``, ``as name``, ``name :=``,
    ``a, name =``)? A textual check, erring towards yes."""
    seg = data[start:end]
    if name not in seg:
        return False
    return _rebind_pattern(name).search(seg) is not None


@functools.lru_cache(maxsize=4096)  # bounded: an in-process ingest runs inside a long-lived server
def _rebind_pattern(name: bytes) -> re.Pattern[bytes]:
    n = re.escape(name)
    return re.compile(
        rb"(?<![\w.])" + n + rb"\s*(?:[-+*/%&|^@:]|//|\*\*|>>|<<)?=(?!=)"  # x = / x += / x :=
        + rb"|\bas\s+" + n + rb"\b|\bfor\b[^:\n]*(?<![\w.])" + n + rb"\b"  # as x / for ... x ... in
        + rb"|(?<![\w.])" + n + rb"\s*,[^=\n]*=(?!=)|,\s*" + n + rb"\s*(?:,[^=\n]*)?=(?!=)"  # x, y = / a, x =
        + rb"|\bdel\s+" + n + rb"\b"
    )


def narrowed_type(node: Any, name: bytes, data: bytes) -> str | None:
    """The type ``isinstance`` gives name ``name`` at ``node`` (a call on it): inside ``if isinstance(name, T):``
    (or an ``elif``), or after ``if not isinstance(name, T): raise`` (``return`` / ``continue`` / ``break``) in an
    enclosing block of the same function, when ``name`` is not assigned in the statements that follow the test
    (up to the end of the block or statement holding the call: a loop may come back to the call). ``^T``: an
    instance of ``T`` or of a type derived from it (the resolver links only a method they all share); None when
    nothing narrows it."""
    cur = node
    for _ in range(64):
        par = cur.parent
        if par is None or par.type in _SCOPE_NODES:
            return None
        if par.type == "block":
            # an early exit before ``cur`` in this block: ``if not isinstance(x, T): raise ...``
            sib = cur.prev_named_sibling
            while sib is not None:
                if sib.type == "if_statement" and sib.child_by_field_name("alternative") is None:
                    cond = sib.child_by_field_name("condition")
                    body = sib.child_by_field_name("consequence")
                    if (
                        cond is not None
                        and cond.type == "not_operator"
                        and body is not None
                        and body.named_child_count
                        and body.named_child(body.named_child_count - 1).type in _EXITS
                    ):
                        arg = cond.child_by_field_name("argument")
                        t = _isinstance_of(arg, name) if arg is not None else None
                        if t is not None:
                            return None if _rebinds(data, sib.end_byte, cur.end_byte, name) else t
                sib = sib.prev_named_sibling
            holder = par.parent
            if (
                holder is not None
                and holder.type in ("if_statement", "elif_clause")
                and holder.child_by_field_name("consequence") == par
            ):
                cond = holder.child_by_field_name("condition")
                t = _isinstance_of(cond, name) if cond is not None else None
                if t is not None:
                    return None if _rebinds(data, par.start_byte, par.end_byte, name) else t
        cur = par
    return None
