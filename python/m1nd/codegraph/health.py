"""The code-graph service's ``health`` report (:class:`~m1nd.codegraph.service.CodeGraph` is made of it): the graph,
its generations and roots, the last ingests' parse errors, git, the embedder, the lexical and history indexes, the
agents seen, perspectives and locks, watchers, and this process (memory, uptime, transport, native core).

A mixin over the service's own attributes and methods, as the memory service is made of its command families.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m1nd.codegraph.results import HealthReport
from m1nd.graph.engine import core_build_info
from m1nd.timeutil import now_ms

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph


class GraphHealth:
    """The health half of the code-graph service."""

    settings: Any
    store: Any
    workdir: Any
    transport: str
    agents: dict[str, Any]
    queries_processed: int
    started: float
    last_persist_ms: int
    graph: Any
    generations: Any
    dirty_positions: Any

    def health(self, agent_id: str, *, perspectives: Any = None) -> HealthReport:
        """``perspectives``: the workspace's perspective service (its counts are part of the report), or None."""
        from m1nd import __version__

        g = self.graph()
        gen, wgen = self.generations()
        roots = self.store.roots()
        counts = self.store.file_counts()
        warnings: list[str] = []
        git_info: dict[str, Any] = {"available": False}
        for r in roots:
            rep = r.report or {}
            files = rep.get("files_scanned", 0) or 0
            perr = (rep.get("skipped") or {}).get("parse_error", 0)
            if files and perr / files > 0.05:
                warnings.append(f"last ingest of {r.path} had parse errors in {perr} of {files} files")
        if roots:
            from m1nd.codegraph.ingestion import git_status

            git_info = git_status(Path(roots[0].path))
            if git_info.get("missing_git"):
                warnings.append("git is not installed but an ingest root is inside a git repository")
        try:
            with self.store.db.write():
                pass
        except Exception:  # noqa: BLE001 — probing writability; any failure means read-only
            warnings.append("the graph database is read-only")
        rss = _rss_bytes()
        from m1nd.watch import watch_status
        embedder = _embedder_health(self)
        lexicon = {"terms": len(g.lexicon.terms), "nodes_with_body_terms": g.lexicon.bodies} if g.lexicon else None
        if g.n and g.lexicon is not None and g.lexicon.bodies == 0:
            warnings.append("the lexical index holds no function bodies (the graph was ingested by an older m1nd): "
                            "run ingest again to index them")
        if embedder.get("error"):  # issue 6: an installed model that fails to load degrades health
            warnings.append(f"embedding model unavailable: {embedder['error']}")
        return HealthReport(
            status="degraded" if warnings else "ok", warnings=warnings, version=__version__,
            workspace=str(self.settings.workspace_key), node_count=g.n, edge_count=g.e, graph_generation=gen,
            weights_generation=wgen, queries_processed=self.queries_processed,
            uptime_seconds=round(time.time() - self.started, 3), memory_usage_bytes=rss, graph_bytes=g.engine.nbytes,
            last_persist_ms_ago=now_ms() - self.last_persist_ms, dirty_weights=len(self.dirty_positions()),
            ingest_roots=[{"path": r.path, "namespace": r.namespace, "files": counts.get(r.id, 0),
                           "last_ingest_ms": r.last_ingest_ms} for r in roots],
            embedder=embedder, lexicon=lexicon,
            history={"commits": g.history.commits, "terms": len(g.history.terms)} if g.history else None,
            agents=[{"agent_id": a, "first_seen_s_ago": round(time.time() - s.first_seen, 3),
                     "last_seen_s_ago": round(time.time() - s.last_seen, 3), "query_count": s.query_count}
                    for a, s in sorted(self.agents.items())],
            perspectives=perspectives.count(agent_id) if perspectives is not None else 0,
            locks=perspectives.lock_count() if perspectives is not None else 0, git=git_info,
            transport=self.transport, core=core_build_info(),
            watch=watch_status(self.workdir),  # issue 15: live watchers and what they have not ingested yet
        )


def _embedder_health(cg: CodeGraph) -> dict[str, Any]:
    return cg.code_vectors().health()  # type: ignore[no-any-return]


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * (1 if sys.platform == "darwin" else 1024)
