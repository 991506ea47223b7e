"""Rust resolution: crates (``Cargo.toml``), module files and inline modules, ``use`` paths
(``crate::`` / ``self::`` / ``super::``), globs."""

from __future__ import annotations

import posixpath
from typing import Any

from m1nd.graph.schema import DECLARES_MODULE, IMPORTS, REEXPORTS
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import ANY_SYMBOL, EXTERNAL, NOTFOUND, FileState


class RustResolution(ResolverCore):
    """Rust module tree and ``use`` bindings."""

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

    def rust_path_prefix(self, f: FileState, parts: list[str]) -> tuple[int, int]:
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

    def rust_resolve_path(self, f: FileState, parts: list[str]) -> int:
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

    def _bindings_rust(self, f: FileState) -> None:
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
