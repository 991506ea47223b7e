"""Go resolution: modules (``go.mod``), packages as directories, methods attached to receiver types
across the files of a package."""

from __future__ import annotations

import posixpath

from m1nd.graph.schema import IMPORTS
from m1nd.ingest.extract._common import go_default_binding
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import EXTERNAL, FileState


class GoResolution(ResolverCore):
    """Go package index and import bindings."""

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

    def _bindings_go(self, f: FileState) -> None:
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
