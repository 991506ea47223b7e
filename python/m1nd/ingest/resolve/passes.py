"""The reference passes: hierarchy first (``base`` / ``implements`` → ``inherits`` / ``implements``,
the type hierarchy later lookups walk), then every other reference → ``calls`` / ``references``."""

from __future__ import annotations

from m1nd.graph.schema import CALLS, IMPLEMENTS, INHERITS, REFERENCES
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import (
    SET_FACTOR,
    SET_MAX,
    AMBIG,
    BASE_KINDS,
    BROKEN,
    CALL_KINDS,
    CLASSLIKE,
    CODE_FAMILIES,
    DECORATOR_KINDS,
    EXTERNAL,
    FN_KINDS,
    IMPL_KINDS,
    K_IMPL,
    K_MOD,
    MACRO_KINDS,
    NEW_KINDS,
    NOTFOUND,
    STOPLIST,
    TYPE_KINDS,
    FileState,
)


class ReferencePasses(ResolverCore):
    """Resolves the extracts' references into edges."""

    def resolve_refs(self) -> None:
        files = [self.files[r] for r in sorted(self.files)]
        for f in files:
            self.bindings_of(f)
        for f in files:
            for target, rel, factor in f.import_edges:
                self.edge(f.idx, target, rel, factor)
        # pass A: hierarchy
        for f in files:
            if f.fam not in CODE_FAMILIES:
                continue
            syms = f.syms
            for ref in f.blob.get("references") or ():
                kind = ref[0]
                if kind != "base" and kind != "implements":
                    continue
                owner = syms[ref[2]] if ref[2] >= 0 else f.idx
                if owner < 0:
                    continue
                self._resolve_hierarchy(f, owner, kind, ref[1], ref[3])
        # Rust impls: impl -> type reference and the type index used by method lookup
        for f in files:
            if f.fam != "rs":
                continue
            for idx in f.syms:
                if idx >= 0 and self.kind[idx] == K_IMPL:
                    self.impl_type_of(idx)
        # pass B
        for f in files:
            if f.fam not in CODE_FAMILIES:
                continue
            syms = f.syms
            for ref in f.blob.get("references") or ():
                kind = ref[0]
                if kind == "base" or kind == "implements":
                    continue
                owner = syms[ref[2]] if ref[2] >= 0 else f.idx
                if owner < 0:
                    continue
                self._resolve_ref(f, owner, kind, ref[1], ref[3])

    def _union_targets(self, f: FileState, owner: int, texpr: str, meth: str) -> tuple[int, ...]:
        """The definitions of method ``meth`` over every type the receiver may hold (``eval_set``), sorted, with
        ``EXTERNAL`` for the types outside the graph (or inheriting the method from outside it): a call may call
        each (see :meth:`_link_targets`). ``()`` when one type is not known or lacks the method (a stored
        callable, a method the graph does not see); ``(AMBIG,)`` when a type is not known in a way no name-based
        guess would mend, or there are more than ``SET_MAX`` definitions."""
        alts = self.eval_set(f, owner, texpr, 0)
        if not alts:
            return ()
        if AMBIG in alts:
            return (AMBIG,)
        targets = set()
        for t in alts:
            if t >= 0 and self.stores_attr(t, meth):
                return ()  # ``getstate = _notimplemented``: a stored callable may replace the method
            got = self.member(t, meth, FN_KINDS) if t >= 0 else t
            if got < 0 and got != EXTERNAL and (t < 0 or not self.has_outside_base(t) or meth.startswith("__")):
                return ()
            targets.add(got if got >= 0 else EXTERNAL)  # (a method inherited from outside the graph)
        if EXTERNAL in targets and len(targets) > 1 and "|" in texpr:
            # a local variable bound to an object from outside the graph here and to a graph type there is most
            # often a name used again for another object (``f = self.FileIO(...)`` ... ``with open(...) as f``):
            # the flow-insensitive union would link calls meant for the outside one (no guess either)
            if any(self.eval_set(f, owner, alt, 0) == {EXTERNAL} for alt in texpr.split("|")):
                return (AMBIG,)
        return tuple(sorted(targets)) if len(targets) <= SET_MAX else (AMBIG,)

    def subtypes_targets(self, f: FileState, owner: int, texpr: str, meth: str) -> tuple[int, ...]:
        """The definitions of method ``meth`` a receiver known to be an instance of ``T`` or of a type derived
        from it (``^T``, ``^A|^B``: an ``isinstance`` test) may call: over every such type of the graph, sorted,
        ``EXTERNAL`` for those outside it (as :meth:`_union_targets`); ``()`` when one is not known or lacks
        the method, ``(AMBIG,)`` when there are more than ``SET_MAX``."""
        targets: set[int] = set()
        for alt in texpr.split("|"):
            t, _ = self.eval_type(f, owner, alt[1:], 0)
            if t == EXTERNAL:
                targets.add(EXTERNAL)
                continue
            if t < 0:
                return ()
            closure = self._derived_closure(t)
            if len(closure) >= 255:
                return ()  # (not every derived type was seen)
            for c in (t, *closure):
                if self.stores_attr(c, meth):
                    return ()
                got = self.member(c, meth, FN_KINDS)
                if got < 0 and got != EXTERNAL and (not self.has_outside_base(c) or meth.startswith("__")):
                    return ()
                targets.add(got if got >= 0 else EXTERNAL)
        return tuple(sorted(targets)) if len(targets) <= SET_MAX else (AMBIG,)

    def _derived_stores(self, t: int, name: str) -> bool:
        """Does a type derived from ``t`` assign attribute ``name`` (a value in place of a method)?"""
        return any(name in ((self.extra[c] or {}).get("attrs") or ()) for c in self._derived_closure(t))

    def _link_targets(self, owner: int, targets: tuple[int, ...], n: int) -> bool:
        """Edges of a call whose receiver may be of several known types, to the method of each (``targets``:
        sorted definitions, ``EXTERNAL`` for those outside the graph). A call edge means "may call", as in a
        class-hierarchy analysis: each definition the receiver's possible types give is a callee, and those
        outside the graph have no node to link (the C twin of a class the stdlib tests in its Python version).
        The weight ``SET_FACTOR`` is shared among the definitions. False when ``targets`` names none (not
        known: the caller decides)."""
        if not targets:
            return False
        if targets[0] == AMBIG:
            self.typed_stats[2] += n
            self._count(AMBIG, n)
            return True
        linked = [t for t in targets if t >= 0]
        if linked:
            self.typed_stats[0] += n
            factor = SET_FACTOR / len(targets)
            for t in linked:
                self.edge(owner, t, CALLS, factor, n)
        return True

    def _count(self, res: int, n: int) -> None:
        if res in (NOTFOUND, BROKEN):
            self.unresolved += n
        elif res == AMBIG:
            self.ambiguous += n

    def _resolve_hierarchy(self, f: FileState, owner: int, kind: str, name: str, n: int) -> None:
        want = BASE_KINDS if kind == "base" else IMPL_KINDS
        if f.fam == "rb":  # ``include Mod`` / ``extend Mod``: a Ruby module is a mixin base
            want = want | {K_MOD}
        got, factor = self.lookup(f, self.parent[owner] if owner != f.idx else f.idx, name, want, "type")
        if got < 0:
            self.ext_base.add(owner)
            self._count(got, n)
            return
        if got == owner:
            return
        rel = INHERITS if kind == "base" else IMPLEMENTS
        if self.kind[owner] == K_IMPL:
            self.edge(owner, got, IMPLEMENTS, factor, n)
            ty = self.impl_type_of(owner)
            if ty >= 0:
                self.edge(ty, got, IMPLEMENTS, factor, n)
                self.bases.setdefault(ty, []).append(got)
            return
        self.edge(owner, got, rel, factor, n)
        self.bases.setdefault(owner, []).append(got)

    def _resolve_ref(self, f: FileState, owner: int, kind: str, name: str, n: int) -> None:
        if kind in ("call", "qualified"):
            got, factor = self.lookup(f, owner, name, CALL_KINDS, "call")
            if (got == BROKEN or got == NOTFOUND) and f.fam == "py" and "." in name:
                # ``mod.var.m()`` with ``var = Foo()`` at mod's top level: the method of its type
                held, fac2 = self.variable_method(f, owner, name)
                if held == EXTERNAL:
                    return
                if held >= 0:
                    got, factor = held, fac2
            if got == AMBIG and f.fam == "py":  # an alias bound under ``if`` / ``try`` to different ones: each
                alts = self.alias_alternatives(f, name, classes=False)
                if alts is not None and self._link_targets(owner, tuple(sorted(alts)), n):
                    return
            if got == BROKEN:  # `Model.objects.create()`: a method call on a receiver of unknown type
                last = name.rsplit(".", 1)[-1]
                if last in STOPLIST or (last.startswith("__") and last.endswith("__")):
                    return
                got, factor = self.global_lookup(f, last, FN_KINDS, "method")
            rel = CALLS
        elif kind == "self":
            t = self.enclosing_type(owner)
            got = self.member(t, name, FN_KINDS) if t >= 0 else NOTFOUND
            factor = 1.0
            if got < 0:
                if name in STOPLIST or (t >= 0 and self.has_outside_base(t)):
                    return  # e.g. self.assertEqual() in a unittest.TestCase subclass
                if t >= 0:
                    if name.startswith("__") or self.stores_attr(t, name):
                        return  # ``self.__class__()``, ``self.factory()`` with ``factory = Foo``: no method
                    # a mixin's ``self.assertEqual()``: the method of the types it is mixed into; none of them
                    # has it: it lives where the graph does not see (a type made at run time), no guess
                    got, settled = self.derived_member(t, name, FN_KINDS)
                    if settled:
                        return
                    if got >= 0:
                        self.edge(owner, got, CALLS, 0.9, n)
                    elif got == AMBIG:  # the derived types define it differently: each may be called
                        found, complete = self.derived_definitions(t, name, FN_KINDS)
                        if not complete or len(found) > SET_MAX or self._derived_stores(t, name):
                            # (one derived type holds a value there, ``ioclass = StringIO``: not a definition)
                            self._count(AMBIG, n)
                        else:
                            self._link_targets(owner, tuple(sorted(found)), n)
                    else:
                        self._count(got, n)
                    return
                got, factor = self.global_lookup(f, name, FN_KINDS, "method")
            rel = CALLS
        elif kind == "super":
            t = self.enclosing_type(owner)
            got = NOTFOUND
            factor = 1.0
            bases = self.bases.get(t, ()) if t >= 0 else ()
            if not bases:
                return  # no base inside the graph: the method lives outside (object, Exception, ...)
            for b in bases:
                got = self.member(b, name, FN_KINDS)
                if got < 0 and self.kind[b] in CLASSLIKE:
                    got = self.type_member(b, name, FN_KINDS)
                if got >= 0:
                    break
            if got < 0 and (name in ("__init__", "constructor", "new") or self.has_outside_base(t)):
                return
            rel = CALLS
        elif kind == "method_call":
            if name in STOPLIST or (name.startswith("__") and name.endswith("__")):
                return
            got, factor = self.global_lookup(f, name, FN_KINDS, "method")
            rel = CALLS
        elif kind == "typed_call":
            texpr, _, meth = name.rpartition(":")
            t, factor = self.eval_type(f, owner, texpr, 0)
            if t == NOTFOUND:
                # several possible types (``x = A()`` here and ``B()`` there, ``self.x`` assigned both, ``self`` in a
                # mixin standing for each derived type): they may still agree on the method (the same definition,
                # e.g. inherited from one base) or all lie outside the graph
                if texpr[0] == "^":
                    targets = self.subtypes_targets(f, owner, texpr, meth)
                else:
                    targets = self._union_targets(f, owner, texpr, meth)
                if self._link_targets(owner, targets, n):
                    return
            if t == EXTERNAL:
                return  # a method of a type outside the graph (builtins, imported libraries)
            if t >= 0:
                got = self.member(t, meth, FN_KINDS)
                if got < 0:
                    if got == EXTERNAL or self.has_outside_base(t) or meth.startswith("__"):
                        return
                    if texpr.endswith(">__class__"):
                        return  # (``self.__class__.mro()``: a method of the metaclass, ``type``)
                    self.typed_stats[1] += n
                    self._count(NOTFOUND, n)
                    return
                self.typed_stats[0] += n
                self.edge(owner, got, CALLS, factor, n)
                return
            # receiver type unknown: the plain method-call rule
            self.typed_stats[2] += n
            if meth in STOPLIST or (meth.startswith("__") and meth.endswith("__")):
                return
            got, factor = self.global_lookup(f, meth, FN_KINDS, "method")
            rel = CALLS
        elif kind == "new":
            got, factor = self.lookup(f, owner, name, NEW_KINDS, "type")
            rel = CALLS
        elif kind == "macro":  # Rust `name!(…)`: a `macro_rules!` macro of the graph
            got, factor = self.lookup(f, owner, name, MACRO_KINDS, "call")
            rel = CALLS
        elif kind == "reference":
            got, factor = self.lookup(f, owner, name, TYPE_KINDS, "type")
            rel = REFERENCES
            if got >= 0 and self.kind[owner] == K_IMPL and self.impl_type.get(owner) == got:
                pass
        elif kind == "decorator":
            got, factor = self.lookup(f, owner, name, DECORATOR_KINDS, "decorator")
            rel = REFERENCES
        else:
            return
        if got < 0:
            self._count(got, n)
            return
        self.edge(owner, got, rel, factor, n)
