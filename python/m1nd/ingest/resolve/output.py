"""The resolver's result: sorted node records with temporal data (git or mtimes), sorted edge records,
external imports."""

from __future__ import annotations

from m1nd.ingest.gitdata import CHURN_FULL_AT
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.records import EdgeRecord, GraphParts, NodeRecord
from m1nd.ingest.resolve.tables import K_DIR


class GraphOutput(ResolverCore):
    """Builds :class:`GraphParts` from the resolver's columns."""

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
