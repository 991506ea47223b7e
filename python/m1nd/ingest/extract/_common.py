"""Helpers shared by the per-language extractors (no tree-sitter import here: nodes arrive as objects)."""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

SIG_MAX = 200
DOC_MAX = 300

_WS = re.compile(r"\s+")
#: string literals that may name a config file (graph.md §8 ``uses_config``): keep the basename-like token
_CFG_EXT = re.compile(rb"\.(?:toml|yaml|yml|json|ini|cfg|example)(?![A-Za-z0-9_])")
_CFG_STEM = re.compile(rb"[A-Za-z0-9_.\-]+$")
_CFG_MAX = 64
_GO_VERSION_SEG = re.compile(r"v[0-9]+")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def line_count(data: bytes) -> int:
    if not data:
        return 1
    n = data.count(b"\n")
    if not data.endswith(b"\n"):
        n += 1
    return max(1, n)


def clean_name(name: str) -> str:
    """Id-safe name: no ``::``, no ``#``, collapsed whitespace."""
    if "::" in name or "#" in name:
        name = name.replace("::", "").replace("#", "")
    if any(c.isspace() for c in name):
        name = _WS.sub(" ", name).strip()
    return name


def one_line(text: str, limit: int) -> str:
    text = _WS.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def signature(data: bytes, start: int, end: int, strip_tail: str = "") -> str:
    """Header text ``data[start:end]`` on one line, without trailing ``strip_tail`` chars, ≤ 200 chars."""
    raw = data[start:end]
    if len(raw) > 4 * SIG_MAX:
        raw = raw[: 4 * SIG_MAX]
    text = " ".join(raw.decode("utf-8", "replace").split())
    if strip_tail:
        text = text.rstrip(strip_tail + " ").rstrip()
    if len(text) > SIG_MAX:
        text = text[: SIG_MAX - 1].rstrip() + "…"
    return text


def first_paragraph(text: str) -> str:
    """First paragraph of a docstring / doc comment, on one line, ≤ 300 chars."""
    text = text.strip()
    if not text:
        return ""
    para = re.split(r"\n\s*\n", text, maxsplit=1)[0]
    return one_line(para, DOC_MAX)


_COMMENT_PREFIX = re.compile(r"^\s*(?:/\*\*?|\*/|\*(?!/)|///?!?|//!|#)\s?", re.MULTILINE)


def comment_doc(raw: str) -> str:
    """Doc text from a block of comment lines (``///``, ``//``, ``/** */``, ``#``), first paragraph."""
    lines = []
    for line in raw.splitlines():
        line = line.strip()
        line = line.removesuffix("*/")
        line = _COMMENT_PREFIX.sub("", line, count=1)
        lines.append(line.rstrip())
    return first_paragraph("\n".join(lines))


def config_tokens(data: bytes, root: Any) -> list[str]:
    """Config-file basenames mentioned inside string literals (sorted, unique, ≤ 64)."""
    found: set[str] = set()
    for m in _CFG_EXT.finditer(data):
        end = m.end()
        lo = max(0, m.start() - 80)
        stem = _CFG_STEM.search(data, lo, m.start())
        if stem is None:
            continue
        start = stem.start()
        tok = data[start:end]
        if tok.startswith(b".") and tok.count(b".") == 1:
            continue
        node = root.descendant_for_byte_range(start, end)
        hops = 0
        while node is not None and hops < 3:
            if "string" in node.type or node.type == "template_string":
                found.add(tok.decode("utf-8", "replace"))
                break
            node = node.parent
            hops += 1
        if len(found) >= _CFG_MAX:
            break
    return sorted(found)


class Owners:
    """Innermost enclosing definition of a byte offset.

    Built from properly nested spans ``(start_byte, end_byte, def_index)`` sorted by ``(start, -end)``;
    :meth:`owner` is one ``bisect`` (-1 = the file). :attr:`parents` gives each definition's parent index.
    """

    __slots__ = ("bounds", "owners", "parents")

    def __init__(self, spans: list[tuple[int, int, int]], n_defs: int) -> None:
        bounds: list[int] = [0]
        owners: list[int] = [-1]
        parents = [-1] * n_defs
        stack: list[tuple[int, int]] = []  # (end, idx)
        for s, e, i in spans:
            while stack and stack[-1][0] <= s:
                end, _ = stack.pop()
                bounds.append(end)
                owners.append(stack[-1][1] if stack else -1)
            parents[i] = stack[-1][1] if stack else -1
            bounds.append(s)
            owners.append(i)
            stack.append((e, i))
        while stack:
            end, _ = stack.pop()
            bounds.append(end)
            owners.append(stack[-1][1] if stack else -1)
        self.bounds = bounds
        self.owners = owners
        self.parents = parents

    def owner(self, pos: int) -> int:
        return self.owners[bisect_right(self.bounds, pos) - 1]


def assign_ids(defs: list[dict[str, Any]]) -> None:
    """Fill ``id`` (local id path, graph.md §3) and ``qname`` for definitions given in source order.

    ``parent`` must be set (it may point forward: a Go method may precede its receiver type). The ``n``-th
    definition (n ≥ 2) of the same (kind, name) inside the same container gets ``#n``. An optional ``prefix``
    (popped) is an id-only segment put before the kind (Go ``recv::Pool``); ``qprefix`` (popped) prefixes the
    qname.
    """
    seen: dict[tuple[int, str, str, str], int] = {}
    own: list[str] = []
    for d in defs:
        p = d["parent"]
        prefix = d.pop("prefix", "")
        name = d["name"]
        key = (p, prefix, d["kind"], name)
        n = seen.get(key, 0) + 1
        seen[key] = n
        seg = f"{d['kind']}::{name}" if n == 1 else f"{d['kind']}::{name}#{n}"
        own.append(f"{prefix}::{seg}" if prefix else seg)
    done = [False] * len(defs)

    def resolve(i: int) -> None:
        chain = []
        j = i
        while j >= 0 and not done[j] and len(chain) <= len(defs):
            chain.append(j)
            j = defs[j]["parent"]
        for k in reversed(chain):
            d = defs[k]
            p = d["parent"]
            qp = d.pop("qprefix", "")
            if p < 0 or p == k:
                d["parent"] = -1
                d["id"] = own[k]
                d["qname"] = f"{qp}.{d['name']}" if qp else d["name"]
            else:
                d["id"] = f"{defs[p]['id']}::{own[k]}"
                d["qname"] = f"{defs[p]['qname']}.{d['name']}"
            done[k] = True

    for i in range(len(defs)):
        if not done[i]:
            resolve(i)


def empty_blob(lang: str, version: int, data: bytes, is_test: bool) -> dict[str, Any]:
    return {
        "lang": lang,
        "version": version,
        "line_count": line_count(data),
        "content_hash": sha256(data),
        "is_test": is_test,
        "parse_error": None,
        "doc": "",
        "definitions": [],
        "references": [],
        "imports": [],
        "config_refs": [],
        "package": None,
        "extra": {},
    }


def parse_or_blob(lang: str, version: int, relpath: str, data: bytes) -> tuple[dict[str, Any], Any | None]:
    """The start every tree-sitter extractor shares: an empty blob for the file and its parse tree's root.

    A file with syntax errors keeps ``parse_error`` (reported by ingest) but is still extracted from tree-sitter's
    error-recovered tree: grammars lag behind the languages (TS variance annotations, new Rust syntax), and one
    unsupported construct must not hide every other definition of the file (definitions parsed inside an
    ``ERROR`` node count too). The root is ``None`` only when nothing was parsed."""
    from m1nd.ingest import treesitter as ts

    blob = empty_blob(lang, version, data, is_test_path(relpath, lang))
    root = ts.parse(lang, data).root_node
    if root.has_error:
        blob["parse_error"] = f"syntax error at line {ts.first_error_line(root)}"
        if not root.named_child_count:
            return blob, None
    return blob, root


def import_binding(module: str, line: int, *, names: list[list[str]] | None = None, alias: str | None = None,
                   level: int = 0, reexport: bool = False, star: bool = False,
                   **extra: Any) -> dict[str, Any]:
    """One import binding of a blob (the shape every extractor emits and the resolver reads)."""
    return {"module": module, "names": [] if names is None else names, "alias": alias, "level": level,
            "reexport": reexport, "star": star, **extra, "line": line}


def pack_refs(refs: list[list[Any]]) -> list[list[Any]]:
    """``[kind, name, owner, ...]`` occurrences -> ``[kind, name, owner, count]`` (first-occurrence order)."""
    counts: dict[tuple[str, str, int], int] = {}
    for r in refs:
        key = (r[0], r[1], r[2])
        counts[key] = counts.get(key, 0) + 1
    return [[k, n, o, c] for (k, n, o), c in counts.items()]


def make_def(
    kind: str, name: str, ls: int, le: int, sig: str, doc: str, h: str, is_test: bool = False, **extra: Any
) -> dict[str, Any]:
    d = {
        "kind": kind,
        "name": name,
        "parent": -1,
        "line_start": ls,
        "line_end": le,
        "signature": sig,
        "doc": doc,
        "content_hash": h,
        "is_test": is_test,
    }
    if extra:
        d.update(extra)
    return d


def finish_defs(
    defs: list[dict[str, Any]], spans: list[tuple[int, int, int]], defer_ids: bool = False
) -> Owners:
    """Sort definitions into source order, compute parents, ids and qnames; returns the owner index.

    ``spans[i] = (start_byte, end_byte, i)`` for ``defs[i]``. After the call ``defs`` is re-ordered in source
    order and the returned :class:`Owners` maps byte offsets to indices of the re-ordered list. With
    ``defer_ids`` the caller adjusts parents first and then calls :func:`assign_ids` itself.
    """
    order = sorted(range(len(defs)), key=lambda i: (spans[i][0], -spans[i][1], i))
    new_defs = [defs[i] for i in order]
    new_spans = [(spans[i][0], spans[i][1], k) for k, i in enumerate(order)]
    owners = Owners(new_spans, len(new_defs))
    for k, d in enumerate(new_defs):
        d["parent"] = owners.parents[k]
    defs[:] = new_defs
    if not defer_ids:
        assign_ids(defs)
    return owners


def go_default_binding(path: str) -> str:
    """Package name guessed from an import path (last segment, skipping a ``/vN`` major-version suffix)."""
    segs = [s for s in path.split("/") if s]
    if not segs:
        return path
    last = segs[-1]
    if _GO_VERSION_SEG.fullmatch(last) and len(segs) > 1:
        last = segs[-2]
    last = last.removeprefix("go-")
    return last.replace("-", "_").replace(".", "_")


def is_test_path(relpath: str, lang: str) -> bool:
    """Test file by path (graph.md §8)."""
    parts = relpath.split("/")
    base = parts[-1]
    dirs = parts[:-1]
    if lang == "python":
        return (
            base.startswith("test_")
            or base.endswith(("_test.py", "_test.pyi"))
            or "tests" in dirs
            or "test" in dirs
        )
    if lang in ("javascript", "typescript", "tsx"):
        return ".test." in base or ".spec." in base or "__tests__" in dirs
    if lang == "go":
        return base.endswith("_test.go")
    if lang == "rust":
        return "tests" in dirs
    if lang == "java":
        return base.endswith(("Test.java", "Tests.java")) or "/src/test/" in "/" + "/".join(dirs) + "/"
    if lang == "kotlin":  # JVM and multiplatform source sets: src/test, src/jvmTest, src/commonTest, …
        return (base.endswith(("Test.kt", "Tests.kt")) or "test" in dirs or "tests" in dirs
                or any(d.endswith("Test") and d[:1].islower() for d in dirs))
    if lang == "csharp":  # ``Foo.Tests/`` projects
        return base.endswith(("Test.cs", "Tests.cs")) or any(d.endswith((".Tests", ".Test", "Tests")) for d in dirs)
    if lang == "ruby":
        return base.endswith(("_spec.rb", "_test.rb")) or "spec" in dirs or "test" in dirs or "tests" in dirs
    if lang == "php":
        return base.endswith("Test.php") or "tests" in dirs or "Tests" in dirs or "test" in dirs
    if lang in ("c", "cpp"):
        stem = base.rsplit(".", 1)[0]
        return (stem.endswith(("_test", "_unittest", "_tests")) or stem.startswith("test_") or "test" in dirs
                or "tests" in dirs)
    return "tests" in dirs or "test" in dirs


# ------------------------------------------------------------------------------------------ receiver types

#: a name bound to a value of unknown type (or to values of different types)
UNKNOWN_TYPE = ""
#: most alternatives a union type expression (``A()|B()``) lists; more is no longer worth the resolver's time
UNION_MAX = 4


def union_of(vals: set[str]) -> str:
    """One type expression for a name bound to values of several known types: ``A()|B()`` (sorted, so the
    output is deterministic; an alternative that is itself a union is flattened), UNKNOWN_TYPE past UNION_MAX."""
    alts: set[str] = set()
    for v in vals:
        alts.update(v.split("|"))
    return "|".join(sorted(alts)) if len(alts) <= UNION_MAX else UNKNOWN_TYPE


def extend_texpr(texpr: str, tail: str) -> str:
    """``texpr`` followed by segments ``tail`` (``>a>m()``); a union gets them on every alternative."""
    if "|" not in texpr:
        return texpr + tail
    return "|".join(alt + tail for alt in texpr.split("|"))


class ScopeTypes:
    """Per-scope name -> type expression sets, resolved to single types at the end (flow-insensitive: a name
    bound to values of different or unknown types has no type; annotations win over assignments)."""

    __slots__ = ("ambiguous_names", "assigned", "attr_decl", "attr_inf", "decl", "defs", "final", "fn_nodes", "inf",
                 "local_calls", "memo", "nbind", "objects", "owner_at", "param_names", "params", "rebound_self",
                 "typed_names", "unions", "wanted")

    def __init__(self, defs: list[dict[str, Any]], wanted: set[str], fn_nodes: dict[int, Any] | None = None,
                 param_names: Callable[[Any], frozenset[str]] | None = None, local_calls: bool = False,
                 unions: bool = False, objects: bool = False) -> None:
        self.defs = defs
        self.objects = objects  # ``x = Foo`` of a name that is no variable (an import, a definition): ``!Foo``
        self.assigned: dict[str, list[int]] = {}  # variable bindings by name: byte offsets, -1 for ``global``
        self.owner_at: Callable[[int], int] | None = None  # byte offset -> innermost definition
        self.ambiguous_names: set[str] = set()  # names bound to different objects in different places
        # a name bound to values of several known types gets their union ``A()|B()`` (the resolver links a call
        # when every alternative's method is the same definition); off: no type (the other languages' rule)
        self.unions = unions
        self.local_calls = local_calls  # rewrite ``x.f()`` on a typed local ``x`` to ``T>f()`` (see localize)
        self.wanted = wanted  # local names worth a type: receivers of method calls (and what they copy)
        self.fn_nodes = fn_nodes or {}  # function nodes by def index (their parameters are read lazily)
        self.param_names = param_names
        self.params: dict[int, frozenset[str]] = {}
        self.nbind: dict[tuple[int, str], int] = {}  # binding statements per (scope, name), ``None`` values included
        self.memo: dict[tuple[int, str], str | None] = {}
        self.decl: dict[int, dict[str, set[str]]] = {}
        self.inf: dict[int, dict[str, set[tuple[str, int]]]] = {}
        self.attr_decl: dict[int, dict[str, set[str]]] = {}
        self.attr_inf: dict[int, dict[str, set[tuple[str, int]]]] = {}
        self.final: dict[int, dict[str, str]] = {}
        self.rebound_self: dict[int, tuple[str, ...]] = {}  # scope assigning ``self`` / ``cls``: the names kept
        self.typed_names: set[str] = set()  # names with at least one typed binding somewhere (others need no lookup)

    def bind(self, scope: int, name: str, val: str | None, *, declared: bool = False, at: int = -1) -> None:
        if name not in self.wanted:
            return
        key = (scope, name)
        self.nbind[key] = self.nbind.get(key, 0) + 1
        if val is None:
            return
        if val:
            self.typed_names.add(name)
        if declared:
            self.decl.setdefault(scope, {}).setdefault(name, set()).add(val)
        else:
            self.inf.setdefault(scope, {}).setdefault(name, set()).add((val, scope if at < 0 else at))

    def bind_attr(self, cls: int, name: str, val: str | None, method: int, *, declared: bool = False) -> None:
        if val is None:
            return
        if declared:
            self.attr_decl.setdefault(cls, {}).setdefault(name, set()).add(val)
        else:
            self.attr_inf.setdefault(cls, {}).setdefault(name, set()).add((val, method))

    def class_of_method(self, owner: int) -> int:
        defs = self.defs
        if owner < 0 or defs[owner]["kind"] != "fn":
            return -1
        p = defs[owner]["parent"]
        return p if p >= 0 and defs[p]["kind"] == "class" else -1

    def parent_scope(self, s: int) -> int:
        defs = self.defs
        p = defs[s]["parent"]
        while p >= 0 and defs[p]["kind"] == "class":
            p = defs[p]["parent"]
        return p

    def _pick(self, decl: set[str] | None, inf: set[tuple[str, int]] | None, first: bool) -> str:
        if decl:
            return next(iter(decl)) if len(decl) == 1 else UNKNOWN_TYPE
        vals: set[str] = set()
        for v, at in inf or ():
            if v.startswith("="):
                if first:
                    return UNKNOWN_TYPE
                v = self._copied(at, v[1:])
            if not v:
                return UNKNOWN_TYPE
            if self.local_calls and not first:  # (first: a copy's type is looked up one step only)
                v = self.localize(at, v)
            vals.add(v)
        if len(vals) == 1:
            return next(iter(vals))
        return union_of(vals) if self.unions and vals else UNKNOWN_TYPE

    def _copied(self, at: int, name: str) -> str | None:
        """Type of the value ``x = name`` copies, seen from scope ``at`` (``name`` may be dotted: ``mod.Foo``)."""
        if name[-1] == "]":  # ``for x in items``: an element of local ``items``
            return self.elements(at, name[:-2])
        head, dot, _ = name.partition(".")
        got = self.lookup(at, head, first=True)
        if got is None:  # not a variable seen from ``at``: an import, a definition, a builtin (``!name``)
            ok = self.objects and head not in self.ambiguous_names and not self._assigned_from(at, head)
            return "!" + name if ok else UNKNOWN_TYPE
        return UNKNOWN_TYPE if dot else got  # (``x = a.b`` of a variable ``a``: an attribute of unknown type)

    def _assigned_from(self, scope: int, name: str) -> bool:
        """Is ``name`` a variable of ``scope`` or of a scope enclosing it (bound there, wanted or not)?"""
        at, owner = self.assigned.get(name), self.owner_at
        if not at or owner is None or -1 in at:
            return bool(at)  # (``global name``: a variable of the module, seen from everywhere)
        scopes = {owner(p) for p in at}
        s, defs = scope, self.defs
        for _ in range(64):
            if s < 0 or defs[s]["kind"] != "class":
                if s in scopes:
                    return True
                if s < 0:
                    return False
            s = self.parent_scope(s)
        return True

    def elements(self, at: int, name: str) -> str:
        """Type of the elements of local list / tuple / set ``name`` seen from ``at`` when every binding of it is a
        literal or comprehension and all it holds or gets (``name[]`` bindings) has a known type."""
        s = self.scope_of(at, name)
        if s is None or s < 0:
            return UNKNOWN_TYPE  # (a module's list may be filled from anywhere)
        t = self.lookup(at, name, first=True)
        if not t or any(alt not in ("list", "tuple", "set") for alt in t.split("|")):
            return UNKNOWN_TYPE
        vals = (self.inf.get(s) or {}).get(name + "[]")
        if not vals:
            return UNKNOWN_TYPE
        out: set[str] = set()
        for v, a in vals:
            if v[:1] == "=":
                v = self._copied(a, v[1:]) if v[-1] != "]" else UNKNOWN_TYPE
            if not v:
                return UNKNOWN_TYPE
            out.add(v)
        return next(iter(out)) if len(out) == 1 else union_of(out)

    def _object_of(self, scope: int, name: str) -> str | None:
        """``!Foo`` when every binding of local ``name`` seen from ``scope`` copies the one object ``Foo``."""
        s = self.scope_of(scope, name)
        if s is None or (self.decl.get(s) or {}).get(name) or (s >= 0 and name in self.params_of(s)):
            return None
        vals = (self.inf.get(s) or {}).get(name) or ()
        if len(vals) != self.nbind.get((s, name), 0):
            return None  # (a ``None`` binding, a ``for`` target: not only copies)
        got = {v if v[:1] in "!@" else self._copied(at, v[1:]) if v[:1] == "=" else None for v, at in vals}
        if len(got) != 1:
            return None
        t = next(iter(got))  # ``!Foo``, or ``@>a`` (``cls = self.theclass``: calling ``cls`` calls the attribute)
        return t if t and (t[0] == "!" or (t[:2] == "@>" and "(" not in t and "|" not in t)) else None

    def scope_of(self, scope: int, name: str) -> int | None:
        """The scope whose binding of ``name`` is seen from ``scope`` (-1: the module), None when unbound."""
        s = scope
        defs = self.defs
        for _ in range(64):
            if s >= 0 and defs[s]["kind"] == "class":
                s = self.parent_scope(s)
                continue
            d = self.decl.get(s)
            i = self.inf.get(s)
            if (d and name in d) or (i and name in i) or (s >= 0 and name in self.params_of(s)):
                return s
            if s < 0:
                return None
            s = self.parent_scope(s)
        return None

    def localize(self, scope: int, texpr: str) -> str:
        """``x.f()`` (what calling ``f`` on ``x`` returns) where ``x`` is a name of known type ``T`` seen from
        ``scope`` -> ``T>f()``: the method of ``T``, which the resolver can follow, instead of a dotted name it
        would look up as a module path. Unchanged when ``x`` has no type here (a module, an unknown value)."""
        if "|" in texpr:
            return "|".join(self.localize(scope, alt) for alt in texpr.split("|"))
        base, sep, fields = texpr.partition(">")
        if not base.endswith("()") or base[0] == "@":
            return texpr
        head, dot, rest = base[:-2].partition(".")
        if head not in self.wanted:
            return texpr
        if not dot:
            if head not in self.typed_names:
                return texpr  # ``F()`` where ``F = Foo`` (``!Foo``): what calling ``Foo`` returns
            t = self._object_of(scope, head) if self.objects else None
            if t is None:
                return texpr
            return (t[1:] if t[0] == "!" else t) + "()" + (sep + fields if sep else "")
        t = self.lookup(scope, head, first=True)
        if not t:
            return texpr
        if t[0] == "!":  # ``Foo.make()`` where ``Foo`` names a definition (or copies one): the dotted call
            return texpr if "|" in t else f"{t[1:]}.{rest}()" + (sep + fields if sep else "")
        return extend_texpr(t, f">{rest.replace('.', '>')}()" + (sep + fields if sep else ""))

    def params_of(self, s: int) -> frozenset[str]:
        """Names of the parameters of function ``s`` (read lazily through ``param_names``: only lookups need them)."""
        got = self.params.get(s)
        if got is None:
            node = self.fn_nodes.get(s)
            got = self.params[s] = self.param_names(node) if node is not None else frozenset()
        return got

    def lookup(self, scope: int, name: str, first: bool = False) -> str | None:
        """Type of ``name`` seen from ``scope`` (None: not bound in any enclosing function or the module)."""
        if not first:
            key = (scope, name)
            memo = self.memo
            if key in memo:
                return memo[key]
            got = memo[key] = self._lookup(scope, name, False)
            return got
        return self._lookup(scope, name, True)

    def _lookup(self, scope: int, name: str, first: bool) -> str | None:
        s = scope
        defs = self.defs
        for _ in range(64):
            if s >= 0 and defs[s]["kind"] == "class":
                s = self.parent_scope(s)
                continue
            d = self.decl.get(s)
            i = self.inf.get(s)
            if s >= 0 and not (d and name in d) and name in self.params_of(s):
                return UNKNOWN_TYPE  # an unannotated parameter
            if (d and name in d) or (i and name in i):
                if not first:
                    fin = self.final.setdefault(s, {})
                    got = fin.get(name)
                    if got is None:
                        got = fin[name] = self._pick(d.get(name) if d else None, i.get(name) if i else None, False)
                    return got
                return self._pick(d.get(name) if d else None, i.get(name) if i else None, True)
            if s < 0:
                return None
            s = self.parent_scope(s)
        return None

    def attrs(self, cls: int) -> dict[str, str]:
        d = self.attr_decl.get(cls, {})
        i = self.attr_inf.get(cls, {})
        return {name: self._pick(d.get(name), i.get(name), False) for name in sorted(set(d) | set(i))}
