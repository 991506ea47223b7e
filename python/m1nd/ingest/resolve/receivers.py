"""Receiver types: the type a ``typed_call`` reference's type expression names (see the extract
docstring), so that ``x.m()`` links to the method of ``x``'s type instead of a name-based guess."""

from __future__ import annotations

from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import (
    CALL_KINDS,
    CLASSLIKE,
    EXTERNAL,
    FN_KINDS,
    K_FN,
    NOTFOUND,
    TYPE_KINDS,
    FileState,
)


class ReceiverTypes(ResolverCore):
    """Evaluates receiver type expressions (``Foo``, ``make()``, ``@``, ``>attr`` chains)."""

    def eval_type(self, f: FileState, owner: int, texpr: str, depth: int) -> tuple[int, float]:
        """The type a receiver's type expression names (extract docstring, ``typed_call``), seen from ``owner``:
        ``(type node, factor)``, ``(EXTERNAL, 0)`` for a type outside the graph, or ``(NOTFOUND, 0)`` when it is
        not known (no guess: a type found only by path proximity counts as unknown)."""
        key = (owner, texpr)
        got = self.type_memo.get(key)
        if got is not None:
            return got
        self.type_memo[key] = (NOTFOUND, 0.0)  # cycle guard
        res = self._eval_type(f, owner, texpr, depth) if depth < 6 else (NOTFOUND, 0.0)
        self.type_memo[key] = res
        return res

    def returned_type(self, fn: int, depth: int) -> tuple[int, float]:
        """The type function ``fn`` returns (its ``ret``: annotation, or inferred from its ``return``s)."""
        ex = self.extra[fn]
        ret = ex.get("ret") if ex is not None else None
        if not ret:
            return NOTFOUND, 0.0
        return self.eval_type(self.file_by_idx[self.file_of[fn]], fn, ret, depth + 1)

    def method_return(self, t: int, name: str, depth: int) -> tuple[int, float]:
        """What calling ``name`` on an instance of type ``t`` gives (``>m()`` segments): the method's returned
        type, a nested class's instance; ``EXTERNAL`` when the method is inherited from outside the graph."""
        m = self.member(t, name, CALL_KINDS)
        if m == EXTERNAL:
            return EXTERNAL, 0.0
        if m < 0:
            return (EXTERNAL if self.has_outside_base(t) else NOTFOUND), 0.0
        if self.kind[m] != K_FN:
            return m, 1.0
        return self.returned_type(m, depth)

    def _eval_type(self, f: FileState, owner: int, texpr: str, depth: int) -> tuple[int, float]:
        if "|" in texpr:  # a union: one type when every alternative names it (or all lie outside the graph)
            got = {self.eval_type(f, owner, alt, depth) for alt in texpr.split("|")}
            types = {t for t, _ in got}
            if len(types) == 1:
                t = next(iter(types))
                return t, min(fac for _, fac in got)
            return NOTFOUND, 0.0
        base, *fields = texpr.split(">")
        factor = 1.0
        if base == "@":
            t = self.enclosing_type(owner)
            if t < 0:
                return NOTFOUND, 0.0
        elif base.endswith("()"):
            callee = base[:-2]
            if not callee:
                return NOTFOUND, 0.0
            t, factor = self.lookup(f, owner, callee, CALL_KINDS, "call")
            if t == EXTERNAL:
                return EXTERNAL, 0.0  # what a function or class outside the graph returns stays outside
            if t < 0 or not self._unique(f, callee, t, factor, "call"):
                return NOTFOUND, 0.0
            if self.kind[t] == K_FN:
                t, fac2 = self.returned_type(t, depth)
                if t < 0:
                    return t, 0.0
                factor = min(factor, fac2)
        else:
            t, factor = self.lookup(f, owner, base, TYPE_KINDS, "type")
            if t == EXTERNAL:
                return EXTERNAL, 0.0
            if t < 0 or not self._unique(f, base, t, factor, "type"):
                return NOTFOUND, 0.0
        for attr in fields:
            if attr.endswith("()"):
                t, fac2 = self.method_return(t, attr[:-2], depth)
            else:
                t, fac2 = self.attr_type(t, attr, depth)
            if t < 0:
                return t, 0.0
            factor = min(factor, fac2)
        if self.kind[t] not in CLASSLIKE:
            return NOTFOUND, 0.0
        return t, factor

    def _unique(self, f: FileState, name: str, got: int, factor: float, category: str) -> bool:
        """A graph-wide match (factor 0.6) is trusted only when it was the only candidate (step 6, not 7)."""
        if factor > 0.6 or "." in name:
            return True
        if category == "call":
            cands = self.g_top.get((f.fam, name), ())
        else:
            cands = self.g_types.get((f.fam, name), ())
        return len(cands) == 1

    def attr_type(self, t: int, attr: str, depth: int) -> tuple[int, float]:
        """Type of attribute ``attr`` of type ``t``: the nearest class of its hierarchy that assigns it decides."""
        seen = {t}
        queue = [t]
        while queue:
            c = queue.pop(0)
            ex = self.extra[c]
            if ex is not None:
                attrs = ex.get("attrs")
                if attrs is not None and attr in attrs:
                    texpr = attrs[attr]
                    if not texpr:
                        return NOTFOUND, 0.0
                    cf = self.file_by_idx[self.file_of[c]]
                    return self.eval_type(cf, c, texpr, depth + 1)
            for b in self.bases.get(c, ()):
                if b not in seen:
                    seen.add(b)
                    queue.append(b)
        # ``self.conn.query()`` where ``conn`` is a method: only a property (or a cached one) reads that way
        m = self.member(t, attr, FN_KINDS)
        if m >= 0:
            return self.returned_type(m, depth)
        return self.derived_attr_type(t, attr, depth)

    def derived_attr_type(self, t: int, attr: str, depth: int) -> tuple[int, float]:
        """A mixin's ``self.x`` that only the types derived from it assign (``setUp`` of the concrete test
        case): their one type when every derived type that assigns it agrees, else not known."""
        if self.derived is None:
            self.derived_member(t, "", frozenset())  # builds the index
        derived = self.derived or {}
        found: set[int] = set()
        factor = 1.0
        seen = {t}
        queue = list(derived.get(t, ()))
        while queue and len(seen) < 256:
            c = queue.pop()
            if c in seen:
                continue
            seen.add(c)
            ex = self.extra[c]
            attrs = ex.get("attrs") if ex is not None else None
            if attrs is not None and attr in attrs:
                texpr = attrs[attr]
                if not texpr:
                    return NOTFOUND, 0.0
                got, fac = self.eval_type(self.file_by_idx[self.file_of[c]], c, texpr, depth + 1)
                if got < 0 and got != EXTERNAL:
                    return NOTFOUND, 0.0
                found.add(got)
                factor = min(factor, fac)
            queue.extend(derived.get(c, ()))  # (a type derived from c may assign it again, differently)
        if len(found) == 1:
            got = next(iter(found))
            return got, (factor if got >= 0 else 0.0)
        return NOTFOUND, 0.0

    def eval_alternatives(self, f: FileState, owner: int, texpr: str, depth: int) -> list[tuple[int, float]]:
        """The types a receiver may hold: one per alternative of a union (``A()|B()``, or an attribute / a returned
        value whose type expression is one); ``[(NOTFOUND, 0)]`` when one of them is not known."""
        out: list[tuple[int, float]] = []
        for alt in texpr.split("|"):
            head, sep, last = alt.rpartition(">")
            if sep and not last.endswith("()"):
                t, factor = self.eval_type(f, owner, head, depth)
                if t >= 0:
                    out.extend((g, min(factor, fac)) for g, fac in self.attr_alternatives(t, last, depth))
                else:
                    out.append((t, 0.0))
            else:
                out.append(self.eval_type(f, owner, alt, depth))
            if any(t < 0 and t != EXTERNAL for t, _ in out):
                return [(NOTFOUND, 0.0)]
        return out

    def attr_alternatives(self, t: int, attr: str, depth: int) -> list[tuple[int, float]]:
        """:meth:`attr_type`, keeping a union attribute's alternatives apart."""
        c = self.attr_holder(t, attr)
        if c >= 0:
            texpr = self.extra[c]["attrs"][attr]
            if "|" in texpr:
                cf = self.file_by_idx[self.file_of[c]]
                return [self.eval_type(cf, c, alt, depth + 1) for alt in texpr.split("|")]
        return [self.attr_type(t, attr, depth)]

    def attr_holder(self, t: int, attr: str) -> int:
        """The nearest class of ``t``'s hierarchy that assigns attribute ``attr`` (-1: none)."""
        seen = {t}
        queue = [t]
        while queue:
            c = queue.pop(0)
            ex = self.extra[c]
            if ex is not None:
                attrs = ex.get("attrs")
                if attrs is not None and attr in attrs:
                    return c
            for b in self.bases.get(c, ()):
                if b not in seen:
                    seen.add(b)
                    queue.append(b)
        return -1
