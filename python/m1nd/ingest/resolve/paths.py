"""Imports that name files by path: C/C++ ``#include`` and Ruby ``require`` / ``require_relative``."""

from __future__ import annotations

import posixpath

from m1nd.graph.schema import IMPORTS
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import NOTFOUND, FileState, common_prefix_len


class PathImports(ResolverCore):
    """Path-import bindings (C/C++, Ruby)."""

    def path_file(self, f: FileState, path: str, relative: bool) -> int:
        """The file a C ``#include`` / Ruby ``require`` names: beside the including file first, else the one file
        whose path ends with ``path`` (the nearest one by directory when several do); NOTFOUND when none."""
        if relative or f.fam == "c":
            got = self.files.get(posixpath.normpath(posixpath.join(f.dir, path)))
            if got is not None:
                return got.idx
            if relative:
                return NOTFOUND
        base = path.rsplit("/", 1)[-1]
        cands = [
            i
            for i in self.basename_index.get(base, ())
            if self.src_path[i] == path or self.src_path[i].endswith("/" + path)
        ]
        if not cands:
            return NOTFOUND
        if len(cands) == 1:
            return cands[0]
        mine = f.dir.split("/") if f.dir else []
        return max(
            cands,
            key=lambda i: (
                common_prefix_len(mine, posixpath.dirname(self.src_path[i]).split("/")),
                -len(self.src_path[i]),
            ),
        )

    def _bindings_paths(self, f: FileState) -> None:
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
