"""The resolver's shared state and the steps every language goes through: node building (dirs, files,
symbols, ``contains``), the member and global name indexes, edge accumulation, and the per-file import
bindings, which dispatch to the language modules (``python``, ``javascript``, ``go``, ``rust``, ``java``,
``paths``).

Every other module of this package is a mixin over :class:`ResolverCore`: one idea each, composed into
the resolver in ``resolve/__init__.py``. The mixins read the core's columns and indexes; the language
indexes (``py_path``, ``js_files``, ``go_pkg_members``, ``rust_mods``, ``java_types``, ...) are built by
the language modules' ``_index_*`` methods, which :meth:`ResolverCore.build_indexes` calls."""

from __future__ import annotations

import posixpath
from typing import Any

from m1nd.graph.schema import CONTAINS, KINDS
from m1nd.ingest.gitdata import GitData
from m1nd.ingest.resolve.tables import (
    CALL_KINDS,
    CLASSLIKE,
    EXTRA_KEYS,
    K_DIR,
    K_FILE,
    K_FN,
    K_MACRO,
    K_MOD,
    PACKAGED_FAMILIES,
    PATH_IMPORT_FAMILIES,
    TYPE_KINDS,
    W0,
    W_CACHE,
    FileState,
)


class ResolverCore:
    """Node columns, edges, indexes and per-file bindings of one resolution run."""

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
        self.files: dict[str, FileState] = {}
        self.file_by_idx: dict[int, FileState] = {}
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
        self.set_memo: dict[tuple[int, str], frozenset[int] | None] = {}  # receivers.eval_set
        self.held_memo: dict[tuple[int, str], frozenset[int] | None | bool] = {}  # receivers._called_objects
        self.held_names: set[str] | None = None  # receivers._called_objects: every attribute name
        self.derived: dict[int, list[int]] | None = None  # type -> types listing it as a base (after pass A)
        self.derived_memo: dict[tuple[int, str], tuple[int, bool]] = {}
        self.stub_memo: dict[int, frozenset[int] | None] = {}  # stubs.stub_types
        self.stub_cls_memo: dict[str, int] = {}  # stubs.stub_class
        self.stub_mod_memo: dict[int, str | None] = {}  # stubs.stub_module
        self.typed_stats = [0, 0, 0]  # typed calls linked, type known but method missing, type unknown

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
            f = FileState(rel, fidx, lang, blob)
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
                if any(k in d_ for k in EXTRA_KEYS):
                    extra = {k: d_[k] for k in EXTRA_KEYS if k in d_}
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
                    pk in CLASSLIKE
                    or (pk in (K_FILE, K_MOD) and self.extra[idx] and "recv" in self.extra[idx])
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

    def edge(self, src: int, dst: int, rel: int, factor: float, n: int = 1) -> None:
        if src < 0 or dst < 0 or src == dst:
            return
        key = (src, dst, rel)
        wk = (rel, factor)
        w = W_CACHE.get(wk)
        if w is None:
            w = W_CACHE[wk] = round(W0[rel] * factor, 6)
        got = self.edges.get(key)
        if got is None:
            self.edges[key] = [w, n]
        else:
            got[1] += n
            got[0] = max(got[0], w)

    def bindings_of(self, f: FileState) -> dict[str, int]:
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

    def bindings_stars(self, f: FileState) -> list[int]:
        self.bindings_of(f)
        if f.fam in PACKAGED_FAMILIES:
            pkgs = self.star_pkgs(f)
            if pkgs:
                # the members of a package are its types: expose the package's files, whose top level holds them
                return f.stars + [t for p in pkgs for t in self.java_pkg_files.get(p, ())]
        return f.stars
