"""JavaScript / TypeScript resolution: file and index lookup, ``tsconfig`` / ``jsconfig`` ``paths``,
ES module and CommonJS bindings, default and named exports, re-exports."""

from __future__ import annotations

import posixpath
from typing import Any

from m1nd.graph.schema import IMPORTS, REEXPORTS
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import ANY_SYMBOL, EXTERNAL, JS_EXTS, NOTFOUND, FileState


class JsResolution(ResolverCore):
    """JS/TS module index, import bindings and exports."""

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

    def js_module(self, f: FileState, spec: str) -> int | None:
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

    def _bindings_js(self, f: FileState) -> None:
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

    def js_export(self, f: FileState, name: str, want: frozenset[int], depth: int) -> int:
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
