"""Receiver types: the type a ``typed_call`` reference's type expression names (see the extract
docstring), so that ``x.m()`` links to the method of ``x``'s type instead of a name-based guess."""

from __future__ import annotations

from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import (
    SET_FACTOR,
    SET_MAX,
    AMBIG,
    ANY_SYMBOL,
    CALL_KINDS,
    CLASSLIKE,
    EXTERNAL,
    FN_KINDS,
    K_DIR,
    K_FILE,
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
        """The type function ``fn`` returns (its ``ret``: annotation, or inferred from its ``return``s); when that
        gives no one known type, a standard-library function's return in the stubs (``stubs.py``): the source's
        several types (``sym = d.get(k)`` ... ``sym = Symbol()``) are the weaker word there."""
        ex = self.extra[fn]
        ret = ex.get("ret") if ex is not None else None
        if ret:
            got = self.eval_type(self.file_by_idx[self.file_of[fn]], fn, ret, depth + 1)
            if got[0] != NOTFOUND:
                return got
        stubbed = self.stub_types(fn)
        if stubbed is None or len(stubbed) != 1:
            return NOTFOUND, 0.0
        t = next(iter(stubbed))
        return t, (1.0 if t >= 0 else 0.0)

    def method_return(self, t: int, name: str, depth: int) -> tuple[int, float]:
        """What calling ``name`` on an instance of type ``t`` gives (``>m()`` segments): the method's returned
        type, a nested class's instance; ``EXTERNAL`` when the method is inherited from outside the graph."""
        m = self.member(t, name, CALL_KINDS)
        if m == EXTERNAL:
            return EXTERNAL, 0.0
        if m < 0:
            held = self._called_objects(t, name, depth)
            if held:  # an attribute holding classes or functions (``factory = Foo``)
                if len(held) == 1:
                    got = next(iter(held))
                    return got, (SET_FACTOR if got >= 0 else 0.0)
                return NOTFOUND, 0.0
            return (EXTERNAL if self.has_outside_base(t) else NOTFOUND), 0.0
        if self.kind[m] != K_FN:
            return m, 1.0
        if self._returns_self(m):
            return t, 1.0  # (an inherited ``return self``: the receiver's own type, not the base's)
        return self.returned_type(m, depth)

    def _returns_self(self, m: int) -> bool:
        ex = self.extra[m]
        return ex is not None and ex.get("ret") == "@"

    def _eval_type(self, f: FileState, owner: int, texpr: str, depth: int) -> tuple[int, float]:
        if "|" in texpr:  # a union: one type when every alternative names it (or all lie outside the graph)
            got = {self.eval_type(f, owner, alt, depth) for alt in texpr.split("|")}
            types = {t for t, _ in got}
            if len(types) == 1:
                t = next(iter(types))
                return t, min(fac for _, fac in got)
            return NOTFOUND, 0.0
        if texpr[0] == "^":  # ``isinstance(x, T)``: T or a type derived from it (``passes.subtypes_targets`` decides)
            t, _ = self.eval_type(f, owner, texpr[1:], depth)
            return (EXTERNAL if t == EXTERNAL else NOTFOUND), 0.0
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
                # what a function or class outside the graph returns stays outside (a tuple's items: not known)
                return (NOTFOUND if "#" in texpr else EXTERNAL), 0.0
            if t < 0 or not self._unique(f, callee, t, factor, "call"):
                return NOTFOUND, 0.0
            if fields and self._part(t, fields[0]):  # ``a, b = f()`` / ``with f() as x``: see item_type
                if self.kind[t] != K_FN:
                    return NOTFOUND, 0.0
                t, fac2 = self.item_type(t, fields.pop(0), depth)
                if t < 0:
                    return t, 0.0
                factor = min(factor, fac2)
            elif self.kind[t] == K_FN:
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
        taken = -1
        for i, attr in enumerate(fields):
            if i == taken or attr == "__class__":
                continue  # (an item taken with the call before it; the class's attributes are its instances')
            if attr.endswith("()"):
                nxt = fields[i + 1] if i + 1 < len(fields) else ""
                m = self.member(t, attr[:-2], CALL_KINDS) if nxt[:1] == "#" or nxt == "__enter__()" else NOTFOUND
                if nxt[:1] == "#" and (m < 0 or self.kind[m] != K_FN):
                    return NOTFOUND, 0.0  # (a tuple's items from outside the graph: not known)
                if m >= 0 and self._part(m, nxt):
                    t, fac2 = self.item_type(m, nxt, depth)
                    taken = i + 1
                else:
                    t, fac2 = self.method_return(t, attr[:-2], depth)
            else:
                t, fac2 = self.attr_type(t, attr, depth)
            if t < 0:
                return (NOTFOUND if t == EXTERNAL and any(a[0] == "#" for a in fields[i:]) else t), 0.0
            factor = min(factor, fac2)
        if self.kind[t] not in CLASSLIKE:
            return NOTFOUND, 0.0
        return t, factor

    def _part(self, fn: int, seg: str) -> bool:
        """Does segment ``seg`` after a call of ``fn`` read a part of its result: ``#i`` (an item of a returned
        tuple), or ``__enter__()`` of a ``@contextmanager`` generator (what it yields)?"""
        if seg[:1] == "#":
            return True
        ex = self.extra[fn] if seg == "__enter__()" and self.kind[fn] == K_FN else None
        return ex is not None and "yields" in ex

    def item_type(self, fn: int, seg: str, depth: int) -> tuple[int, float]:
        """Type of item ``seg`` (``#i``) of the tuple function ``fn`` returns (its ``items``), or (``__enter__()``)
        of what the context manager ``fn`` yields, seen from ``fn``."""
        ex = self.extra[fn]
        if seg == "__enter__()":
            return self.eval_type(self.file_by_idx[self.file_of[fn]], fn, ex["yields"], depth + 1)
        items = ex.get("items") if ex is not None else None
        i = int(seg[1:]) if seg[1:].isdigit() else -1
        if not items or not 0 <= i < len(items) or not items[i]:
            return NOTFOUND, 0.0
        got = self.eval_type(self.file_by_idx[self.file_of[fn]], fn, items[i], depth + 1)
        if got[0] == EXTERNAL and ("(" in items[i] or ">" in items[i]):
            # outside the graph through a call (often a builtin container's method: an element of any type):
            # not known; only a literal's builtin type (``str``) is surely outside
            return NOTFOUND, 0.0
        return got

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
        c = self.attr_holder(t, attr)
        if c >= 0:
            texpr = self.extra[c]["attrs"][attr]
            if not texpr:
                return NOTFOUND, 0.0
            if texpr[0] == "!":  # a class object (``theclass = date``): its methods are the class's
                held = self.held_classes(t, attr)
                return (next(iter(held)), SET_FACTOR) if held and len(held) == 1 else (NOTFOUND, 0.0)
            if c != t and texpr[0] == "@" and "|" not in texpr:  # (as _holder_set)
                got = self.eval_type(self.file_by_idx[self.file_of[t]], t, texpr, depth + 1)
                if got[0] != NOTFOUND:
                    return got
            cf = self.file_by_idx[self.file_of[c]]
            return self.eval_type(cf, c, texpr, depth + 1)
        # ``self.conn.query()`` where ``conn`` is a method: only a property (or a cached one) reads that way
        m = self.member(t, attr, FN_KINDS)
        if m >= 0:
            return self.returned_type(m, depth)
        return self.derived_attr_type(t, attr, depth)

    def derived_attr_type(self, t: int, attr: str, depth: int) -> tuple[int, float]:
        """A mixin's ``self.x`` that only the types derived from it assign (``setUp`` of the concrete test
        case): their one type when every derived type that assigns it agrees, else not known."""
        if self.derived is None:
            self.derived_definitions(t, "", frozenset())  # builds the index
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

    def eval_set(self, f: FileState, owner: int, texpr: str, depth: int) -> frozenset[int] | None:
        """Every type a receiver may hold (graph types, ``EXTERNAL`` for one outside the graph), where
        :meth:`eval_type` needs one: the alternatives of unions (``A()|B()``, in attributes and returned values too)
        and, for ``self`` (``@``), what the overrides of a method in the derived types return and what they assign to
        an attribute (a mixin's ``self.loop = self.create_event_loop()``). None when one of them is not known."""
        key = (owner, texpr)
        memo = self.set_memo
        if key in memo:
            return memo[key]
        memo[key] = None  # cycle guard
        got = self._eval_set(f, owner, texpr, depth) if depth < 6 else None
        memo[key] = got
        return got

    def _eval_set(self, f: FileState, owner: int, texpr: str, depth: int) -> frozenset[int] | None:
        if "|" in texpr:
            out: set[int] = set()
            for alt in texpr.split("|"):
                got = self.eval_set(f, owner, alt, depth)
                if got is None:
                    return None
                out |= got
            return frozenset(out) if len(out) <= SET_MAX else None
        if "#" in texpr:  # an item of a returned tuple: one type or not known
            t, _ = self.eval_type(f, owner, texpr, depth)
            return frozenset((t,)) if t >= 0 or t == EXTERNAL else None
        base, *fields = texpr.split(">")
        poly = base == "@"  # ``self`` is an instance of the enclosing type or of any type derived from it
        if poly:
            t = self.enclosing_type(owner)
            if t < 0:
                return None
            cur: set[int] = {t}
        elif base.endswith("()"):
            cur = set()
            t, factor = self.lookup(f, owner, base[:-2], CALL_KINDS, "call")
            if t == AMBIG:  # star imports or an alias giving different classes (one per platform): either's
                got = self.alias_alternatives(f, base[:-2])
                if got is None:
                    got = self.star_alternatives(f, owner, base[:-2])
                if got is None:
                    return None
                cur |= got
            elif t >= 0 and self.kind[t] == K_FN:
                if not self._unique(f, base[:-2], t, factor, "call"):
                    return None
                got = self._returned_set(t, depth)
                if got is None:
                    return None
                cur |= got
            else:
                t, _ = self.eval_type(f, owner, base, depth)
                if t < 0 and t != EXTERNAL:
                    return None
                cur.add(t)
        else:
            t, _ = self.eval_type(f, owner, texpr if not fields else base, depth)
            if t < 0 and t != EXTERNAL:
                return None
            if not fields:
                return frozenset((t,))
            cur = {t}
        for attr in fields:
            if attr == "__class__":
                continue  # (``self.__class__.Task()``: the class's attributes are its instances')
            nxt: set[int] = set()
            for t in cur:
                if t == EXTERNAL:
                    nxt.add(EXTERNAL)
                    continue
                got = self._member_set(t, attr, poly, depth)
                if got is None:
                    return None
                nxt |= got
            if len(nxt) > SET_MAX:
                return None
            cur = nxt
            poly = False
        if any(t >= 0 and self.kind[t] not in CLASSLIKE for t in cur):
            return None
        return frozenset(cur)

    def star_alternatives(self, f: FileState, owner: int, name: str) -> frozenset[int] | None:
        """The classes a (dotted) name may denote when the module it is looked up in star-imports several
        modules that define it differently (``if win32: from .windows_events import *`` / ``else: from
        .unix_events import *``): each star import's class; None when one is something else."""
        head, _, last = name.rpartition(".")
        if head:  # ``asyncio.SelectorEventLoop``: the module an import binds, then its submodules
            first, *rest = head.split(".")
            mod = self.bindings_of(f).get(first, NOTFOUND)
            for seg in rest:
                mod = self.member(mod, seg, ANY_SYMBOL) if mod >= 0 else NOTFOUND
            if mod >= 0 and self.kind[mod] == K_DIR:
                mod = self.py_init_of_dir.get(self.src_path[mod], NOTFOUND)
            mf = self.file_by_idx.get(mod) if mod >= 0 else None
        else:
            mf = f
        if mf is None or mf.fam != "py":
            return None
        out: set[int] = set()
        for s in self.bindings_stars(mf):
            if s != mf.idx and self.star_exports(s, last):
                got = self.member(s, last, CALL_KINDS)
                if got >= 0:
                    if self.kind[got] not in CLASSLIKE:
                        return None
                    out.add(got)
        return frozenset(out) if 1 < len(out) <= SET_MAX else None

    def _returned_set(self, fn: int, depth: int) -> frozenset[int] | None:
        ex = self.extra[fn]
        ret = ex.get("ret") if ex is not None else None
        got = self.eval_set(self.file_by_idx[self.file_of[fn]], fn, ret, depth + 1) if ret else None
        if got is not None and len(got) == 1:
            return got
        stubbed = self.stub_types(fn)  # (the stubs when the source gives no one known type, as returned_type)
        return stubbed if stubbed is not None else got

    def _member_set(self, t: int, attr: str, poly: bool, depth: int) -> frozenset[int] | None:
        """The types ``t``'s attribute ``attr`` (``m()``: what method ``m`` returns) may hold; with ``poly``,
        ``t`` stands for any type derived from it too (their overrides and assignments count)."""
        holders = [t]
        if poly:
            holders.extend(self._derived_closure(t))
        out: set[int] = set()
        if attr.endswith("()"):
            name = attr[:-2]
            for i, c in enumerate(holders):
                m = (
                    self.member(c, name, CALL_KINDS)
                    if i == 0
                    else self.first(self.members.get(c, {}).get(name), CALL_KINDS)
                )
                if m < 0:
                    if m != EXTERNAL:
                        held = self._called_objects(c, name, depth)
                        if held is None:
                            # an attribute holding something else, or a class not known: one of the receiver's
                            # possible types is not known, which no name-based guess would mend (AMBIG marks it)
                            return frozenset((AMBIG,))
                        if held:  # an attribute holding classes or functions (a mixin's: in the derived types)
                            out |= held
                            continue
                    if i == 0 and (m == EXTERNAL or self.has_outside_base(c)):
                        return None  # (inherited from outside the graph: its result is not known here)
                    continue
                if self.kind[m] != K_FN:
                    out.add(m)
                    continue
                if not poly and self._returns_self(m):
                    out.add(c)  # (as method_return)
                    continue
                if (self.extra[m] or {}).get("abstract"):
                    continue  # (``raise NotImplementedError``: returns nothing, the derived types' overrides do)
                got = self._returned_set(m, depth)
                if got is None:
                    return None
                out |= got
            return frozenset(out) if out else None
        for i, c in enumerate(holders):
            h = self.attr_holder(c, attr) if i == 0 else c
            ex = self.extra[h] if h >= 0 else None
            attrs = ex.get("attrs") if ex is not None else None
            if attrs is None or attr not in attrs:
                if i == 0:
                    m = self.member(c, attr, FN_KINDS)  # a property
                    if m >= 0:
                        got = self._returned_set(m, depth)
                        if got is None:
                            return None
                        out |= got
                    elif not poly:
                        return None
                continue
            texpr = attrs[attr]
            if not texpr:
                return None
            got = self._holder_set(c, h, texpr, depth + 1)
            if got is None:
                return None
            out |= got
        return frozenset(out) if out else None

    def _holder_set(self, t: int, h: int, texpr: str, depth: int) -> frozenset[int] | None:
        """:meth:`eval_set` of what class ``h`` (``t`` or a base of it) assigns to an attribute of a ``t``: an
        alternative about ``self`` (``self.session = self.backend()`` in a mixin) is read from ``t``, whose own and
        derived types' ``backend`` count, not every type mixing ``h`` in (when that is known); the others from ``h``,
        where they are written."""
        if t == h or "@" not in texpr:
            return self.eval_set(self.file_by_idx[self.file_of[h]], h, texpr, depth)
        out: set[int] = set()
        for alt in texpr.split("|"):
            c = t if alt[0] == "@" else h
            got = self.eval_set(self.file_by_idx[self.file_of[c]], c, alt, depth)
            if got is None:
                # (from ``t`` not known, e.g. ``t`` inherits from outside the graph a method only its derived types
                # define: every type mixing ``h`` in, a wider set that holds ``t``'s)
                return self.eval_set(self.file_by_idx[self.file_of[h]], h, texpr, depth)
            out |= got
        return frozenset(out)

    def _called_objects(self, t: int, name: str, depth: int) -> frozenset[int] | None | bool:
        """What calling attribute ``name`` of type ``t`` gives when it holds classes or functions (``factory =
        Foo``, ``!Foo``: an instance of ``Foo``, or what function ``Foo`` returns): the types over the class of
        ``t``'s hierarchy that assigns it and every type derived from ``t`` that assigns it again (such attributes
        are there to be overridden). False when no class of the hierarchy assigns it (not such an attribute);
        None when an assignment holds something else or a type is not known."""
        held = self.held_names
        if held is None:  # every attribute name of the graph (a method's name is none: answered at once)
            held = self.held_names = {a for ex in self.extra if ex is not None and "attrs" in ex for a in ex["attrs"]}
        if name not in held:
            return False
        key = (t, name)
        memo = self.held_memo
        if key in memo:
            return memo[key]
        memo[key] = None  # cycle guard
        h = self.attr_holder(t, name)
        if h < 0:
            memo[key] = False
            return False
        out: set[int] = set()
        for c in [h, *(c for c in self._derived_closure(t) if c != h)]:
            attrs = (self.extra[c] or {}).get("attrs") or {}
            if name not in attrs:
                continue
            for alt in attrs[name].split("|"):
                if alt[:1] != "!" or ">" in alt:
                    return None
                got = self.eval_set(self.file_by_idx[self.file_of[c]], c, alt[1:] + "()", depth + 1)
                if got is None:
                    return None
                out |= got
        res = frozenset(out) if 0 < len(out) <= SET_MAX else None
        memo[key] = res
        return res

    def variable_method(self, f: FileState, owner: int, name: str) -> tuple[int, float]:
        """``mod.var.m`` / ``var.m`` (``var`` imported from ``mod``) where ``var`` is a module variable holding an
        instance (``extra.vars``: ``idleConf = IdleConf()``): method ``m`` of its type (through attributes between);
        EXTERNAL for a type outside the graph, NOTFOUND when not such a call."""
        parts = name.split(".")
        b = self.bindings_of(f).get(parts[0])
        if b == NOTFOUND:  # an imported name that is no definition: a variable of the module it comes from
            mod, var = self.py_import_source(f, parts[0])
            i = 1
        elif b is not None and b >= 0 and self.kind[b] in (K_FILE, K_DIR):
            mod, i = b, 1
            while i < len(parts) - 1:
                nxt = self.member(mod, parts[i], ANY_SYMBOL)
                if nxt < 0 or self.kind[nxt] not in (K_FILE, K_DIR):
                    break
                mod, i = nxt, i + 1
            var, i = parts[i], i + 1
        else:
            return NOTFOUND, 0.0
        if mod >= 0 and self.kind[mod] == K_DIR:
            mod = self.py_init_of_dir.get(self.src_path[mod], NOTFOUND)
        mf = self.file_by_idx.get(mod) if mod >= 0 else None
        texpr = ((mf.blob.get("extra") or {}).get("vars") or {}).get(var) if mf is not None and mf.fam == "py" else None
        if not texpr or i >= len(parts):
            return NOTFOUND, 0.0
        t, factor = self.eval_type(mf, mf.idx, texpr, 0)
        for attr in parts[i:-1]:
            if t < 0:
                break
            t, fac2 = self.attr_type(t, attr, 0)
            factor = min(factor, fac2)
        if t < 0:
            return (EXTERNAL if t == EXTERNAL else NOTFOUND), 0.0
        m = self.member(t, parts[-1], FN_KINDS)
        if m < 0:
            outside = m == EXTERNAL or self.has_outside_base(t) or parts[-1].startswith("__")
            return (EXTERNAL if outside else NOTFOUND), 0.0
        return m, factor

    def held_classes(self, t: int, name: str) -> frozenset[int] | None:
        """The classes attribute ``name`` of type ``t`` holds as objects (``theclass = date``, ``!date``), over the
        class of ``t``'s hierarchy that assigns it and every type derived from ``t`` that assigns it again (like
        :meth:`_called_objects`); None when one assignment holds something else or a name that is no class."""
        h = self.attr_holder(t, name)
        if h < 0:
            return None
        out: set[int] = set()
        for c in [h, *(c for c in self._derived_closure(t) if c != h)]:
            attrs = (self.extra[c] or {}).get("attrs") or {}
            if name not in attrs:
                continue
            cf = self.file_by_idx[self.file_of[c]]
            for alt in attrs[name].split("|"):
                if alt[:1] != "!" or ">" in alt:
                    return None
                k, factor = self.lookup(cf, c, alt[1:], TYPE_KINDS, "type")
                if k < 0 or self.kind[k] not in CLASSLIKE or not self._unique(cf, alt[1:], k, factor, "type"):
                    return None
                out.add(k)
        return frozenset(out) if 0 < len(out) <= SET_MAX else None

    def _derived_closure(self, t: int) -> list[int]:
        """Every type derived from ``t`` (breadth first, at most 256)."""
        if self.derived is None:
            self.derived_definitions(t, "", frozenset())  # builds the index
        derived = self.derived or {}
        seen = {t}
        out: list[int] = []
        queue = list(derived.get(t, ()))
        while queue and len(seen) < 256:
            c = queue.pop(0)
            if c in seen:
                continue
            seen.add(c)
            out.append(c)
            queue.extend(derived.get(c, ()))
        return out

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
