"""Uncached end-to-end run of the ingest pipeline (see the :mod:`m1nd.ingest` docstring)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from m1nd.defaults import GIT_WINDOW_DAYS
from m1nd.graph.schema import KIND_NAMES, RELATIONS
from m1nd.ingest.extract import extract_many
from m1nd.ingest.gitdata import GitData, read_git
from m1nd.ingest.resolve import GraphParts, resolve
from m1nd.ingest.walker import WalkedFile, WalkResult, read_text, walk

log = logging.getLogger(__name__)


def build_graph_parts(
    root: Path | str,
    *,
    namespace: str | None = None,
    git_window_days: int = GIT_WINDOW_DAYS,
    max_commits: int = 5000,
    workers: int | None = None,
    **walk_opts: Any,
) -> tuple[GraphParts, WalkResult, GitData, dict[str, Any]]:
    """Run walk → read → extract → git → resolve on ``root`` without any cache.

    ``walk_opts`` are passed to :func:`~m1nd.ingest.walker.walk` (``include_dotfiles``, ``dotfile_patterns``,
    ``exclude``, ``max_file_bytes``). Returns ``(parts, walk_result, git_data, stats)``; ``stats`` holds counts
    (files, parse errors, languages, nodes / edges per relation) and seconds per phase.
    """
    root = Path(root)
    stats: dict[str, Any] = {"seconds": {}}
    sec = stats["seconds"]
    t0 = time.perf_counter()
    wr = walk(root, **walk_opts)
    sec["walk"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    items: list[tuple[str, bytes, str]] = []
    kept: list[WalkedFile] = []
    for wf in wr.files:
        try:
            got = read_text(wf.abspath)
        except OSError as e:
            wr.warnings.append(f"cannot read {wf.relpath}: {e.strerror or e}")
            continue
        if got is None:
            wr.skipped["binary"] += 1
            continue
        items.append((wf.relpath, got[0], wf.lang))
        kept.append(wf)
    sec["read"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    blobs = extract_many(items, workers)
    sec["extract"] = time.perf_counter() - t0
    extracts = {wf.relpath: b for wf, b in zip(kept, blobs)}
    mtimes = {wf.relpath: wf.mtime_ns for wf in kept}

    t0 = time.perf_counter()
    git = read_git(root, window_days=git_window_days, max_commits=max_commits)
    sec["git"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    parts = resolve(extracts, git=git, mtimes=mtimes, namespace=namespace)
    sec["resolve"] = time.perf_counter() - t0

    parse_errors = {rel: b["parse_error"] for rel, b in extracts.items() if b.get("parse_error")}
    languages: dict[str, int] = {}
    for b in extracts.values():  # the extractor's word: a ``.h`` file is C or C++ by its text
        lang = b.get("lang") or "other"
        languages[lang] = languages.get(lang, 0) + 1
    by_rel: dict[str, int] = {r.name: 0 for r in RELATIONS}
    for e in parts.edges:
        by_rel[RELATIONS[e.relation].name] += 1
    by_kind: dict[str, int] = {}
    for n in parts.nodes:
        k = KIND_NAMES[n.kind]
        by_kind[k] = by_kind.get(k, 0) + 1
    stats.update(
        {
            "files": len(kept),
            "parse_errors": parse_errors,
            "languages": dict(sorted(languages.items())),
            "nodes": len(parts.nodes),
            "edges": len(parts.edges),
            "nodes_by_kind": by_kind,
            "edges_by_relation": by_rel,
            "unresolved_refs": parts.unresolved_refs,
            "ambiguous_refs": parts.ambiguous_refs,
            "skipped": dict(wr.skipped, parse_error=len(parse_errors)),
            "git": {
                "available": git.available,
                "reason": git.reason,
                "commits_read": git.commits_read,
                "co_change_edges": by_rel["co_changes"],
            },
        }
    )
    return parts, wr, git, stats


__all__ = ["build_graph_parts", "extract_many"]
