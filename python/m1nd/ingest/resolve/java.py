"""Java and the families resolved like it (Kotlin, C#, PHP): packages / namespaces, type imports,
wildcard imports, C# ``using`` and ``global using``."""

from __future__ import annotations

from m1nd.graph.schema import IMPORTS
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import (
    ANY_SYMBOL,
    EXTERNAL,
    IMPORTABLE_KINDS,
    K_MOD,
    NOTFOUND,
    PACKAGED_FAMILIES,
    TYPE_KINDS,
    FileState,
)


class JavaResolution(ResolverCore):
    """Package index and import bindings of the packaged families."""

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
                self.cs_global_usings += [
                    imp["module"]
                    for imp in f.blob.get("imports") or ()
                    if imp.get("scope") == "global" and imp.get("star") and not imp.get("static")
                ]
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

    def _bindings_java(self, f: FileState) -> None:
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

    def _java_star_pkgs(self, f: FileState) -> list[str]:
        got = getattr(self, "_jstars", None)
        if got is None:
            got = self._jstars = {}
        return got.setdefault(f.idx, [])
