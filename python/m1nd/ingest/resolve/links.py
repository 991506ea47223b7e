"""Edges that come from outside the references: markdown ``mentions``, ``uses_config`` and git
``co_changes`` (graph.md §9)."""

from __future__ import annotations

import posixpath

from m1nd.graph.schema import CO_CHANGE_W0_BASE, CO_CHANGE_W0_SLOPE, CO_CHANGES, MENTIONS, USES_CONFIG
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import CODE_FAMILIES, CONFIG_BASENAME_MIN


class TextLinks(ResolverCore):
    """Mentions, config uses and co-change edges."""

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
