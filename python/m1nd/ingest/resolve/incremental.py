"""Incremental resolution: keep one root's resolver alive and patch it for a few edited files, when that provably
gives what a full :func:`~m1nd.ingest.resolve.resolve` of the edited tree would give; else say so (``None``) and
let the caller resolve in full.

A full run is a pure function of all extracts, so a patch is exact when every lookup whose answer the edit can
change is made again and no other one is. Every lookup is a dictionary read by *name* (members, the graph-wide
indexes, bindings, attributes, test-name matches, mentions), so the rules are about names:

- an edited file whose *visible part* is unchanged (everything another file's resolution can read: its imports,
  ``__all__``, package, test flag, hierarchy references, and each definition's id, name, qualified name, kind,
  container and extras — everything but lines, signatures, docs, hashes and the references' other kinds) only
  changes its own rows and its own ``calls`` / ``references`` edges: those references are resolved again;
- a Python file whose definitions changed has the set ``D`` of names involved (definitions added, removed,
  changed or reordered, attributes changed, closed over its own return / attribute type expressions that name
  one of them); the patch is exact only when no other file mentions any of them (a whole-word, case-insensitive
  search of each file's lookup text: references, imports, extras, test-name stems), and the edited file's
  hierarchy references do not either;
- memoised answers are cleared for what changed; the resolver's few order-dependent answers (type evaluation
  cycles, import cycles) are tracked, and a patch that touches one gives up.

Anything else (files added, removed or renamed, another language family's definitions, C# files, hierarchy
edits, duplicate ids) returns ``None``. The rules are documented in the README's watch section.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field
from typing import Any

from m1nd.graph.schema import CALLS, CONTAINS, KINDS, REFERENCES, TESTS
from m1nd.ingest.gitdata import CHURN_FULL_AT
from m1nd.ingest.resolve import _Resolver
from m1nd.ingest.resolve.records import NodeRecord
from m1nd.ingest.resolve.subjects import _strip_test_name, _subject_basenames
from m1nd.ingest.resolve.tables import (
    CODE_FAMILIES,
    EXTRA_KEYS,
    FAMILY,
    K_DIR,
    K_FILE,
    K_FN,
    FileState,
)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HIERARCHY = ("base", "implements")
#: families whose definitions a patch may change (their indexes are rebuilt here); others only body edits
_DEF_FAMILIES = frozenset({"py"})
#: families a patch never touches: a C# star import adds ``imports`` edges from whichever file looks a name up
_NEVER = frozenset({"cs"})


def _words(*texts: Any) -> set[str]:
    out: set[str] = set()
    for t in texts:
        if t:
            out.update(w.lower() for w in _WORD.findall(t if isinstance(t, str) else repr(t)))
    return out


def _values(x: Any) -> list[str]:
    """Every string inside a JSON value (keys of mappings included: attribute names)."""
    if isinstance(x, str):
        return [x]
    if isinstance(x, dict):
        return [s for k, v in x.items() for s in (k, *_values(v))]
    if isinstance(x, (list, tuple)):
        return [s for v in x for s in _values(v)]
    return []


def _def_ids(blob: dict[str, Any]) -> list[str]:
    return [d.get("id", "") for d in blob.get("definitions") or ()]


def _visible(blob: dict[str, Any]) -> tuple[Any, ...]:
    """What other files' resolution may read of a file, minus its definitions (compared apart)."""
    ids = _def_ids(blob)
    hierarchy = [(r[0], r[1], ids[r[2]] if 0 <= r[2] < len(ids) else r[2], r[3])
                 for r in blob.get("references") or () if r[0] in _HIERARCHY]
    # a type's bases keep their order (lookups walk them in order); across types the order is the extractor's
    hierarchy.sort(key=lambda h: str(h[2]))
    # import lines are not read by resolution: an edit above the imports keeps them visible-equal
    imports = [{k: v for k, v in imp.items() if k != "line"} for imp in blob.get("imports") or ()]
    return (blob.get("lang"), bool(blob.get("is_test")), blob.get("package"), repr(imports),
            repr(blob.get("extra")), repr(blob.get("config_refs")), repr(hierarchy))


def _defs(blob: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each definition as other files see it: id, name, qualified name, kind, container id, test flag, extras."""
    defs = blob.get("definitions") or ()
    ids = [d.get("id", "") for d in defs]
    out = []
    for d in defs:
        p = d.get("parent", -1)
        out.append((d.get("id", ""), d["name"], d.get("qname") or d["name"], d["kind"],
                    ids[p] if 0 <= p < len(ids) else None, bool(d.get("is_test")),
                    repr({k: d[k] for k in EXTRA_KEYS if k in d})))
    return out


def lookup_text(blob: dict[str, Any], rel: str, fam: str, references: bool = True) -> str:
    """The names a file's resolution can look up, lower-cased, space-separated and space-padded (searched for
    whole words); without ``references``, those a patch does not look up again for an edited file (imports,
    extras, mentions, test names)."""
    words = _words(*_values(blob.get("imports")), *_values(blob.get("extra")), *_values(blob.get("config_refs")))
    for r in blob.get("references") or ():
        if references or r[0] in _HIERARCHY:
            words.update(_words(r[1]))
    for d in blob.get("definitions") or ():
        for k in EXTRA_KEYS:
            if k in d:
                words.update(_words(*_values(d[k])))
        stripped = _strip_test_name(d["name"])
        if stripped:
            words.add(stripped)
            words.update(_words(stripped))
    for n in _subject_basenames(rel.rsplit("/", 1)[-1], fam):
        words.update(_words(n.split(".", 1)[0]))
    return " " + " ".join(sorted(words)) + " "


@dataclass
class Patch:
    """What a patch changed: node indexes whose rows may differ, ext ids of removed nodes, and the nodes whose
    outgoing edges were recomputed (their edges are to be diffed in full)."""

    rows: set[int] = field(default_factory=set)
    removed: list[str] = field(default_factory=list)
    sources: set[int] = field(default_factory=set)


class TrackedResolver(_Resolver):
    """A full resolver that also remembers what a later :meth:`patch` needs: per-file unresolved / ambiguous
    counts, the type-evaluation memo entries whose value depends on the order of work (cycles) and the files
    whose resolution created them, and each file's lookup text."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.cur: str | None = None  # file whose references are being resolved
        self.counts: dict[str, list[int]] = {}
        self.key_file: dict[tuple[int, str], str | None] = {}
        self.stack: list[tuple[int, str]] = []
        self.in_progress: dict[tuple[int, str], int] = {}
        self.cycle_keys: set[tuple[int, str]] = set()
        self.cycle_hit = False  # during a patch: an order-dependent answer was made or read
        self.impl_cycles = 0
        self.dead: set[int] = set()
        self.texts: dict[str, str] = {}
        self.broken = False
        self.why = ""  # why the last patch was refused
        self.file_rank: dict[int, int] = {}

    # -- the full run ------------------------------------------------------------------------------------------
    def run(self) -> TrackedResolver:
        """The full resolution (:func:`~m1nd.ingest.resolve.resolve`'s steps; :meth:`output` gives its parts)."""
        gc_was_enabled = gc.isenabled()
        gc.disable()  # bulk construction of small objects, as resolve() does
        try:
            self.build_nodes()
            self.build_indexes()
            self.resolve_refs()
            self.tests_edges()
            self.mentions()
            self.uses_config()
            self.co_changes()
        finally:
            if gc_was_enabled:
                gc.enable()
        self.cur = None
        self.file_rank = {f.idx: k for k, f in enumerate(self.files.values())}
        for rel, f in self.files.items():
            self.texts[rel] = lookup_text(f.blob, rel, f.fam)
            _slim(f.blob)
        return self

    @property
    def cycle_files(self) -> set[str | None]:
        return {self.key_file.get(k) for k in self.cycle_keys}

    # -- instrumentation ----------------------------------------------------------------------------------------
    def _resolve_ref(self, f: FileState, owner: int, kind: str, name: str, n: int) -> None:
        self.cur = f.rel
        super()._resolve_ref(f, owner, kind, name, n)

    def _resolve_hierarchy(self, f: FileState, owner: int, kind: str, name: str, n: int) -> None:
        self.cur = None  # hierarchy counts are never patched
        super()._resolve_hierarchy(f, owner, kind, name, n)

    def _count(self, res: int, n: int) -> None:
        before = (self.unresolved, self.ambiguous)
        super()._count(res, n)
        if self.cur is not None:
            c = self.counts.setdefault(self.cur, [0, 0])
            c[0] += self.unresolved - before[0]
            c[1] += self.ambiguous - before[1]

    def eval_type(self, f: FileState, owner: int, texpr: str, depth: int) -> tuple[int, float]:
        key = (owner, texpr)
        if key in self.type_memo:
            at = self.in_progress.get(key)
            if at is not None:  # the cycle guard answers: every evaluation above it depends on where it began
                self.cycle_keys.update(self.stack[at:])
                self.cycle_hit = True
            elif key in self.cycle_keys:
                self.cycle_hit = True
            return self.type_memo[key]
        self.key_file[key] = self.cur
        self.in_progress[key] = len(self.stack)
        self.stack.append(key)
        try:
            return super().eval_type(f, owner, texpr, depth)
        finally:
            self.stack.pop()
            del self.in_progress[key]

    def impl_type_of(self, impl: int) -> int:
        if self.impl_type.get(impl, 0) < 0 and impl in getattr(self, "_impl_busy", ()):
            self.impl_cycles += 1
            self.cycle_hit = True
        busy = self.__dict__.setdefault("_impl_busy", set())
        busy.add(impl)
        try:
            return super().impl_type_of(impl)
        finally:
            busy.discard(impl)

    # -- patching -----------------------------------------------------------------------------------------------
    def patch(self, changes: dict[str, dict[str, Any]], mtimes: dict[str, int]) -> Patch | None:
        """Apply edited extracts (relpath -> new blob; every relpath a file of this resolver) and their mtimes.

        ``None`` when exactness cannot be shown; the resolver is then unchanged, except after a late give-up
        (``self.broken`` set): the caller must discard it."""
        if self.impl_cycles:
            return self._no("Rust impl cycles")
        plans = []
        names: set[str] = set()
        by_file: dict[str, set[str]] = {}
        for rel in sorted(changes):
            f = self.files.get(rel)
            new = changes[rel]
            if f is None or f.fam in _NEVER or new.get("lang", "other") != f.lang or FAMILY.get(
                    new.get("lang", "other"), "other") != f.fam:
                return self._no(f"{rel}: not a file of this resolver, or another language")
            if rel in self.cycle_files:
                return self._no(f"{rel}: its type evaluation depends on the order of work")
            old = f.blob
            if _visible(old) != _visible(new):
                return self._no(f"{rel}: imports, exports, hierarchy or other visible parts changed")
            old_defs, new_defs = _defs(old), _defs(new)
            ids = [d[0] for d in new_defs]
            if len(set(ids)) != len(ids) or len({d[0] for d in old_defs}) != len(old_defs):
                return self._no(f"{rel}: duplicate definition ids")
            file_ext = self.ext[f.idx]
            mine = {self.ext[i] for i in f.syms if i >= 0}
            if any(f"{file_ext}::{i}" in self.ext_index and f"{file_ext}::{i}" not in mine for i in ids):
                return self._no(f"{rel}: a definition id clashes")
            same = old_defs == new_defs
            if not same:
                if f.fam not in _DEF_FAMILIES:
                    return self._no(f"{rel}: definitions changed in a {f.fam} file")
                mine_names = _changed_names(old_defs, new_defs, new)
                names |= mine_names
                by_file[rel] = mine_names
            plans.append((f, new, same, {f.idx, *(i for i in f.syms if i >= 0)}))
        for f, new, _same, _own in plans:
            # another edited file's names: only this file's references are looked up again, not its imports,
            # hierarchy, mentions or test names
            others = set().union(*(v for k, v in by_file.items() if k != f.rel))
            if others:
                text = lookup_text(new, f.rel, f.fam, references=False)
                hit = next((w for w in others if f" {w} " in text), None)
                if hit is not None:
                    return self._no(f"{f.rel} imports or inherits {hit!r}, changed in the same batch")
        if names:
            # no other file may look any of these names up, nor the edited files' hierarchy references
            for rel, text in self.texts.items():
                if rel in changes:
                    continue
                hit = next((w for w in names if f" {w} " in text), None)
                if hit is not None:
                    return self._no(f"{rel} looks up {hit!r}")
            for f, new, _same, _own in plans:
                hier = _words(*(r[1] for r in new.get("references") or () if r[0] in _HIERARCHY))
                if hier & names:
                    return self._no(f"{f.rel}: a hierarchy reference names a changed definition")
        # the resolver's own extract given back: the file was touched, not edited (its kept extract is slimmed)
        touched = {f.rel: f.blob for f, new, _s, _o in plans if new is f.blob}
        # -- from here on the resolver changes: a give-up now leaves it broken -------------------------------------
        self.broken = True
        out = Patch()
        for f, new, same, _own in plans:
            self.mtimes[f.rel] = mtimes.get(f.rel, self.mtimes.get(f.rel, 0))
            if new is touched.get(f.rel):
                continue  # same bytes: columns, lookup text and extract stay
            self.extracts[f.rel] = new
            if same:
                self._update_columns(f, new)
            else:
                out.removed += self._replace_definitions(f, new, names)
            f.blob = new
            self.texts[f.rel] = lookup_text(new, f.rel, f.fam)
        if names:
            self.global_memo = {k: v for k, v in self.global_memo.items() if k[3].lower() not in names}
            self.derived_memo = {k: v for k, v in self.derived_memo.items() if k[1].lower() not in names}
        self.cycle_hit = False
        for f, new, same, old_own in plans:
            own = old_own | {i for i in f.syms if i >= 0}
            out.rows |= own - self.dead
            p = self.parent[f.idx]
            while p >= 0:  # directories: their newest change below them
                out.rows.add(p)
                p = self.parent[p]
            if new is touched.get(f.rel):
                continue  # only its modification time moved: its rows' dates, nothing else
            drop = (CALLS, REFERENCES) if same else (CALLS, REFERENCES, TESTS)
            for key in [k for k in self.edges if k[0] in own and k[2] in drop]:
                del self.edges[key]
            c = self.counts.pop(f.rel, [0, 0])
            self.unresolved -= c[0]
            self.ambiguous -= c[1]
            out.sources |= own - self.dead
        for f, new, same, _own in plans:
            if new is touched.get(f.rel):
                continue
            syms = f.syms
            for ref in f.blob.get("references") or ():
                kind = ref[0]
                if kind in _HIERARCHY or f.fam not in CODE_FAMILIES:
                    continue
                owner = syms[ref[2]] if ref[2] >= 0 else f.idx
                if owner < 0:
                    continue
                self._resolve_ref(f, owner, kind, ref[1], ref[3])
            self.cur = None
            if not same and f.fam in CODE_FAMILIES:
                self.tests_of_file(f)
        if self.cycle_hit:
            return self._no("an order-dependent type answer was touched")
        for f, new, _same, _own in plans:
            if new is not touched.get(f.rel):
                _slim(f.blob)
        self.broken = False
        return out

    def _no(self, why: str) -> None:
        self.why = why
        return None

    def _update_columns(self, f: FileState, blob: dict[str, Any]) -> None:
        """A body edit: the same definitions in the same places; lines, signatures, docs and hashes move."""
        i = f.idx
        self.le[i] = max(1, int(blob.get("line_count") or 1))
        self.doc[i] = blob.get("doc") or ""
        self.chash[i] = blob.get("content_hash") or ""
        for idx, d in zip(f.syms, blob.get("definitions") or ()):
            if idx < 0:
                continue
            self.ls[idx] = int(d["line_start"])
            self.le[idx] = max(int(d["line_end"]), int(d["line_start"]))
            self.sig[idx] = d.get("signature") or ""
            self.doc[idx] = d.get("doc") or ""
            self.chash[idx] = d.get("content_hash") or ""

    def _replace_definitions(self, f: FileState, blob: dict[str, Any], names: set[str]) -> list[str]:
        """New definitions for ``f`` (kept ids keep their node), with its index entries, ``contains`` edges and
        memoised answers renewed; returns the ext ids of the definitions that are gone."""
        old_syms = [i for i in f.syms if i >= 0]
        by_ext = {self.ext[i]: i for i in old_syms}
        fam = f.fam
        # out of the indexes first (the same keys are filled again below, in a full run's order)
        touched: set[tuple[str, str]] = set()
        for i in old_syms:
            self.members.pop(i, None)
            touched.add((fam, self.label[i]))
        self.members.pop(f.idx, None)
        for i in old_syms:
            p = self.parent[i]
            if p in self.members:  # a container outside the file (never for Python): keep others' entries
                lst = self.members[p].get(self.label[i])
                if lst and i in lst:
                    lst.remove(i)
        own = set(old_syms) | {f.idx}
        for key in [k for k in self.edges if k[2] == CONTAINS and (k[0] in own or k[1] in own) and k[1] != f.idx]:
            del self.edges[key]
        self.type_memo = {k: v for k, v in self.type_memo.items() if k[0] not in own}
        self.ext_memo = {k: v for k, v in self.ext_memo.items() if k not in own}
        self.fns_lower_memo.pop(f.idx, None)
        self.derived_memo = {k: v for k, v in self.derived_memo.items() if k[0] not in own}
        self.held_memo = {k: v for k, v in self.held_memo.items() if k[0] not in own}
        self.held_names = None
        # the new definitions, as build_nodes makes them
        lang = f.lang
        file_ext = self.ext[f.idx]
        f.syms = []
        kept: set[int] = set()
        for d_ in blob.get("definitions") or ():
            p = d_.get("parent", -1)
            pidx = f.syms[p] if 0 <= p < len(f.syms) else f.idx
            if pidx < 0:
                pidx = f.idx
            extra = None
            if any(k in d_ for k in EXTRA_KEYS):
                extra = {k: d_[k] for k in EXTRA_KEYS if k in d_}
            ext = f"{file_ext}::{d_['id']}"
            vals = (d_["name"], d_.get("qname") or d_["name"], KINDS.get(d_["kind"], K_FN), lang, f.rel,
                    int(d_["line_start"]), max(int(d_["line_end"]), int(d_["line_start"])),
                    d_.get("signature") or "", d_.get("doc") or "", bool(d_.get("is_test")),
                    d_.get("content_hash") or "", f.idx, pidx, extra)
            idx = by_ext.get(ext)
            if idx is None:
                idx = self._add_node(ext, *vals)
            else:
                (self.label[idx], self.qname[idx], self.kind[idx], self.lang[idx], self.src_path[idx], self.ls[idx],
                 self.le[idx], self.sig[idx], self.doc[idx], self.is_test[idx], self.chash[idx], self.file_of[idx],
                 self.parent[idx], self.extra[idx]) = vals
            kept.add(idx)
            f.syms.append(idx)
            self.edge(pidx, idx, CONTAINS, 1.0)
        gone = [i for i in old_syms if i not in kept]
        for i in gone:
            del self.ext_index[self.ext[i]]
            self.dead.add(i)
        self._update_columns(f, blob)
        # members and the graph-wide indexes, in a full run's order (files in path order, definitions in order)
        for idx in f.syms:
            self.members.setdefault(self.parent[idx], {}).setdefault(self.label[idx], []).append(idx)
            touched.add((fam, self.label[idx]))
        for index in (self.g_top, self.g_types, self.g_methods):
            for key in touched:
                lst = index.get(key)
                if lst is not None:
                    lst[:] = [c for c in lst if c not in own]
        fresh = _Indexer(self)
        fresh.add_file(f)
        rank = self.file_rank[f.idx]
        for index, adds in ((self.g_top, fresh.g_top), (self.g_types, fresh.g_types),
                            (self.g_methods, fresh.g_methods)):
            for key, new in adds.items():
                lst = index.setdefault(key, [])
                at = sum(1 for c in lst if self.file_rank[self.file_of[c]] < rank)
                lst[at:at] = new
            for key in touched:
                if key in index and not index[key]:
                    del index[key]
        del names
        return [self.ext[i] for i in gone]

    # -- rows ---------------------------------------------------------------------------------------------------
    def records(self, nodes: set[int]) -> list[NodeRecord]:
        """Node records (as :meth:`output` makes them) of the given live nodes."""
        git = self.git
        files_git = git.files if git is not None and git.available else {}

        def temporal(rel: str) -> tuple[int, float, int]:
            got = files_git.get(rel)
            if got is not None:
                return int(got[0]), min(1.0, got[1] / CHURN_FULL_AT), int(got[1])
            mt = int(self.mtimes.get(rel, 0) or 0)
            return (mt // 1_000_000 if mt > 10**14 else mt), 0.0, 0

        dir_ms: dict[int, int] = {}
        if any(self.kind[i] == K_DIR for i in nodes):
            for rel, f in self.files.items():
                ms = temporal(rel)[0]
                p = self.parent[f.idx]
                while p >= 0:
                    if dir_ms.get(p, -1) >= ms:
                        break
                    dir_ms[p] = ms
                    p = self.parent[p]
        out = []
        for i in sorted(nodes, key=self.ext.__getitem__):
            if i in self.dead:
                continue
            k = self.kind[i]
            if k == K_DIR:
                ms, churn, cc = dir_ms.get(i, 0), 0.0, 0
            else:
                ms, churn, cc = temporal(self.src_path[self.file_of[i]] if k != K_FILE else self.src_path[i])
            out.append(NodeRecord(self.ext[i], self.label[i], self.qname[i], k, self.lang[i], self.src_path[i],
                                  self.ls[i], self.le[i], self.sig[i], self.doc[i], self.is_test[i], self.chash[i],
                                  ms, float(churn), cc))
        return out

    def edges_from(self, sources: set[int]) -> dict[tuple[str, str, int], tuple[float, int]]:
        ext = self.ext
        return {(ext[s], ext[d], r): (float(v[0]), int(v[1])) for (s, d, r), v in self.edges.items() if s in sources}

    def externals_of(self, rel: str) -> list[str]:
        return sorted(self.files[rel].externals)


def _slim(blob: dict[str, Any]) -> None:
    """Drop what a kept resolver never reads again from an extract it has resolved: the references other than
    hierarchy ones (a patch resolves the *new* extract's references; the old one's visible part keeps only the
    hierarchy) and the definitions' signatures, docs and hashes (already in the node columns). Most of an extract's
    size; the stored extract is untouched."""
    refs = blob.get("references")
    if refs:
        blob["references"] = [r for r in refs if r[0] in _HIERARCHY]
    for d in blob.get("definitions") or ():
        for k in ("signature", "doc", "content_hash"):
            d.pop(k, None)


class _Indexer:
    """The graph-wide index entries of one file, made the way ``build_indexes`` makes them."""

    def __init__(self, r: TrackedResolver) -> None:
        self.r = r
        self.g_top: dict[tuple[str, str], list[int]] = {}
        self.g_types: dict[tuple[str, str], list[int]] = {}
        self.g_methods: dict[tuple[str, str], list[int]] = {}

    def add_file(self, f: FileState) -> None:
        from m1nd.ingest.resolve.tables import CALL_KINDS, CLASSLIKE, K_MACRO, K_MOD, TYPE_KINDS

        r = self.r
        fam = f.fam
        for idx in f.syms:
            if idx < 0:
                continue
            name = r.label[idx]
            k = r.kind[idx]
            pk = r.kind[r.parent[idx]]
            key = (fam, name)
            if k in TYPE_KINDS or (k == K_MOD and fam == "rb"):
                self.g_types.setdefault(key, []).append(idx)
            if pk in (K_FILE, K_MOD) and (k in CALL_KINDS or k == K_MACRO):
                self.g_top.setdefault(key, []).append(idx)
            if k == K_FN and (pk in CLASSLIKE or (pk in (K_FILE, K_MOD) and r.extra[idx] and "recv" in r.extra[idx])):
                self.g_methods.setdefault(key, []).append(idx)


def _changed_names(old: list[tuple[Any, ...]], new: list[tuple[Any, ...]], blob: dict[str, Any]) -> set[str]:
    """Lower-cased names whose lookups the definition change can alter (see the module docstring)."""
    o = {d[0]: d for d in old}
    n = {d[0]: d for d in new}
    names: set[str] = set()
    for i in set(o) | set(n):
        a, b = o.get(i), n.get(i)
        if a == b:
            continue
        for d in (a, b):
            if d is not None:
                names.add(d[1].lower())
        attrs_a = _attrs(a)
        attrs_b = _attrs(b)
        names |= {w.lower() for w in set(attrs_a) ^ set(attrs_b)}
        names |= {w.lower() for w in set(attrs_a) & set(attrs_b) if attrs_a[w] != attrs_b[w]}
    # same names in a different order: first-candidate answers change
    by_name_o: dict[str, list[str]] = {}
    by_name_n: dict[str, list[str]] = {}
    for d in old:
        by_name_o.setdefault(d[1], []).append(d[0])
    for d in new:
        by_name_n.setdefault(d[1], []).append(d[0])
    names |= {k.lower() for k in set(by_name_o) | set(by_name_n) if by_name_o.get(k) != by_name_n.get(k)}
    # a definition whose return or attribute type names one of them evaluates differently: its own lookups too
    defs = blob.get("definitions") or ()
    grew = True
    while grew:
        grew = False
        for d in defs:
            if d["name"].lower() in names and not d.get("attrs"):
                continue
            typed = _words(d.get("ret"), d.get("yields"), *(d.get("items") or ()))
            if typed & names and d["name"].lower() not in names:
                names.add(d["name"].lower())
                grew = True
            for a, texpr in (d.get("attrs") or {}).items():
                if _words(texpr) & names and (a.lower() not in names or d["name"].lower() not in names):
                    names |= {a.lower(), d["name"].lower()}
                    grew = True
        # a module-level alias (``Lock = _allocate_lock``) names what its target names, and a module variable
        # (``idleConf = IdleConf()``) holds an instance of its type: other files look them up by their own names
        extra = blob.get("extra") or {}
        for alias, target in (*(extra.get("aliases") or {}).items(), *(extra.get("vars") or {}).items()):
            if alias.lower() not in names and _words(target) & names:
                names.add(alias.lower())
                grew = True
    return names


def _attrs(d: tuple[Any, ...] | None) -> dict[str, Any]:
    if d is None:
        return {}
    import ast

    extras = ast.literal_eval(d[6]) if d[6] != "{}" else {}
    return dict(extras.get("attrs") or {})


__all__ = ["Patch", "TrackedResolver", "lookup_text"]
