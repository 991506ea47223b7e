"""Python resolution: module paths and source roots, relative / absolute imports, star imports with
``__all__``, package re-exports."""

from __future__ import annotations

import posixpath
from typing import Any

from m1nd.graph.schema import IMPORTS, REEXPORTS
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import (
    ANY_SYMBOL,
    CALL_KINDS,
    CLASSLIKE,
    EXTERNAL,
    K_DIR,
    NOTFOUND,
    SET_MAX,
    FileState,
    common_prefix_len,
)


class PythonResolution(ResolverCore):
    """Python module index and import bindings."""

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

    def py_absolute(self, f: FileState, module: str) -> int | None:
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
            key=lambda c: (common_prefix_len(mine, self.src_path[c].split("/")), -len(self.src_path[c])),
        )

    def _bindings_python(self, f: FileState) -> None:
        b = f.bindings
        is_init = f.base in ("__init__.py", "__init__.pyi")
        for imp in f.blob.get("imports") or ():
            module = imp["module"]
            level = imp.get("level") or 0
            target, path = self.py_import_target(f, imp)
            shown = "." * level + module
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

    def py_import_source(self, f: FileState, local: str) -> tuple[int, str]:
        """The module node and the name ``from m import name [as local]`` of file ``f`` imports as ``local``
        ((NOTFOUND, "") when no such import, or its module is not in the graph)."""
        for imp in f.blob.get("imports") or ():
            for name, loc in imp.get("names") or ():
                if loc != local:
                    continue
                target, _ = self.py_import_target(f, imp)
                return (target, name) if target is not None else (NOTFOUND, "")
        return NOTFOUND, ""

    def py_import_target(self, f: FileState, imp: dict[str, Any]) -> tuple[int | None, str | None]:
        """(the module node an import of file ``f`` names, or None; the root-relative module path of a relative
        import, else None)."""
        module = imp["module"]
        level = imp.get("level") or 0
        if not level:
            return (self.py_absolute(f, module) if module else None), None
        base = f.dir
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        mpath = module.replace(".", "/")
        path = f"{base}/{mpath}" if base and mpath else (base or mpath)
        return (self.py_node(path) if path else self.dirs.get(".")), path

    @staticmethod
    def _under(path: str, d: str) -> bool:
        return not d or path == d or path.startswith(d + "/")

    def alias_alternatives(self, f: FileState, name: str, classes: bool = True) -> frozenset[int] | None:
        """The classes (``classes``, else the classes or functions) a (dotted, or imported) name may denote when it
        is a module-level alias bound under ``if`` / ``try`` to different ones (``DefaultSelector =
        KqueueSelector`` / ``= EpollSelector``): each alternative, ``EXTERNAL`` for one outside the graph; None when
        it is no such alias or one alternative is something else or not known."""
        head, _, last = name.rpartition(".")
        if head:
            mod = self.bindings_of(f).get(head.split(".")[0], NOTFOUND)
            for seg in head.split(".")[1:]:
                mod = self.member(mod, seg, ANY_SYMBOL) if mod >= 0 else NOTFOUND
        elif f.aliases and last in f.aliases:
            mod = f.idx
        else:  # ``from .futures import _CFuture``
            mod, last = self.py_import_source(f, last)
        if mod >= 0 and self.kind[mod] == K_DIR:
            mod = self.py_init_of_dir.get(self.src_path[mod], NOTFOUND)
        mf = self.file_by_idx.get(mod) if mod >= 0 else None
        al = mf.aliases.get(last) if mf is not None and mf.aliases else None
        if al is None or "|" not in al:
            return None
        out: set[int] = set()
        for alt in al.split("|"):
            got = self.alias_target(mf, alt, CALL_KINDS, 0)
            if got == EXTERNAL or (got >= 0 and self.kind[got] in (CLASSLIKE if classes else CALL_KINDS)):
                out.add(got)
            else:
                return None
        return frozenset(out) if len(out) <= SET_MAX else None
