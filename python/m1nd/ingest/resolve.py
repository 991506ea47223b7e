"""Cross-file resolution: all per-file extracts of one root → the complete node and edge sets (graph.md §3–§9).

``resolve(extracts, git=..., mtimes=..., namespace=...)`` is a pure function of its inputs and runs in full every
time (incremental ingest re-uses extracts, never resolution results), so incremental and full ingest agree by
construction. Everything is dictionary-indexed; no step is quadratic in the number of files or symbols.

Order of work:

1. nodes: dirs (``dir::.`` and every directory holding an ingested file), files, symbols (ids from the
   extracts' local id paths), ``contains`` edges dir→dir→file→symbol→member;
2. indexes: members per container, global name indexes per language family, Python module paths / source
   roots, JS/TS resolution incl. ``tsconfig``/``jsconfig`` ``paths``, Go modules (``go.mod``) and packages,
   Rust crates (``Cargo.toml``) and module files, Java packages;
3. import bindings per file (lazy, memoised, cycle-safe) → ``imports`` / ``reexports`` / ``declares_module``
   edges and ``external_imports``;
4. pass A: ``base`` / ``implements`` references (+ Rust impl headers) → ``inherits`` / ``implements``, which
   also gives the type hierarchy used by ``self`` / ``super`` method lookup;
5. pass B: every other reference, name resolution steps 1–7 (§7) → ``calls`` / ``references``;
6. ``tests`` (§8), markdown ``mentions``, ``uses_config``, ``co_changes`` (§9).
"""

from __future__ import annotations

import gc
import logging
import posixpath
from dataclasses import dataclass, field
from typing import Any

from m1nd.graph.schema import (
    CALLS,
    CO_CHANGE_W0_BASE,
    CO_CHANGE_W0_SLOPE,
    CO_CHANGES,
    CONTAINS,
    DECLARES_MODULE,
    IMPLEMENTS,
    IMPORTS,
    INHERITS,
    KINDS,
    MENTIONS,
    REEXPORTS,
    REFERENCES,
    RELATIONS,
    TESTS,
    USES_CONFIG,
)
from m1nd.ingest.extract._common import go_default_binding
from m1nd.ingest.gitdata import CHURN_FULL_AT, GitData

log = logging.getLogger(__name__)


def _words(text: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long tables readable)."""
    return frozenset(text.split())


# ------------------------------------------------------------------------------------------------ records


@dataclass(slots=True)
class NodeRecord:
    ext_id: str
    label: str
    qname: str
    kind: int
    lang: str
    source_path: str
    line_start: int
    line_end: int
    signature: str
    doc: str
    is_test: bool
    content_hash: str
    last_change_ms: int
    churn: float
    commit_count: int


@dataclass(slots=True)
class EdgeRecord:
    src: str
    dst: str
    relation: int
    w0: float
    count: int


@dataclass(slots=True)
class GraphParts:
    nodes: list[NodeRecord]
    edges: list[EdgeRecord]
    unresolved_refs: int = 0
    ambiguous_refs: int = 0
    external_imports: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------ tables

K_DIR, K_FILE, K_MOD, K_CLASS, K_STRUCT, K_ENUM, K_INTERFACE, K_TRAIT, K_TYPE, K_FN, K_IMPL, K_SECTION, K_MACRO = (
    KINDS[k]
    for k in (
        "dir",
        "file",
        "mod",
        "class",
        "struct",
        "enum",
        "interface",
        "trait",
        "type",
        "fn",
        "impl",
        "section",
        "macro",
    )
)
CLASSLIKE = frozenset({K_CLASS, K_STRUCT, K_ENUM, K_INTERFACE, K_TRAIT, K_IMPL, K_TYPE})
TYPE_KINDS = frozenset({K_CLASS, K_STRUCT, K_ENUM, K_INTERFACE, K_TRAIT, K_TYPE})
BASE_KINDS = frozenset({K_CLASS, K_STRUCT, K_INTERFACE, K_TRAIT, K_TYPE})
IMPL_KINDS = frozenset({K_INTERFACE, K_TRAIT, K_CLASS})
CALL_KINDS = frozenset({K_FN, K_CLASS, K_STRUCT})
NEW_KINDS = frozenset({K_CLASS, K_STRUCT, K_ENUM})
DECORATOR_KINDS = frozenset({K_FN, K_CLASS})
FN_KINDS = frozenset({K_FN})
ANY_SYMBOL = frozenset({K_MOD, K_CLASS, K_STRUCT, K_ENUM, K_INTERFACE, K_TRAIT, K_TYPE, K_FN, K_IMPL, K_MACRO})
MACRO_KINDS = frozenset({K_MACRO})
IMPORTABLE_KINDS = TYPE_KINDS | FN_KINDS

W0 = {r.code: r.w0 for r in RELATIONS}
_W_CACHE: dict[tuple[int, float], float] = {}

FAMILY = {
    "python": "py",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "go": "go",
    "rust": "rs",
    "java": "java",
    "c": "c",
    "cpp": "c",
    "csharp": "cs",
    "ruby": "rb",
    "php": "php",
    "kotlin": "kt",
    "other": "other",
    "markdown": "md",
    "config": "cfg",
}
CODE_FAMILIES = frozenset({"py", "js", "go", "rs", "java", "c", "cs", "rb", "php", "kt", "other"})
#: families whose types live in packages / namespaces resolved like Java's (package declaration, imports of
#: ``a.b.C``, ``a.b.*``): Kotlin, C# (``using A.B;`` is a star import of a namespace), PHP (``use A\B\C``)
PACKAGED_FAMILIES = frozenset({"java", "kt", "cs", "php"})
#: families where a bare call inside a class body may name a method of the class (``foo()`` = ``this.foo()``)
MEMBER_CALL_FAMILIES = frozenset({"java", "kt", "cs", "c", "rb"})
#: families whose imports name files by path: C/C++ ``#include``, Ruby ``require`` / ``require_relative``
PATH_IMPORT_FAMILIES = frozenset({"c", "rb"})

#: graph.md §7 common-method stoplist (unknown receivers)
STOPLIST = _words("""
    get set add append update run start stop close open read write send put pop keys items values join split
    format map filter forEach push then call apply init new len String Error toString equals hashCode clone
    next iter into from unwrap expect ok err is_empty size length load save log info debug warn error print
    println assert
""")

#: names that are language builtins: never searched graph-wide, never counted unresolved
BUILTINS: dict[str, frozenset[str]] = {
    "py": _words("""
        abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile
        complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float format
        frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license
        list locals map max memoryview min next object oct open ord pow print property quit range repr
        reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip __import__
        NotImplemented Ellipsis None True False BaseException Exception ArithmeticError AssertionError
        AttributeError BufferError EOFError ImportError ModuleNotFoundError LookupError IndexError KeyError
        MemoryError NameError UnboundLocalError OSError IOError EnvironmentError BlockingIOError
        ChildProcessError ConnectionError BrokenPipeError ConnectionAbortedError ConnectionRefusedError
        ConnectionResetError FileExistsError FileNotFoundError InterruptedError IsADirectoryError
        NotADirectoryError PermissionError ProcessLookupError TimeoutError ReferenceError RuntimeError
        NotImplementedError RecursionError StopIteration StopAsyncIteration SyntaxError IndentationError
        TabError SystemError TypeError ValueError UnicodeError UnicodeDecodeError UnicodeEncodeError
        UnicodeTranslateError Warning UserWarning DeprecationWarning PendingDeprecationWarning SyntaxWarning
        RuntimeWarning FutureWarning ImportWarning UnicodeWarning BytesWarning ResourceWarning
        EncodingWarning ZeroDivisionError OverflowError FloatingPointError GeneratorExit KeyboardInterrupt
        SystemExit ExceptionGroup BaseExceptionGroup Any Optional Union List Dict Tuple Set FrozenSet
        Callable Iterable Iterator Sequence Mapping Type
    """),
    "js": _words("""
        require parseInt parseFloat isNaN isFinite setTimeout setInterval clearTimeout clearInterval
        setImmediate queueMicrotask structuredClone fetch encodeURIComponent decodeURIComponent encodeURI
        decodeURI Array Object String Number Boolean Symbol BigInt Date RegExp Error TypeError RangeError
        SyntaxError Map Set WeakMap WeakSet Promise Proxy Reflect JSON Math Intl URL URLSearchParams Buffer
        Uint8Array Int32Array Float64Array ArrayBuffer DataView Function Record Partial Required Readonly
        Pick Omit Exclude Extract ReturnType Parameters NonNullable Awaited InstanceType Iterable Iterator
        AsyncIterable PromiseLike ReadonlyArray HTMLElement Element Event Node Document Window describe it
        test expect beforeEach afterEach beforeAll afterAll jest vi console
    """),
    "go": _words("""
        append cap clear close complex copy delete imag len make max min new panic print println real
        recover bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string
        uint uint8 uint16 uint32 uint64 uintptr any comparable
    """),
    "rs": _words("""
        Ok Err Some None Box Vec String Option Result HashMap HashSet BTreeMap BTreeSet VecDeque Arc Rc
        RefCell Cell Mutex RwLock Cow Default Clone Copy Debug Display Send Sync Sized Iterator IntoIterator
        From Into AsRef AsMut Drop Fn FnMut FnOnce PartialEq Eq PartialOrd Ord Hash ToString Path PathBuf
        Self
    """),
    "java": _words("""
        String Object Integer Long Double Float Short Byte Character Boolean Number Math System Thread
        Runnable Exception RuntimeException Throwable Error Override Deprecated SuppressWarnings
        FunctionalInterface Iterable Comparable CharSequence StringBuilder StringBuffer Class Void Enum
        Record IllegalArgumentException IllegalStateException NullPointerException
        UnsupportedOperationException IndexOutOfBoundsException ClassCastException InterruptedException
        AutoCloseable Cloneable List Map Set Collection Optional
    """),
    "c": _words("""
        printf fprintf sprintf snprintf vsnprintf malloc calloc realloc free memcpy memset memmove memcmp strlen
        strcmp strncmp strcpy strncpy strcat strchr strrchr strstr strdup assert exit abort sizeof
    """),
    "rb": _words("""
        puts print p require require_relative raise attr_reader attr_writer attr_accessor private protected
        public lambda proc loop format include extend new describe context it specify expect let let! subject
        before after allow receive double eq to not_to raise_error
    """),
    "kt": _words("""
        println print listOf mutableListOf mapOf mutableMapOf setOf arrayOf require check error TODO lazy with
        apply also let run String Int Long Any Unit Boolean
    """),
    "cs": _words("String Object Console Math Task Exception ArgumentNullException ArgumentException nameof"),
    "php": _words("""
        array count isset unset empty is_array is_string strlen sprintf implode explode in_array array_merge
        array_keys array_map str_replace
    """),
}

JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
CONFIG_BASENAME_MIN = 5

#: definition extras the resolver keeps (Go receiver, Rust impl, outside bases, receiver-type tables)
_EXTRA_KEYS = ("recv", "impl_type", "impl_trait", "ext_base", "attrs", "ret")

NOTFOUND = -1
EXTERNAL = -2
AMBIG = -3
BROKEN = -4  # a dotted chain broke on a non-module (``obj.attr.m()``, an imported variable): unknown receiver


class _File:
    __slots__ = (
        "base",
        "binding_state",
        "bindings",
        "blob",
        "dir",
        "ext_star",
        "externals",
        "fam",
        "idx",
        "import_edges",
        "lang",
        "pkg",
        "rel",
        "rust_key",
        "stars",
        "syms",
    )

    def __init__(self, rel: str, idx: int, lang: str, blob: dict[str, Any]) -> None:
        self.rel = rel
        self.idx = idx
        self.lang = lang
        self.fam = FAMILY.get(lang, "other")
        self.blob = blob
        self.syms: list[int] = []
        self.dir = posixpath.dirname(rel)
        self.base = rel.rsplit("/", 1)[-1]
        self.bindings: dict[str, int] = {}
        self.stars: list[int] = []
        self.ext_star = False  # a star import from outside the graph: unknown names may come from it
        self.binding_state = 0  # 0 = not computed, 1 = in progress, 2 = done
        self.import_edges: list[tuple[int, int, float]] = []  # (target, relation, factor)
        self.externals: set[str] = set()
        self.pkg = blob.get("package")
        self.rust_key: tuple[str, tuple[str, ...]] | None = None


def _common_prefix_len(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# ------------------------------------------------------------------------------------------------ resolver


class _Resolver:
    def __init__(
        self,
        extracts: dict[str, dict[str, Any]],
        git: GitData | None,
        mtimes: dict[str, int],
        namespace: str | None,
    ) -> None:
        self.extracts = extracts
        self.git = git
        self.mtimes = mtimes
        self.prefix = f"{namespace}::" if namespace else ""
        self.warnings: list[str] = []
        self.unresolved = 0
        self.ambiguous = 0
        # node columns
        self.ext: list[str] = []
        self.label: list[str] = []
        self.qname: list[str] = []
        self.kind: list[int] = []
        self.lang: list[str] = []
        self.src_path: list[str] = []
        self.ls: list[int] = []
        self.le: list[int] = []
        self.sig: list[str] = []
        self.doc: list[str] = []
        self.is_test: list[bool] = []
        self.chash: list[str] = []
        self.file_of: list[int] = []  # file node index (dirs: -1, files: themselves)
        self.parent: list[int] = []  # container (dirs/files: parent dir, symbols: container), root: -1
        self.extra: list[dict[str, Any] | None] = []
        self.ext_index: dict[str, int] = {}
        # edges: (src, dst, rel) -> [w0, count]
        self.edges: dict[tuple[int, int, int], list[float]] = {}
        # indexes
        self.files: dict[str, _File] = {}
        self.file_by_idx: dict[int, _File] = {}
        self.dirs: dict[str, int] = {}
        self.members: dict[int, dict[str, list[int]]] = {}
        self.g_top: dict[tuple[str, str], list[int]] = {}
        self.g_methods: dict[tuple[str, str], list[int]] = {}
        self.g_types: dict[tuple[str, str], list[int]] = {}
        self.bases: dict[int, list[int]] = {}
        self.ext_base: set[int] = set()  # types with a base outside the graph (or unresolved)
        self.ext_memo: dict[int, bool] = {}
        self.impls_of: dict[int, list[int]] = {}
        self.impl_type: dict[int, int] = {}
        self.global_memo: dict[tuple[str, str, str, str, frozenset[int]], tuple[int, float]] = {}
        self.fns_lower_memo: dict[int, dict[str, list[int]]] = {}
        self.type_memo: dict[tuple[int, str], tuple[int, float]] = {}
        self.typed_stats = [0, 0, 0]  # typed calls linked, type known but method missing, type unknown

    # -------------------------------------------------------------------------------------------- nodes

    def _add_node(
        self,
        ext: str,
        label: str,
        qname: str,
        kind: int,
        lang: str,
        src: str,
        ls: int,
        le: int,
        sig: str,
        doc: str,
        is_test: bool,
        chash: str,
        file_of: int,
        parent: int,
        extra: dict[str, Any] | None = None,
    ) -> int:
        if ext in self.ext_index:
            self.warnings.append(f"duplicate node id {ext!r} ignored")
            return -1
        i = len(self.ext)
        self.ext_index[ext] = i
        self.ext.append(ext)
        self.label.append(label)
        self.qname.append(qname)
        self.kind.append(kind)
        self.lang.append(lang)
        self.src_path.append(src)
        self.ls.append(ls)
        self.le.append(le)
        self.sig.append(sig)
        self.doc.append(doc)
        self.is_test.append(is_test)
        self.chash.append(chash)
        self.file_of.append(file_of if file_of >= 0 else (i if kind == K_FILE else -1))
        self.parent.append(parent)
        self.extra.append(extra)
        return i

    def _dir(self, rel: str) -> int:
        got = self.dirs.get(rel)
        if got is not None:
            return got
        if rel == ".":
            idx = self._add_node(
                f"{self.prefix}dir::.", ".", ".", K_DIR, "", ".", 0, 0, "", "", False, "", -1, -1
            )
        else:
            par = posixpath.dirname(rel) or "."
            pidx = self._dir(par)
            idx = self._add_node(
                f"{self.prefix}dir::{rel}",
                rel.rsplit("/", 1)[-1],
                rel,
                K_DIR,
                "",
                rel,
                0,
                0,
                "",
                "",
                False,
                "",
                -1,
                pidx,
            )
            self.edge(pidx, idx, CONTAINS, 1.0)
        self.dirs[rel] = idx
        return idx

    def build_nodes(self) -> None:
        if self.extracts:
            self._dir(".")
        for rel in sorted(self.extracts):
            blob = self.extracts[rel]
            lang = blob.get("lang", "other")
            d = posixpath.dirname(rel) or "."
            didx = self._dir(d)
            lc = int(blob.get("line_count") or 1)
            fidx = self._add_node(
                f"{self.prefix}file::{rel}",
                rel.rsplit("/", 1)[-1],
                rel,
                K_FILE,
                lang,
                rel,
                1,
                max(1, lc),
                "",
                blob.get("doc") or "",
                bool(blob.get("is_test")),
                blob.get("content_hash") or "",
                -1,
                didx,
            )
            if fidx < 0:
                continue
            self.edge(didx, fidx, CONTAINS, 1.0)
            f = _File(rel, fidx, lang, blob)
            self.files[rel] = f
            self.file_by_idx[fidx] = f
            file_ext = self.ext[fidx]
            defs = blob.get("definitions") or ()
            for d_ in defs:
                p = d_.get("parent", -1)
                pidx = f.syms[p] if 0 <= p < len(f.syms) else fidx
                if pidx < 0:
                    pidx = fidx
                extra = None
                if "recv" in d_ or "impl_type" in d_ or "ext_base" in d_ or "attrs" in d_ or "ret" in d_:
                    extra = {k: d_[k] for k in _EXTRA_KEYS if k in d_}
                idx = self._add_node(
                    f"{file_ext}::{d_['id']}",
                    d_["name"],
                    d_.get("qname") or d_["name"],
                    KINDS.get(d_["kind"], K_FN),
                    lang,
                    rel,
                    int(d_["line_start"]),
                    max(int(d_["line_end"]), int(d_["line_start"])),
                    d_.get("signature") or "",
                    d_.get("doc") or "",
                    bool(d_.get("is_test")),
                    d_.get("content_hash") or "",
                    fidx,
                    pidx,
                    extra,
                )
                f.syms.append(idx)
                if idx < 0:
                    continue
                self.edge(pidx, idx, CONTAINS, 1.0)

    def build_indexes(self) -> None:
        kind, parent, label, file_of = self.kind, self.parent, self.label, self.file_of
        members = self.members
        self.recv_methods: dict[tuple[str, str], dict[str, list[int]]] = {}  # C++ ``void T::m() {}`` by T
        for f in self.files.values():
            fam = f.fam
            if fam in ("md", "cfg"):
                continue
            for idx in f.syms:
                if idx < 0:
                    continue
                name = label[idx]
                p = parent[idx]
                members.setdefault(p, {}).setdefault(name, []).append(idx)
                k = kind[idx]
                pk = kind[p]
                key = (fam, name)
                if k in TYPE_KINDS or (k == K_MOD and fam == "rb"):  # a Ruby module is a constant, a mixin
                    self.g_types.setdefault(key, []).append(idx)
                if pk in (K_FILE, K_MOD) and (k in CALL_KINDS or k == K_MACRO):
                    self.g_top.setdefault(key, []).append(idx)
                if k == K_FN and (
                    pk in CLASSLIKE or (pk in (K_FILE, K_MOD) and self.extra[idx] and "recv" in self.extra[idx])
                ):
                    self.g_methods.setdefault(key, []).append(idx)
                    ex = self.extra[idx]
                    if fam != "go" and ex and "recv" in ex:
                        recv = ex["recv"].rsplit(".", 1)[-1]
                        self.recv_methods.setdefault((fam, recv), {}).setdefault(name, []).append(idx)
        del file_of
        self._index_python()
        self._index_js()
        self._index_go()
        self._index_rust()
        self._index_java()
        self.basename_index: dict[str, list[int]] = {}
        for f in self.files.values():
            self.basename_index.setdefault(f.base, []).append(f.idx)

    # -------------------------------------------------------------------------------------------- edges

    def edge(self, src: int, dst: int, rel: int, factor: float, n: int = 1) -> None:
        if src < 0 or dst < 0 or src == dst:
            return
        key = (src, dst, rel)
        wk = (rel, factor)
        w = _W_CACHE.get(wk)
        if w is None:
            w = _W_CACHE[wk] = round(W0[rel] * factor, 6)
        got = self.edges.get(key)
        if got is None:
            self.edges[key] = [w, n]
        else:
            got[1] += n
            got[0] = max(got[0], w)

    # -------------------------------------------------------------------------------------------- lookups

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
        for s in self.bindings_stars(f):
            if s != target and self.star_exports(s, name):
                got = self.member(s, name, want, depth + 1)
                if got >= 0 or got == EXTERNAL:
                    return got
        return EXTERNAL if f.ext_star else NOTFOUND

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

    def go_type(self, f: _File, name: str) -> int:
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

    # -------------------------------------------------------------------------------------------- names

    def scope_lookup(self, f: _File, owner: int, name: str, want: frozenset[int], category: str) -> int:
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
        self, f: _File, owner: int, name: str, want: frozenset[int], category: str
    ) -> tuple[int, float]:
        """Resolve a (possibly dotted) name from ``owner`` in file ``f``: (node, factor) or (NOTFOUND|AMBIG|EXTERNAL, 0)."""
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
        got = self.star_lookup(f, name, want)
        if got >= 0:
            return got, 1.0
        if got == EXTERNAL:
            return EXTERNAL, 0.0
        got = self.same_package(f, name, want)
        if got >= 0:
            return got, 0.9
        if f.ext_star or name in BUILTINS.get(f.fam, ()):
            return EXTERNAL, 0.0
        return self.global_lookup(f, name, want, category)

    def star_lookup(self, f: _File, name: str, want: frozenset[int]) -> int:
        """``name`` through the file's star imports (modules, packages, namespaces); EXTERNAL / NOTFOUND."""
        self.bindings_of(f)
        for s in f.stars:
            if not self.star_exports(s, name):
                continue
            got = self.member(s, name, want)
            if got >= 0:
                return got
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

    def star_pkgs(self, f: _File) -> list[str]:
        """Packages / namespaces the file star-imports (``import a.b.*``, ``using A.B;``, C# ``global using``)."""
        pkgs = getattr(self, "_jstars", {}).get(f.idx) or []
        if f.fam == "cs" and self.cs_global_usings:
            pkgs = pkgs + [p for p in self.cs_global_usings if p in self.java_pkgs]
        return pkgs

    def same_package(self, f: _File, name: str, want: frozenset[int]) -> int:
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

    def global_lookup(self, f: _File, name: str, want: frozenset[int], category: str) -> tuple[int, float]:
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
                score = _common_prefix_len(mine, cd.split("/") if cd else [])
                if score > best_score:
                    best, best_score, tie = c, score, False
                elif score == best_score and c != best:
                    tie = True
            res = (AMBIG, 0.0) if tie else (best, 0.6)
        self.global_memo[key] = res
        return res

    def lookup_qualified(
        self, f: _File, owner: int, parts: list[str], want: frozenset[int], category: str
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
                    if got < 0 and fam in ("cs", "kt"):  # ``Type.M()`` with Type from ``using`` / ``import a.*``
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
            if nxt == EXTERNAL:
                return EXTERNAL, 0.0
            if nxt < 0 and fam == "c" and last and self.kind[cur] == K_MOD:
                # a C++ namespace is open: ``ns::X`` may be declared in another file's ``namespace ns {…}``
                return self.global_lookup(f, seg, want, category)
            if nxt < 0:
                return (NOTFOUND if self.kind[cur] in (K_FILE, K_DIR) else BROKEN), 0.0
            cur = nxt
        if cur >= 0 and self.kind[cur] not in want:
            return (EXTERNAL if self.kind[cur] in (K_FILE, K_DIR) else NOTFOUND), 0.0
        return cur, factor

    # -------------------------------------------------------------------------------------------- receiver types

    def eval_type(self, f: _File, owner: int, texpr: str, depth: int) -> tuple[int, float]:
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

    def _eval_type(self, f: _File, owner: int, texpr: str, depth: int) -> tuple[int, float]:
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
                ex = self.extra[t]
                ret = ex.get("ret") if ex is not None else None
                if not ret:
                    return NOTFOUND, 0.0
                rf = self.file_by_idx[self.file_of[t]]
                t, fac2 = self.eval_type(rf, t, ret, depth + 1)
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
            t, fac2 = self.attr_type(t, attr, depth)
            if t < 0:
                return t, 0.0
            factor = min(factor, fac2)
        if self.kind[t] not in CLASSLIKE:
            return NOTFOUND, 0.0
        return t, factor

    def _unique(self, f: _File, name: str, got: int, factor: float, category: str) -> bool:
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
        return NOTFOUND, 0.0

    # -------------------------------------------------------------------------------------------- python

    def _index_python(self) -> None:
        self.py_path: dict[int, str] = {}  # module node -> path without extension ("a/b")
        self.py_files: dict[str, int] = {}
        self.py_init_of_dir: dict[str, int] = {}
        py_dirs: set[str] = set()
        for rel, f in self.files.items():
            if f.fam != "py":
                continue
            stem = rel.rsplit(".", 1)[0]
            if f.base in ("__init__.py", "__init__.pyi"):
                path = f.dir
                self.py_init_of_dir.setdefault(f.dir, f.idx)
            else:
                path = stem
            self.py_files.setdefault(path, f.idx)
            if rel.endswith(".py") and f.base not in ("__init__.pyi",):
                self.py_files[path] = f.idx if not rel.endswith(".pyi") else self.py_files[path]
            self.py_path.setdefault(f.idx, path)
            d = f.dir
            while d:
                py_dirs.add(d)
                d = posixpath.dirname(d)
        for d in py_dirs:
            didx = self.dirs.get(d)
            if didx is not None:
                self.py_path.setdefault(didx, d)
        self.py_dir_set = py_dirs
        roots = [""]
        for d in sorted(py_dirs):
            if d.rsplit("/", 1)[-1] in ("src", "lib", "python"):
                roots.append(d)
        self.py_roots = roots
        self.py_abs_memo: dict[str, list[int]] = {}

    def py_node(self, path: str) -> int | None:
        got = self.py_files.get(path)
        if got is not None:
            return got
        if path in self.py_dir_set:
            return self.dirs.get(path)
        return None

    def py_absolute(self, f: _File, module: str) -> int | None:
        cands = self.py_abs_memo.get(module)
        if cands is None:
            mpath = module.replace(".", "/")
            cands = []
            for r in self.py_roots:
                got = self.py_node(f"{r}/{mpath}" if r else mpath)
                if got is not None and got not in cands:
                    cands.append(got)
            self.py_abs_memo[module] = cands
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]
        mine = f.rel.split("/")
        return max(
            cands,
            key=lambda c: (_common_prefix_len(mine, self.src_path[c].split("/")), -len(self.src_path[c])),
        )

    def _bindings_python(self, f: _File) -> None:
        b = f.bindings
        is_init = f.base in ("__init__.py", "__init__.pyi")
        for imp in f.blob.get("imports") or ():
            module = imp["module"]
            level = imp.get("level") or 0
            if level:
                base = f.dir
                for _ in range(level - 1):
                    base = posixpath.dirname(base)
                mpath = module.replace(".", "/")
                path = f"{base}/{mpath}" if base and mpath else (base or mpath)
                target = self.py_node(path) if path else self.dirs.get(".")
                shown = "." * level + module
            else:
                target = self.py_absolute(f, module) if module else None
                path = None
                shown = module
            names = imp.get("names") or []
            if not names and not imp.get("star"):  # import a.b.c [as x]
                if target is None:
                    f.externals.add(shown)
                    local = imp.get("alias") or module.split(".", 1)[0]
                    b.setdefault(local, EXTERNAL)
                    continue
                f.import_edges.append((target, IMPORTS, 1.0))
                if imp.get("alias"):
                    b[imp["alias"]] = target
                else:
                    head = module.split(".", 1)[0]
                    ht = self.py_absolute(f, head)
                    b[head] = ht if ht is not None else EXTERNAL
                continue
            if target is None:
                f.externals.add(shown)
                for _, local in names:
                    b[local] = EXTERNAL
                if imp.get("star"):
                    f.ext_star = True
                continue
            if imp.get("star"):
                f.import_edges.append((target, IMPORTS, 1.0))
                f.stars.append(target)
                continue
            file_edge = False
            tdir = self.src_path[target]
            for name, local in names:
                mpath = self.py_path.get(target)
                sub = None
                if mpath is not None:
                    sub = self.py_node(f"{mpath}/{name}" if mpath else name)
                if sub is not None:
                    got = sub
                else:
                    file_edge = True
                    got = self.member(target, name, ANY_SYMBOL)
                if got >= 0:
                    b[local] = got
                    f.import_edges.append((got, IMPORTS, 1.0))
                    if is_init and imp.get("reexport") and self._under(self.src_path[got], f.dir):
                        f.import_edges.append((got, REEXPORTS, 1.0))
                else:
                    b[local] = EXTERNAL if got == EXTERNAL else NOTFOUND
                    file_edge = True
            if file_edge:
                f.import_edges.append((target, IMPORTS, 1.0))
            del tdir
        exported = (f.blob.get("extra") or {}).get("all") if is_init else None
        if exported and f.stars:
            # ``from .util import *`` + ``__all__ = ["helper"]``: the package re-exports util.helper
            for name in exported:
                if name in b:
                    continue
                for s in f.stars:
                    if not self.star_exports(s, name):
                        continue
                    got = self.member(s, name, ANY_SYMBOL)
                    if got >= 0:
                        if self._under(self.src_path[got], f.dir):
                            f.import_edges.append((got, REEXPORTS, 1.0))
                        break

    @staticmethod
    def _under(path: str, d: str) -> bool:
        return not d or path == d or path.startswith(d + "/")

    # -------------------------------------------------------------------------------------------- js / ts

    def _index_js(self) -> None:
        self.tsconfigs: dict[str, dict[str, Any]] = {}
        for f in self.files.values():
            if f.base in ("tsconfig.json", "jsconfig.json"):
                cfg = (f.blob.get("extra") or {}).get("tsconfig")
                if cfg is not None and (f.dir not in self.tsconfigs or f.base == "tsconfig.json"):
                    self.tsconfigs[f.dir] = cfg
        self.js_default_memo: dict[int, int] = {}

    def js_file(self, path: str) -> int | None:
        path = posixpath.normpath(path)
        if path.startswith("../") or path == "..":
            return None
        if path == ".":
            path = ""
        files = self.files
        cands = [path] if path else []
        cands += [path + e for e in JS_EXTS]
        cands += [f"{path}/index{e}" if path else f"index{e}" for e in JS_EXTS]
        for c in cands:
            f = files.get(c)
            if f is not None:
                return f.idx
        stem, ext = posixpath.splitext(path)
        if ext in (".js", ".jsx", ".mjs", ".cjs"):
            for e in (".ts", ".tsx", ".mts", ".cts"):
                f = files.get(stem + e)
                if f is not None:
                    return f.idx
        return None

    def js_module(self, f: _File, spec: str) -> int | None:
        if spec.startswith(("./", "../")) or spec in (".", ".."):
            return self.js_file(posixpath.join(f.dir, spec))
        if spec.startswith("/"):
            return None
        # nearest tsconfig / jsconfig (root included)
        d = f.dir
        while True:
            cfg = self.tsconfigs.get(d)
            if cfg is not None:
                return self._js_paths(d, cfg, spec)
            if not d:
                return None
            d = posixpath.dirname(d)

    def _js_paths(self, cfg_dir: str, cfg: dict[str, Any], spec: str) -> int | None:
        base = cfg.get("baseUrl")
        base_dir = posixpath.normpath(posixpath.join(cfg_dir, base)) if base else cfg_dir
        if base_dir == ".":
            base_dir = ""
        best: tuple[int, list[str]] | None = None
        for pat, targets in (cfg.get("paths") or {}).items():
            if "*" in pat:
                pre, _, post = pat.partition("*")
                if spec.startswith(pre) and spec.endswith(post) and len(spec) >= len(pre) + len(post):
                    star = spec[len(pre) : len(spec) - len(post)] if post else spec[len(pre) :]
                    subs = [t.replace("*", star, 1) for t in targets]
                    if best is None or len(pre) > best[0]:
                        best = (len(pre), subs)
            elif pat == spec:
                best = (1 << 20, list(targets))
        if best is not None:
            for t in best[1]:
                got = self.js_file(posixpath.join(base_dir, t) if base_dir else t)
                if got is not None:
                    return got
        if base:
            return self.js_file(posixpath.join(base_dir, spec) if base_dir else spec)
        return None

    def _bindings_js(self, f: _File) -> None:
        b = f.bindings
        for imp in f.blob.get("imports") or ():
            spec = imp["module"]
            target = self.js_module(f, spec)
            if target is None:
                f.externals.add(spec)
                for _, local in imp.get("names") or ():
                    if not imp.get("reexport"):
                        b[local] = EXTERNAL
                if imp.get("alias") and not imp.get("reexport"):
                    b[imp["alias"]] = EXTERNAL
                continue
            f.import_edges.append((target, IMPORTS, 1.0))
            re = bool(imp.get("reexport"))
            if re and (imp.get("star") or imp.get("alias")):
                f.import_edges.append((target, REEXPORTS, 1.0))
            if imp.get("alias") and not re:
                b[imp["alias"]] = target
            for name, local in imp.get("names") or ():
                got = self.js_default(target) if name == "default" else self.member(target, name, ANY_SYMBOL)
                if got >= 0:
                    f.import_edges.append((got, IMPORTS, 1.0))
                    if re:
                        f.import_edges.append((got, REEXPORTS, 1.0))
                if not re:
                    b[local] = got if got >= 0 or got == EXTERNAL else NOTFOUND

    def js_default(self, target: int) -> int:
        got = self.js_default_memo.get(target)
        if got is not None:
            return got
        self.js_default_memo[target] = NOTFOUND
        f = self.file_by_idx.get(target)
        res = NOTFOUND
        if f is not None:
            name = (f.blob.get("extra") or {}).get("default_export")
            if name:
                res = self.first(self.members.get(target, {}).get(name), ANY_SYMBOL)
                if res < 0:
                    b = self.bindings_of(f).get(name)
                    res = b if b is not None and b >= 0 else NOTFOUND
        self.js_default_memo[target] = res
        return res

    def js_export(self, f: _File, name: str, want: frozenset[int], depth: int) -> int:
        """An exported name of a JS/TS module, following ``export … from`` re-exports."""
        if depth > 6:
            return NOTFOUND
        for imp in f.blob.get("imports") or ():
            if not imp.get("reexport"):
                continue
            for orig, alias in imp.get("names") or ():
                if alias == name:
                    t = self.js_module(f, imp["module"])
                    if t is None:
                        return EXTERNAL
                    return self.member(t, orig, want, depth + 1) if orig != "default" else self.js_default(t)
            if imp.get("alias") == name:
                t = self.js_module(f, imp["module"])
                return t if t is not None else EXTERNAL
        for imp in f.blob.get("imports") or ():
            if imp.get("reexport") and imp.get("star"):
                t = self.js_module(f, imp["module"])
                if t is not None and t != f.idx:
                    got = self.member(t, name, want, depth + 1)
                    if got >= 0:
                        return got
        # a name imported and re-exported later with `export { x }` is not tracked; plain imports count too
        b = self.bindings_of(f).get(name)
        if b is not None and b >= 0 and self.kind[b] in want:
            return b
        if any(
            imp.get("reexport") and imp.get("star") and self.js_module(f, imp["module"]) is None
            for imp in f.blob.get("imports") or ()
        ):
            return EXTERNAL
        return NOTFOUND

    # -------------------------------------------------------------------------------------------- go

    def _index_go(self) -> None:
        self.go_modules: list[tuple[str, str]] = []  # (module path, dir), longest module path first
        for f in self.files.values():
            if f.base == "go.mod":
                mod = (f.blob.get("extra") or {}).get("go_module")
                if mod:
                    self.go_modules.append((mod, f.dir))
        self.go_modules.sort(key=lambda x: (-len(x[0]), x[1]))
        self.go_pkg_members: dict[str, dict[str, list[int]]] = {}
        self.go_pkg_name: dict[str, str] = {}
        self.go_methods: dict[tuple[str, str], dict[str, list[int]]] = {}
        for rel in sorted(self.files):
            f = self.files[rel]
            if f.fam != "go":
                continue
            d = f.dir or "."
            if f.pkg and not f.pkg.endswith("_test"):
                self.go_pkg_name.setdefault(d, f.pkg)
            pm = self.go_pkg_members.setdefault(d, {})
            for idx in f.syms:
                if idx < 0:
                    continue
                p = self.parent[idx]
                ex = self.extra[idx]
                if p == f.idx and not (ex and "recv" in ex):
                    pm.setdefault(self.label[idx], []).append(idx)
                if ex and "recv" in ex:
                    recv = ex["recv"].split(".")[-1]
                    self.go_methods.setdefault((f.dir, recv), {}).setdefault(self.label[idx], []).append(idx)

    def _bindings_go(self, f: _File) -> None:
        b = f.bindings
        for imp in f.blob.get("imports") or ():
            path = imp["module"]
            target = None
            for mod, mdir in self.go_modules:
                if path == mod or path.startswith(mod + "/"):
                    sub = path[len(mod) + 1 :] if path != mod else ""
                    drel = posixpath.join(mdir, sub) if mdir and sub else (mdir or sub or ".")
                    target = self.dirs.get(drel)
                    break
            if target is None:
                f.externals.add(path)
                local = imp.get("alias") or go_default_binding(path)
                b.setdefault(local, EXTERNAL)
                continue
            f.import_edges.append((target, IMPORTS, 1.0))
            if imp.get("star"):
                f.stars.append(target)
                continue
            local = imp.get("alias") or self.go_pkg_name.get(self.src_path[target]) or path.rsplit("/", 1)[-1]
            b[local] = target

    # -------------------------------------------------------------------------------------------- rust

    def _index_rust(self) -> None:
        crates: dict[str, dict[str, Any]] = {}  # crate dir -> cargo info
        for f in self.files.values():
            if f.base == "Cargo.toml":
                cargo = (f.blob.get("extra") or {}).get("cargo")
                if cargo and cargo.get("name"):
                    crates[f.dir] = cargo
        self.rust_mods: dict[tuple[str, tuple[str, ...]], int] = {}
        self.rust_crates: dict[str, int] = {}  # crate name -> root module file
        rust_files = [f for f in self.files.values() if f.fam == "rs"]
        if not rust_files:
            return
        crate_dirs = sorted(crates, key=len, reverse=True)

        def crate_of(rel: str) -> str:
            for c in crate_dirs:
                if not c or rel.startswith(c + "/"):
                    return c
            return ""

        def src_dir(c: str) -> str:
            s = f"{c}/src" if c else "src"
            return s if s in self.dirs else c

        for f in sorted(rust_files, key=lambda x: x.rel):
            c = crate_of(f.rel)
            s = src_dir(c)
            if s and not f.rel.startswith(s + "/"):
                f.rust_key = (f"file:{f.rel}", ())
                continue
            sub = f.rel[len(s) + 1 :] if s else f.rel
            parts = sub[:-3].split("/")  # drop ".rs"
            if parts[-1] == "mod":
                parts = parts[:-1]
            elif len(parts) == 1 and parts[0] in ("lib", "main"):
                parts = []
            key = (c, tuple(parts))
            if key in self.rust_mods and parts == [] and f.base == "main.rs":
                # both lib.rs and main.rs: lib.rs is the crate root, main.rs is its own root
                f.rust_key = (f"file:{f.rel}", ())
                continue
            f.rust_key = key
            self.rust_mods.setdefault(key, f.idx)
            if f.base == "lib.rs" and parts == []:
                self.rust_mods[key] = f.idx
        for c, cargo in crates.items():
            root = self.rust_mods.get((c, ()))
            lp = cargo.get("lib_path")
            if lp:
                fl = self.files.get(
                    posixpath.normpath(posixpath.join(c, lp)) if c else posixpath.normpath(lp)
                )
                if fl is not None:
                    root = fl.idx
            if root is not None:
                self.rust_crates[str(cargo.get("lib_name") or cargo["name"]).replace("-", "_")] = root
        for f in rust_files:
            if f.rust_key is not None and f.rust_key[0].startswith("file:"):
                self.rust_mods[f.rust_key] = f.idx

    def rust_path_prefix(self, f: _File, parts: list[str]) -> tuple[int, int]:
        """Module file for a ``crate`` / ``self`` / ``super`` path prefix: (file node, segments used)."""
        key = f.rust_key
        if key is None:
            return NOTFOUND, 0
        c, segs = key
        i = 0
        if parts[0] == "crate":
            segs = ()
            i = 1
        elif parts[0] == "self":
            i = 1
        while i < len(parts) and parts[i] == "super":
            segs = segs[:-1]
            i += 1
        # descend through module files as far as they go
        cur = self.rust_mods.get((c, segs))
        if cur is None:
            return NOTFOUND, 0
        while i < len(parts):
            nxt = self.rust_mods.get((c, segs + (parts[i],)))
            if nxt is None:
                break
            segs = segs + (parts[i],)
            cur = nxt
            i += 1
        return cur, i

    def rust_resolve_path(self, f: _File, parts: list[str]) -> int:
        head = parts[0]
        if head in ("crate", "self", "super"):
            cur, used = self.rust_path_prefix(f, parts)
        else:
            cur, used = NOTFOUND, 1
            key = f.rust_key
            if head in self.rust_crates:
                cur = self.rust_crates[head]
                used = 1
                # continue through the other crate's module files
                f2 = self.file_by_idx[cur]
                if f2.rust_key is not None and len(parts) > 1:
                    c2 = f2.rust_key[0]
                    segs: tuple[str, ...] = ()
                    while used < len(parts):
                        nxt = self.rust_mods.get((c2, segs + (parts[used],)))
                        if nxt is None:
                            break
                        segs = segs + (parts[used],)
                        cur = nxt
                        used += 1
            elif key is not None and (key[0], key[1] + (head,)) in self.rust_mods:
                cur, used = self.rust_path_prefix(f, ["self"] + parts)
                used -= 1
            else:
                if head in ("std", "core", "alloc"):
                    return EXTERNAL
                got = self.first(self.members.get(f.idx, {}).get(head), ANY_SYMBOL)
                if got < 0:
                    return EXTERNAL
                cur = got
        if cur < 0:
            return NOTFOUND
        for seg in parts[used:]:
            nxt = self.member(cur, seg, ANY_SYMBOL)
            if nxt < 0:
                return NOTFOUND
            cur = nxt
        return cur

    def _bindings_rust(self, f: _File) -> None:
        b = f.bindings
        for imp in f.blob.get("imports") or ():
            path = imp["module"]
            parts = [p for p in path.split("::") if p]
            depth = imp.get("mod_depth") or 0
            if depth and parts and parts[0] == "super":
                # inside inline `mod` blocks, the first `super`s stay inside this file's module
                k = 0
                while k < len(parts) and parts[k] == "super" and depth > 0:
                    k += 1
                    depth -= 1
                parts = parts[k:] if k < len(parts) and parts[k] == "super" else ["self", *parts[k:]]
                if parts == ["self"] and imp.get("star"):
                    continue  # `use super::*` in `mod tests`: the file's items are in scope already
            if not parts:
                continue
            target = self.rust_resolve_path(f, parts)
            if target == EXTERNAL or target == NOTFOUND:
                if target == EXTERNAL:
                    f.externals.add(path)
                if imp.get("alias"):
                    b.setdefault(imp["alias"], EXTERNAL if target == EXTERNAL else NOTFOUND)
                continue
            tfile = self.file_of[target]
            f.import_edges.append((target, IMPORTS, 1.0))
            if tfile != target and tfile >= 0:
                f.import_edges.append((tfile, IMPORTS, 1.0))
            if imp.get("reexport"):
                f.import_edges.append((target, REEXPORTS, 1.0))
            if imp.get("star"):
                f.stars.append(target)
            elif imp.get("alias"):
                b[imp["alias"]] = target
        # `mod x;` -> declares_module
        mods = (f.blob.get("extra") or {}).get("mods") or ()
        if mods:
            stem = f.base[:-3]
            own_dir = f.dir
            is_mod_root = f.base in ("mod.rs", "lib.rs", "main.rs")
            for m in mods:
                cands = []
                sd = posixpath.join(own_dir, stem) if own_dir else stem
                if not is_mod_root:
                    cands += [f"{sd}/{m}.rs", f"{sd}/{m}/mod.rs"]
                base = f"{own_dir}/" if own_dir else ""
                cands += [f"{base}{m}.rs", f"{base}{m}/mod.rs"]
                if is_mod_root:
                    cands += [f"{sd}/{m}.rs", f"{sd}/{m}/mod.rs"]
                for c in cands:
                    g = self.files.get(c)
                    if g is not None and g.fam == "rs":
                        f.import_edges.append((g.idx, DECLARES_MODULE, 1.0))
                        b.setdefault(m, g.idx)
                        break

    # -------------------------------------------------------------------------------------------- java

    def _index_java(self) -> None:
        self.java_types: dict[tuple[str, str], list[int]] = {}
        self.java_pkgs: set[str] = set()
        self.java_pkg_files: dict[str, list[int]] = {}
        self.cs_global_usings: list[str] = []  # ``global using A.B;`` anywhere: in force in every C# file
        for rel in sorted(self.files):
            f = self.files[rel]
            if f.fam not in PACKAGED_FAMILIES:
                continue
            if f.fam == "cs":
                self.cs_global_usings += [imp["module"] for imp in f.blob.get("imports") or ()
                                          if imp.get("scope") == "global" and imp.get("star") and not imp.get("static")]
            pkg = f.pkg or ""
            self.java_pkgs.add(pkg)
            self.java_pkg_files.setdefault(pkg, []).append(f.idx)
            # a C# / PHP type sits inside its namespace block; Kotlin / PHP top-level functions are importable too
            kinds = TYPE_KINDS if f.fam == "java" else IMPORTABLE_KINDS
            stack = [f.idx]
            while stack:
                c = stack.pop()
                for name, idxs in self.members.get(c, {}).items():
                    for idx in idxs:
                        k = self.kind[idx]
                        if k in kinds:
                            self.java_types.setdefault((pkg, name), []).append(idx)
                        elif k == K_MOD:
                            stack.append(idx)

    def _java_import_target(self, parts: list[str]) -> int:
        for k in range(len(parts) - 1, 0, -1):
            pkg = ".".join(parts[:k])
            if pkg in self.java_pkgs:
                cur = self.first(self.java_types.get((pkg, parts[k])), IMPORTABLE_KINDS)
                if cur < 0:
                    return NOTFOUND
                for seg in parts[k + 1 :]:
                    cur = self.member(cur, seg, ANY_SYMBOL)
                    if cur < 0:
                        return NOTFOUND
                return cur
        if len(parts) >= 1 and "" in self.java_pkgs:
            cur = self.first(self.java_types.get(("", parts[0])), TYPE_KINDS)
            for seg in parts[1:]:
                if cur < 0:
                    break
                cur = self.member(cur, seg, ANY_SYMBOL)
            return cur
        return EXTERNAL

    def _bindings_java(self, f: _File) -> None:
        b = f.bindings
        for imp in f.blob.get("imports") or ():
            module = imp["module"]
            parts = module.split(".")
            if imp.get("star"):
                if not imp.get("static") and module in self.java_pkgs:
                    self._java_star_pkgs(f).append(module)
                    continue
                t = self._java_import_target(parts)
                if t >= 0:
                    f.stars.append(t)
                    f.import_edges.append((self.file_of[t], IMPORTS, 1.0))
                else:
                    f.externals.add(module + ".*")
                continue
            t = self._java_import_target(parts)
            local = parts[-1]
            if t < 0:
                if t == EXTERNAL:
                    f.externals.add(module)
                b[local] = EXTERNAL if t == EXTERNAL else NOTFOUND
                continue
            b[local] = t
            f.import_edges.append((t, IMPORTS, 1.0))
            f.import_edges.append((self.file_of[t], IMPORTS, 1.0))

    def _java_star_pkgs(self, f: _File) -> list[str]:
        got = getattr(self, "_jstars", None)
        if got is None:
            got = self._jstars = {}
        return got.setdefault(f.idx, [])

    # -------------------------------------------------------------------------------------------- path imports

    def path_file(self, f: _File, path: str, relative: bool) -> int:
        """The file a C ``#include`` / Ruby ``require`` names: beside the including file first, else the one file
        whose path ends with ``path`` (the nearest one by directory when several do); NOTFOUND when none."""
        if relative or f.fam == "c":
            got = self.files.get(posixpath.normpath(posixpath.join(f.dir, path)))
            if got is not None:
                return got.idx
            if relative:
                return NOTFOUND
        base = path.rsplit("/", 1)[-1]
        cands = [i for i in self.basename_index.get(base, ())
                 if self.src_path[i] == path or self.src_path[i].endswith("/" + path)]
        if not cands:
            return NOTFOUND
        if len(cands) == 1:
            return cands[0]
        mine = f.dir.split("/") if f.dir else []
        return max(cands, key=lambda i: (_common_prefix_len(mine, posixpath.dirname(self.src_path[i]).split("/")),
                                         -len(self.src_path[i])))

    def _bindings_paths(self, f: _File) -> None:
        ruby = f.fam == "rb"
        for imp in f.blob.get("imports") or ():
            path = imp["module"]
            if ruby and not path.endswith(".rb"):
                path += ".rb"
            t = self.path_file(f, path, bool(imp.get("level")))
            if t < 0 or t == f.idx:
                if t < 0:
                    f.externals.add(imp["module"])
                continue
            # the included / required file's top level is searched before the rest of the graph
            f.stars.append(t)
            f.import_edges.append((t, IMPORTS, 1.0))

    # -------------------------------------------------------------------------------------------- bindings

    def bindings_of(self, f: _File) -> dict[str, int]:
        if f.binding_state == 0:
            f.binding_state = 1
            fam = f.fam
            if fam == "py":
                self._bindings_python(f)
            elif fam == "js":
                self._bindings_js(f)
            elif fam == "go":
                self._bindings_go(f)
            elif fam == "rs":
                self._bindings_rust(f)
            elif fam in PACKAGED_FAMILIES:
                self._bindings_java(f)
            elif fam in PATH_IMPORT_FAMILIES:
                self._bindings_paths(f)
            f.binding_state = 2
        return f.bindings

    def bindings_stars(self, f: _File) -> list[int]:
        self.bindings_of(f)
        if f.fam in PACKAGED_FAMILIES:
            pkgs = self.star_pkgs(f)
            if pkgs:
                # the members of a package are its types: expose the package's files, whose top level holds them
                return f.stars + [t for p in pkgs for t in self.java_pkg_files.get(p, ())]
        return f.stars

    # -------------------------------------------------------------------------------------------- passes

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

    def _count(self, res: int, n: int) -> None:
        if res in (NOTFOUND, BROKEN):
            self.unresolved += n
        elif res == AMBIG:
            self.ambiguous += n

    def _resolve_hierarchy(self, f: _File, owner: int, kind: str, name: str, n: int) -> None:
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

    def _resolve_ref(self, f: _File, owner: int, kind: str, name: str, n: int) -> None:
        if kind in ("call", "qualified"):
            got, factor = self.lookup(f, owner, name, CALL_KINDS, "call")
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
            if t == EXTERNAL:
                return  # a method of a type outside the graph (builtins, imported libraries)
            if t >= 0:
                got = self.member(t, meth, FN_KINDS)
                if got < 0:
                    if got == EXTERNAL or self.has_outside_base(t) or meth.startswith("__"):
                        return
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

    # -------------------------------------------------------------------------------------------- §8

    def tests_edges(self) -> None:
        by_base = self.basename_index
        for f in self.files.values():
            if f.fam not in CODE_FAMILIES:
                continue
            subject_files: list[int] = []
            if f.blob.get("is_test"):
                main_subject = self._subject_file(f, by_base)
                if main_subject >= 0:
                    subject_files.append(main_subject)
                for target, rel, _ in f.import_edges:
                    if rel != IMPORTS:
                        continue
                    tf = target if self.kind[target] == K_FILE else self.file_of[target]
                    if tf >= 0 and tf != f.idx and self.kind[tf] == K_FILE and tf not in subject_files:
                        subject_files.append(tf)
                for tf in subject_files:
                    self.edge(f.idx, tf, TESTS, 1.0)
            else:
                # test functions inside a regular file (Rust `#[cfg(test)] mod tests`): the file is the subject
                if not any(i >= 0 and self.is_test[i] for i in f.syms):
                    continue
                subject_files.append(f.idx)
            # test functions -> subject functions (first subject file holding the name wins)
            for idx in f.syms:
                if idx < 0 or not self.is_test[idx] or self.kind[idx] != K_FN:
                    continue
                stripped = _strip_test_name(self.label[idx])
                if not stripped:
                    continue
                best: list[int] = []
                for sf in subject_files:
                    found = self._fns_by_lower(sf).get(stripped)
                    if found:
                        best = found
                        break
                if len(best) > 1:
                    best = self._prefer_container(best, f, idx)
                if len(best) == 1:
                    self.edge(idx, best[0], TESTS, 1.0)

    def _prefer_container(self, cands: list[int], f: _File, test_fn: int) -> list[int]:
        """Several same-named subject functions: keep those whose container is named like the test's subject
        (``TestPool.test_get`` / ``test_pool.py`` -> a method of ``Pool``)."""
        hints = set()
        p = self.parent[test_fn]
        if self.kind[p] in CLASSLIKE:
            h = _strip_test_name(self.label[p])
            if h:
                hints.add(h)
        for n in _subject_basenames(f.base, f.fam):
            hints.add(n.split(".", 1)[0].lower())
        hints = {h.replace("_", "") for h in hints}
        kept = [c for c in cands if self.label[self.parent[c]].lower().replace("_", "") in hints] or cands
        if len({self.parent[c] for c in kept}) == 1:
            return kept[:1]  # redefinitions / overloads in one container are one logical function
        return kept

    def _fns_by_lower(self, file_idx: int) -> dict[str, list[int]]:
        """Non-test functions of a file by lower-cased name (memoised)."""
        memo = self.fns_lower_memo
        got = memo.get(file_idx)
        if got is None:
            got = {}
            kind, label, is_test = self.kind, self.label, self.is_test
            for s in self.file_by_idx[file_idx].syms:
                if s >= 0 and kind[s] == K_FN and not is_test[s]:
                    got.setdefault(label[s].lower(), []).append(s)
            memo[file_idx] = got
        return got

    def _subject_file(self, f: _File, by_base: dict[str, list[int]]) -> int:
        names = _subject_basenames(f.base, f.fam)
        if not names:
            return NOTFOUND
        cands = []
        for n in names:
            for idx in by_base.get(n, ()):
                g = self.file_by_idx[idx]
                if idx != f.idx and not g.blob.get("is_test") and g.fam == f.fam:
                    cands.append(idx)
        if not cands:
            return NOTFOUND
        mine = f.dir.split("/") if f.dir else []
        best, best_d, tie = NOTFOUND, 1 << 30, False
        for c in sorted(set(cands)):
            cd = self.file_by_idx[c].dir
            other = cd.split("/") if cd else []
            shared = _common_prefix_len(mine, other)
            dist = len(mine) + len(other) - 2 * shared
            if dist < best_d:
                best, best_d, tie = c, dist, False
            elif dist == best_d:
                tie = True
        return NOTFOUND if tie else best

    def mentions(self) -> None:
        qname_index: dict[str, list[int]] = {}
        label_index: dict[str, list[int]] = {}
        for f in self.files.values():
            if f.fam not in CODE_FAMILIES:
                continue
            for idx in f.syms:
                if idx < 0:
                    continue
                qname_index.setdefault(self.qname[idx], []).append(idx)
                label_index.setdefault(self.label[idx], []).append(idx)
        for f in self.files.values():
            if f.fam != "md":
                continue
            for owner_local, kind, tok in (f.blob.get("extra") or {}).get("mentions") or ():
                src = f.syms[owner_local] if owner_local >= 0 else f.idx
                if src < 0:
                    continue
                if kind == "path":
                    tok = tok.strip("/")
                    g = self.files.get(tok) or self.files.get(posixpath.normpath(posixpath.join(f.dir, tok)))
                    if g is not None and g.idx != f.idx:
                        self.edge(src, g.idx, MENTIONS, 1.0)
                    continue
                cands = qname_index.get(tok) if "." in tok else label_index.get(tok)
                if cands is None and "." in tok:
                    cands = None
                if cands and len(cands) == 1:
                    self.edge(src, cands[0], MENTIONS, 1.0)

    def uses_config(self) -> None:
        unique: dict[str, int] = {}
        for base, idxs in self.basename_index.items():
            if len(idxs) == 1 and len(base) >= CONFIG_BASENAME_MIN:
                f = self.file_by_idx[idxs[0]]
                if f.fam == "cfg":
                    unique[base] = f.idx
        if not unique:
            return
        for f in self.files.values():
            if f.fam not in CODE_FAMILIES:
                continue
            for tok in f.blob.get("config_refs") or ():
                t = unique.get(tok)
                if t is not None:
                    self.edge(f.idx, t, USES_CONFIG, 1.0)

    def co_changes(self) -> None:
        git = self.git
        if git is None or not git.available:
            return
        for a, b, n, s in git.co_change:
            fa, fb = self.files.get(a), self.files.get(b)
            if fa is None or fb is None or fa.idx == fb.idx:
                continue
            src, dst = (fa.idx, fb.idx) if self.ext[fa.idx] < self.ext[fb.idx] else (fb.idx, fa.idx)
            w = round(CO_CHANGE_W0_BASE + CO_CHANGE_W0_SLOPE * min(1.0, s), 6)
            self.edges[(src, dst, CO_CHANGES)] = [w, int(n)]

    # -------------------------------------------------------------------------------------------- output

    def output(self) -> GraphParts:
        git = self.git
        files_git = git.files if git is not None and git.available else {}
        temporal: dict[int, tuple[int, float, int]] = {}
        for rel, f in self.files.items():
            got = files_git.get(rel)
            if got is not None:
                temporal[f.idx] = (int(got[0]), min(1.0, got[1] / CHURN_FULL_AT), int(got[1]))
            else:
                mt = int(self.mtimes.get(rel, 0) or 0)
                # mtimes are nanoseconds (WalkedFile.mtime_ns); values that already look like ms are kept
                ms = mt // 1_000_000 if mt > 10**14 else mt
                temporal[f.idx] = (ms, 0.0, 0)
        # dirs: newest change below them
        dir_ms: dict[int, int] = {}
        for fidx, (ms, _, _) in temporal.items():
            p = self.parent[fidx]
            while p >= 0:
                if dir_ms.get(p, -1) >= ms:
                    break
                dir_ms[p] = ms
                p = self.parent[p]
        nodes: list[NodeRecord] = []
        for i in sorted(range(len(self.ext)), key=self.ext.__getitem__):
            k = self.kind[i]
            if k == K_DIR:
                ms, churn, cc = dir_ms.get(i, 0), 0.0, 0
            else:
                ms, churn, cc = temporal.get(self.file_of[i], (0, 0.0, 0))
            nodes.append(
                NodeRecord(
                    self.ext[i],
                    self.label[i],
                    self.qname[i],
                    k,
                    self.lang[i],
                    self.src_path[i],
                    self.ls[i],
                    self.le[i],
                    self.sig[i],
                    self.doc[i],
                    self.is_test[i],
                    self.chash[i],
                    ms,
                    float(churn),
                    cc,
                )
            )
        ext = self.ext
        edges = [EdgeRecord(ext[s], ext[d], r, float(v[0]), int(v[1])) for (s, d, r), v in self.edges.items()]
        edges.sort(key=lambda e: (e.src, e.dst, e.relation))
        external = {
            f.rel: sorted(f.externals)
            for f in sorted(self.files.values(), key=lambda x: x.rel)
            if f.externals
        }
        return GraphParts(
            nodes=nodes,
            edges=edges,
            unresolved_refs=self.unresolved,
            ambiguous_refs=self.ambiguous,
            external_imports=external,
            warnings=self.warnings,
        )


def _strip_test_name(name: str) -> str:
    low = name.lower()
    for p in ("test_", "test"):
        if low.startswith(p):
            return low[len(p) :].lstrip("_")
    return ""


def _subject_basenames(base: str, fam: str) -> list[str]:
    if fam == "py":
        stem = base.rsplit(".", 1)[0]
        if stem.startswith("test_"):
            return [f"{stem[5:]}.py", f"{stem[5:]}.pyi"]
        if stem.endswith("_test"):
            return [f"{stem[:-5]}.py", f"{stem[:-5]}.pyi"]
        return []
    if fam == "go":
        return [base[:-8] + ".go"] if base.endswith("_test.go") else []
    if fam == "js":
        for marker in (".test.", ".spec."):
            if marker in base:
                stem = base.split(marker, 1)[0]
                return [stem + e for e in JS_EXTS]
        return []
    if fam == "java":
        for suf in ("Tests.java", "Test.java"):
            if base.endswith(suf) and len(base) > len(suf):
                return [base[: -len(suf)] + ".java"]
        return []
    if fam == "rs":
        if base.endswith("_test.rs"):
            return [base[:-8] + ".rs"]
        if base.startswith("test_"):
            return [base[5:]]
        return [base] if base not in ("mod.rs", "lib.rs", "main.rs") else []
    if fam in ("kt", "cs", "php"):  # ``PoolTest.kt`` / ``PoolTests.cs`` / ``PoolTest.php`` test ``Pool.*``
        stem, _, ext = base.rpartition(".")
        for suf in ("Tests", "Test"):
            if stem.endswith(suf) and len(stem) > len(suf):
                return [f"{stem[: -len(suf)]}.{ext}"]
        return []
    if fam == "rb":  # ``pool_spec.rb`` / ``pool_test.rb`` / ``test_pool.rb``
        stem = base.removesuffix(".rb")
        for suf in ("_spec", "_test"):
            if stem.endswith(suf):
                return [stem[: -len(suf)] + ".rb"]
        return [stem[5:] + ".rb"] if stem.startswith("test_") else []
    if fam == "c":  # ``pool_test.c`` / ``pool_unittest.cc`` / ``test_pool.c``: any C or C++ source of that stem
        stem, _, _ext = base.rpartition(".")
        for suf in ("_unittest", "_test"):
            if stem.endswith(suf):
                stem = stem[: -len(suf)]
                break
        else:
            if not stem.startswith("test_"):
                return []
            stem = stem[5:]
        return [f"{stem}.{e}" for e in ("c", "cc", "cpp", "cxx", "h", "hpp")]
    return []


def resolve(
    extracts: dict[str, dict[str, Any]],
    *,
    git: GitData | None = None,
    mtimes: dict[str, int] | None = None,
    namespace: str | None = None,
) -> GraphParts:
    """Build the complete node and edge sets of one root from all of its per-file extracts.

    Parameters
    ----------
    extracts
        relpath -> extraction blob (:func:`m1nd.ingest.extract.extract_file`).
    git
        :func:`m1nd.ingest.gitdata.read_git` result, or None (temporal data from ``mtimes``).
    mtimes
        relpath -> modification time, used for files without commits in the git window: nanoseconds
        (``WalkedFile.mtime_ns``) or milliseconds (values below 10**14 are taken as milliseconds).
    namespace
        id prefix of a secondary root (``ns::file::…``); None for the primary root.
    """
    # bulk construction of ~10^5 small objects: the cyclic GC only costs time here (nothing is cyclic garbage)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        r = _Resolver(extracts, git, mtimes or {}, namespace)
        r.build_nodes()
        r.build_indexes()
        r.resolve_refs()
        r.tests_edges()
        r.mentions()
        r.uses_config()
        r.co_changes()
        return r.output()
    finally:
        if gc_was_enabled:
            gc.enable()


__all__ = ["EdgeRecord", "GraphParts", "NodeRecord", "resolve"]
