"""Name resolution steps 1-7 (graph.md §7): scopes, members and type hierarchies, imports, star imports,
same package, graph-wide candidates with path proximity, dotted (qualified) names."""

from __future__ import annotations

import posixpath
from typing import Any

from m1nd.graph.schema import IMPORTS
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import (
    AMBIG,
    ANY_SYMBOL,
    BROKEN,
    BUILTINS,
    CLASSLIKE,
    EXTERNAL,
    K_DIR,
    K_FILE,
    K_IMPL,
    K_INTERFACE,
    K_MOD,
    K_STRUCT,
    K_TYPE,
    MEMBER_CALL_FAMILIES,
    NOTFOUND,
    PACKAGED_FAMILIES,
    TYPE_KINDS,
    FileState,
    common_prefix_len,
)


class NameLookup(ResolverCore):
    """Looks names up from a definition or file, across all languages."""

    def first(self, cands: list[int] | None, want: frozenset[int]) -> int:
        """First candidate of an allowed kind (same-container duplicates are one logical entity)."""
        if not cands:
            return NOTFOUND
        kind = self.kind
        for c in cands:
            if kind[c] in want:
                return c
        return NOTFOUND

    def star_exports(self, target: int, name: str) -> bool:
        """Does ``from target import *`` bring ``name``? A Python module with a literal ``__all__`` exports exactly
        those names; otherwise every name (the resolver does not tell ``_private`` names apart)."""
        f = self.file_by_idx.get(target)
        if f is None or f.fam != "py":
            return True
        exported = (f.blob.get("extra") or {}).get("all")
        return exported is None or name in exported

    def _through_stars(self, f: Any, target: int, name: str, want: Any, depth: int) -> int:
        """``name`` reached through the file's star imports (``from x import *`` / ``use x::*``); EXTERNAL when a
        star import points outside the graph and nothing inside matched."""
        stars = self.bindings_stars(f)
        for i, s in enumerate(stars):
            if s != target and self.star_exports(s, name):
                got = self.member(s, name, want, depth + 1)
                if got >= 0:
                    return self._other_star(f, stars, i + 1, target, name, want, got, depth)
                if got == EXTERNAL:
                    return got
        return EXTERNAL if f.ext_star else NOTFOUND

    def _other_star(self, f: Any, stars: list[int], start: int, target: int, name: str, want: Any, got: int,
                    depth: int) -> int:
        """``got``, found through a Python file's star import, unless a later star import of the file gives another
        definition of ``name`` (``if win32: from .windows_events import *`` / ``else: from .unix_events import *``):
        then AMBIG, no pick by import order."""
        if f.fam != "py":
            return got
        for s in stars[start:]:
            if s != target and self.star_exports(s, name):
                other = self.member(s, name, want, depth + 1)
                if other >= 0 and other != got:
                    return AMBIG
        return got

    def member(self, target: int, name: str, want: frozenset[int], depth: int = 0) -> int:
        """``name`` looked up inside ``target`` (a file / dir module, or a symbol's members and type hierarchy)."""
        if target < 0 or depth > 6:
            return NOTFOUND
        k = self.kind[target]
        if k == K_FILE:
            f = self.file_by_idx[target]
            got = self.first(self.members.get(target, {}).get(name), want)
            if got >= 0:
                return got
            fam = f.fam
            if fam == "py":
                b = self.bindings_of(f).get(name)
                if b is not None:
                    if b == EXTERNAL:
                        return EXTERNAL
                    if b >= 0 and (self.kind[b] in want or self.kind[b] in (K_FILE, K_DIR)):
                        return b
                al = f.aliases.get(name) if f.aliases else None
                if al is not None:  # ``Lock = _allocate_lock``: what the module's alias names
                    return self.alias_target(f, al, want, depth)
                path = self.py_path.get(target)
                if path is not None:
                    sub = self.py_node(f"{path}/{name}" if path else name)
                    if sub is not None:
                        return sub
                got = self._through_stars(f, target, name, want, depth)
                if got != NOTFOUND:
                    return got
            elif fam == "js":
                return self.js_export(f, name, want, depth)
            elif fam == "rs":
                key = f.rust_key
                if key is not None:
                    sub = self.rust_mods.get((key[0], key[1] + (name,)))
                    if sub is not None:
                        return sub
                b = self.bindings_of(f).get(name)
                if b is not None and (b >= 0 or b == EXTERNAL):
                    return b
                got = self._through_stars(f, target, name, want, depth)
                if got != NOTFOUND:
                    return got
            return NOTFOUND
        if k == K_DIR:
            rel = self.src_path[target]
            got = self.go_pkg_members.get(rel, {}).get(name)
            if got:
                got2 = self.first(got, want)
                if got2 >= 0:
                    return got2
            path = "" if rel == "." else rel
            sub = self.py_node(f"{path}/{name}" if path else name)
            if sub is not None:
                return sub
            return NOTFOUND
        got = self.first(self.members.get(target, {}).get(name), want)
        if got >= 0:
            return got
        if k in CLASSLIKE:
            return self.type_member(target, name, want)
        return NOTFOUND

    def alias_target(self, f: FileState, target: str, want: frozenset[int], depth: int) -> int:
        """What a module-level alias of file ``f`` names (``extra.aliases``: ``Lock = _allocate_lock``), looked
        up as the module's own name (a definition, an import, another alias, a star import) then member by member;
        never by a graph-wide guess: NOTFOUND when it names nothing found so. A union (``a.b|c.d``: bound under
        ``if`` / ``try``) names what every alternative names, EXTERNAL when they all lie outside the graph, else
        AMBIG (:meth:`~m1nd.ingest.resolve.receivers.ReceiverTypes.alias_alternatives` lists them)."""
        if "|" in target:
            got = {self.alias_target(f, alt, want, depth) for alt in target.split("|")}
            if len(got) == 1:
                return next(iter(got))
            return NOTFOUND if NOTFOUND in got else AMBIG
        head, *rest = target.split(".")
        cur = self.member(f.idx, head, ANY_SYMBOL if rest else want, depth + 1)
        for i, seg in enumerate(rest):
            if cur < 0:
                break
            cur = self.member(cur, seg, want if i == len(rest) - 1 else ANY_SYMBOL, depth + 1)
        if cur >= 0 and self.kind[cur] not in want and self.kind[cur] not in (K_FILE, K_DIR):
            return NOTFOUND
        return cur if cur >= 0 or cur == EXTERNAL else NOTFOUND

    def type_member(self, t: int, name: str, want: frozenset[int]) -> int:
        """Member of a type through its hierarchy: bases / implemented interfaces, Rust impls, Go methods."""
        seen = {t}
        queue = [t]
        kind = self.kind
        steps = 0
        while queue and steps < 64:
            steps += 1
            c = queue.pop(0)
            if c != t:
                got = self.first(self.members.get(c, {}).get(name), want)
                if got >= 0:
                    return got
            # Rust: an impl's type and the type's impls (and the traits they implement)
            if kind[c] == K_IMPL:
                ty = self.impl_type_of(c)
                if ty >= 0 and ty not in seen:
                    seen.add(ty)
                    queue.append(ty)
            for im in self.impls_of.get(c, ()):
                if im not in seen:
                    seen.add(im)
                    queue.append(im)
            # Go: methods declared on the type in other files of the package
            f = self.file_by_idx.get(self.file_of[c])
            if f is not None and f.fam == "c" and kind[c] in CLASSLIKE:  # C++ ``void T::m() {…}``
                got = self.first(self.recv_methods.get(("c", self.label[c]), {}).get(name), want)
                if got >= 0:
                    return got
            if f is not None and f.fam == "go" and kind[c] in (K_STRUCT, K_INTERFACE, K_TYPE):
                got = self.first(self.go_methods.get((f.dir, self.label[c]), {}).get(name), want)
                if got >= 0:
                    return got
            for b in self.bases.get(c, ()):
                if b not in seen:
                    seen.add(b)
                    queue.append(b)
        return NOTFOUND

    def stores_attr(self, t: int, name: str) -> bool:
        """Is ``name`` an attribute the hierarchy of ``t`` assigns (a stored callable, not a method)?"""
        seen = {t}
        queue = [t]
        while queue:
            c = queue.pop()
            ex = self.extra[c]
            if ex is not None and name in (ex.get("attrs") or ()):
                return True
            for b in self.bases.get(c, ()):
                if b not in seen:
                    seen.add(b)
                    queue.append(b)
        return False

    def derived_member(self, t: int, name: str, want: frozenset[int]) -> tuple[int, bool]:
        """A method ``t`` does not have but leaves to the types derived from it (a mixin's or an abstract
        base's ``self.m()``): ``(node, False)`` when the hierarchies of all derived types that have one agree on
        a single definition; ``(AMBIG, False)`` when they name several; ``(NOTFOUND, True)`` when none has one
        (the method lives outside the graph, in a stored callable, or in a type the graph does not see)."""
        key = (t, name)
        got = self.derived_memo.get(key)
        if got is not None:
            return got
        found, _ = self.derived_definitions(t, name, want)
        if len(found) == 1:
            res = (next(iter(found)), False)
        elif found:
            res = (AMBIG, False)
        else:
            res = (NOTFOUND, True)
        self.derived_memo[key] = res
        return res

    def derived_definitions(self, t: int, name: str, want: frozenset[int]) -> tuple[frozenset[int], bool]:
        """The definitions of ``name`` the types derived from ``t`` have (their own or inherited), over at most
        256 of them (:meth:`derived_member`), and whether every derived type was seen."""
        derived = self.derived
        if derived is None:
            derived = self.derived = {}
            for c, bs in self.bases.items():
                for b in bs:
                    derived.setdefault(b, []).append(c)
        found: set[int] = set()
        if not name:
            return frozenset(), False
        seen = {t}
        queue = list(derived.get(t, ()))
        while queue and len(seen) < 256:
            c = queue.pop()
            if c in seen:
                continue
            seen.add(c)
            m = self.first(self.members.get(c, {}).get(name), want)
            if m < 0:
                m = self.type_member(c, name, want)
            if m >= 0:
                found.add(m)
            queue.extend(derived.get(c, ()))
        return frozenset(found), not any(c not in seen for c in queue)

    def has_outside_base(self, t: int) -> bool:
        """Does the type hierarchy of ``t`` reach a base outside the graph (or one that did not resolve)?"""
        got = self.ext_memo.get(t)
        if got is not None:
            return got
        seen = {t}
        queue = [t]
        res = False
        while queue and not res:
            c = queue.pop()
            ex = self.extra[c]
            if c in self.ext_base or (ex is not None and ex.get("ext_base")):
                res = True
                break
            if self.kind[c] == K_IMPL:
                ty = self.impl_type_of(c)
                if ty >= 0 and ty not in seen:
                    seen.add(ty)
                    queue.append(ty)
            for b in self.bases.get(c, ()):
                if b not in seen:
                    seen.add(b)
                    queue.append(b)
        self.ext_memo[t] = res
        return res

    def enclosing_type(self, owner: int) -> int:
        """Innermost class-like container of ``owner`` (Go methods: their receiver type)."""
        kind, parent = self.kind, self.parent
        c = owner
        while c >= 0:
            k = kind[c]
            if k in CLASSLIKE:
                return c
            if k == K_FILE or k == K_DIR:
                return NOTFOUND
            ex = self.extra[c]
            if ex is not None and "recv" in ex and kind[parent[c]] in (K_FILE, K_MOD):
                f = self.file_by_idx[self.file_of[c]]
                if f.fam != "go":
                    got, _ = self.lookup(f, f.idx, ex["recv"], TYPE_KINDS, "type")
                    return got if got >= 0 else NOTFOUND
                return self.go_type(f, ex["recv"])
            c = parent[c]
        return NOTFOUND

    def go_type(self, f: FileState, name: str) -> int:
        got = self.first(self.go_pkg_members.get(f.dir or ".", {}).get(name.split(".")[-1]), TYPE_KINDS)
        return got

    def impl_type_of(self, impl: int) -> int:
        got = self.impl_type.get(impl)
        if got is not None:
            return got
        self.impl_type[impl] = NOTFOUND
        ex = self.extra[impl] or {}
        tname = ex.get("impl_type")
        res = NOTFOUND
        if tname:
            f = self.file_by_idx[self.file_of[impl]]
            r, _ = self.lookup(f, self.parent[impl], tname, TYPE_KINDS, "type")
            res = r if r >= 0 else NOTFOUND
        self.impl_type[impl] = res
        if res >= 0:
            self.impls_of.setdefault(res, []).append(impl)
        return res

    def scope_lookup(self, f: FileState, owner: int, name: str, want: frozenset[int], category: str) -> int:
        """Steps 1-2: containers outward from ``owner``, ending at the file's top level."""
        kind, parent, members = self.kind, self.parent, self.members
        member_calls = f.fam in MEMBER_CALL_FAMILIES
        skip_classes = category == "call" and not member_calls
        c = owner if owner >= 0 else f.idx
        while c >= 0:
            k = kind[c]
            if not (skip_classes and k in CLASSLIKE and c != owner):
                got = self.first(members.get(c, {}).get(name), want)
                if got >= 0:
                    return got
            if k == K_FILE:
                break
            if member_calls and k in CLASSLIKE and category == "call":
                got = self.type_member(c, name, want)
                if got >= 0:
                    return got
            c = parent[c]
        return NOTFOUND

    def lookup(
        self, f: FileState, owner: int, name: str, want: frozenset[int], category: str
    ) -> tuple[int, float]:
        """Resolve a (possibly dotted) name from ``owner`` in file ``f``: (node, factor) or
        (NOTFOUND|AMBIG|EXTERNAL, 0)."""
        if "." in name:
            return self.lookup_qualified(f, owner, name.split("."), want, category)
        got = self.scope_lookup(f, owner, name, want, category)
        if got >= 0:
            return got, 1.0
        b = self.bindings_of(f).get(name)
        if b is not None:
            if b == EXTERNAL:
                return EXTERNAL, 0.0
            if b >= 0 and self.kind[b] in want:
                return b, 1.0
            if (
                f.fam != "rs"
            ):  # imported but missing / not of a usable kind (Rust `mod x;` names share the map)
                return NOTFOUND, 0.0
        if f.aliases and name in f.aliases:  # a module-level alias of this file: what it names, never a guess
            got = self.alias_target(f, f.aliases[name], want, 0)
            return (got, 1.0) if got >= 0 else (got, 0.0)
        got = self.star_lookup(f, name, want)
        if got >= 0:
            return got, 1.0
        if got == EXTERNAL or got == AMBIG:
            return got, 0.0
        got = self.same_package(f, name, want)
        if got >= 0:
            return got, 0.9
        if f.ext_star or name in BUILTINS.get(f.fam, ()):
            return EXTERNAL, 0.0
        return self.global_lookup(f, name, want, category)

    def star_lookup(self, f: FileState, name: str, want: frozenset[int]) -> int:
        """``name`` through the file's star imports (modules, packages, namespaces); EXTERNAL / NOTFOUND."""
        self.bindings_of(f)
        for i, s in enumerate(f.stars):
            if not self.star_exports(s, name):
                continue
            got = self.member(s, name, want)
            if got >= 0:
                return self._other_star(f, f.stars, i + 1, -1, name, want, got, -1)
            if got == EXTERNAL:
                return EXTERNAL
        if f.fam in PACKAGED_FAMILIES:
            for pkg in self.star_pkgs(f):
                got = self.first(self.java_types.get((pkg, name)), want)
                if got >= 0:
                    if f.fam == "cs":
                        # ``using A.B;`` names a namespace, not a file: the file imports the one it takes a name from
                        self.edge(f.idx, self.file_of[got], IMPORTS, 1.0)
                    return got
        return NOTFOUND

    def star_pkgs(self, f: FileState) -> list[str]:
        """Packages / namespaces the file star-imports (``import a.b.*``, ``using A.B;``, C# ``global using``)."""
        pkgs = getattr(self, "_jstars", {}).get(f.idx) or []
        if f.fam == "cs" and self.cs_global_usings:
            pkgs = pkgs + [p for p in self.cs_global_usings if p in self.java_pkgs]
        return pkgs

    def same_package(self, f: FileState, name: str, want: frozenset[int]) -> int:
        fam = f.fam
        if fam == "go":
            return self.first(self.go_pkg_members.get(f.dir or ".", {}).get(name), want)
        if fam in PACKAGED_FAMILIES:
            got = self.java_types.get((f.pkg or "", name))
            return self.first(got, want)
        if fam == "py":
            pkg_init = self.py_init_of_dir.get(f.dir)
            if pkg_init is not None and pkg_init != f.idx:
                got = self.first(self.members.get(pkg_init, {}).get(name), want)
                if got >= 0:
                    return got
                b = self.bindings_of(self.file_by_idx[pkg_init]).get(name)
                if b is not None and b >= 0 and self.kind[b] in want:
                    return b
        return NOTFOUND

    def global_lookup(
        self, f: FileState, name: str, want: frozenset[int], category: str
    ) -> tuple[int, float]:
        """Steps 6-7: graph-wide candidates of a compatible kind; path proximity breaks ties."""
        key = (f.dir, f.fam, category, name, want)
        got = self.global_memo.get(key)
        if got is not None:
            return got
        fam = f.fam
        if category == "method":
            cands = self.g_methods.get((fam, name), [])
        elif category == "call":
            cands = list(self.g_top.get((fam, name), []))
            if fam in MEMBER_CALL_FAMILIES:
                cands += self.g_methods.get((fam, name), [])
        else:
            cands = self.g_types.get((fam, name), [])
            if category == "decorator":
                cands = cands + self.g_top.get((fam, name), [])
        kind = self.kind
        cands = [c for c in cands if kind[c] in want]
        if not cands:
            res = (NOTFOUND, 0.0)
        elif len(cands) == 1:
            res = (cands[0], 0.6)
        else:
            mine = f.dir.split("/") if f.dir else []
            best, best_score, tie = NOTFOUND, -1, False
            src_path = self.src_path
            for c in cands:
                cd = posixpath.dirname(src_path[c])
                score = common_prefix_len(mine, cd.split("/") if cd else [])
                if score > best_score:
                    best, best_score, tie = c, score, False
                elif score == best_score and c != best:
                    tie = True
            res = (AMBIG, 0.0) if tie else (best, 0.6)
        self.global_memo[key] = res
        return res

    def lookup_qualified(
        self, f: FileState, owner: int, parts: list[str], want: frozenset[int], category: str
    ) -> tuple[int, float]:
        head = parts[0]
        rest = parts[1:]
        fam = f.fam
        factor = 1.0
        cur = NOTFOUND
        if fam == "rs" and head in ("crate", "self", "super"):
            cur, used = self.rust_path_prefix(f, parts)
            if cur < 0:
                return NOTFOUND, 0.0
            rest = parts[used:]
        else:
            b = self.bindings_of(f).get(head)
            imported_variable = False
            if b is not None:
                if b == EXTERNAL:
                    return EXTERNAL, 0.0
                cur = b
                imported_variable = b == NOTFOUND and fam in ("py", "js")
            if cur < 0:
                cur = self.scope_lookup(f, owner, head, ANY_SYMBOL, "type")
            if cur < 0 and fam == "py":
                cur = self.same_package(f, head, ANY_SYMBOL)
                if cur >= 0:
                    factor = 0.9
            if cur < 0 and fam == "rs":
                key = f.rust_key
                if key is not None:
                    sub = self.rust_mods.get((key[0], key[1] + (head,)))
                    if sub is None:
                        sub = self.rust_crates.get(head)
                    if sub is not None:
                        cur = sub
            if cur < 0 and fam in ("java", "rs", "go", "js", "c", "cs", "rb", "php", "kt"):
                if head in BUILTINS.get(fam, ()):
                    return EXTERNAL, 0.0
                if fam == "rs" and not head[:1].isupper():
                    return EXTERNAL, 0.0  # `serde_json::to_string()`: a path into another crate
                if head[:1].isupper():
                    got = self.same_package(f, head, TYPE_KINDS)
                    # ``Type.M()`` with Type from ``using`` / ``import a.*``
                    if got < 0 and fam in ("cs", "kt"):
                        got = self.star_lookup(f, head, TYPE_KINDS)
                    if got >= 0:
                        cur, factor = got, 0.9
                    else:
                        got, fac = self.global_lookup(f, head, TYPE_KINDS, "type")
                        if got == AMBIG:
                            return AMBIG, 0.0
                        if got >= 0:
                            cur, factor = got, fac
            if cur < 0:
                if fam == "py" and head in BUILTINS["py"]:
                    return EXTERNAL, 0.0
                return (BROKEN if imported_variable else NOTFOUND), 0.0
        for i, seg in enumerate(rest):
            last = i == len(rest) - 1
            nxt = self.member(cur, seg, want if last else ANY_SYMBOL)
            if nxt < 0 and nxt != EXTERNAL and not last:
                nxt = self.member(cur, seg, want)
            if nxt == EXTERNAL or (nxt == AMBIG and fam == "py"):  # (AMBIG: star imports that differ, _other_star)
                return nxt, 0.0
            if nxt < 0 and fam == "c" and last and self.kind[cur] == K_MOD:
                # a C++ namespace is open: ``ns::X`` may be declared in another file's ``namespace ns {…}``
                return self.global_lookup(f, seg, want, category)
            if nxt < 0:
                return (NOTFOUND if self.kind[cur] in (K_FILE, K_DIR) else BROKEN), 0.0
            cur = nxt
        if cur >= 0 and self.kind[cur] not in want:
            return (EXTERNAL if self.kind[cur] in (K_FILE, K_DIR) else NOTFOUND), 0.0
        return cur, factor
