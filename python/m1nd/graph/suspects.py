"""``trace``: map the frames of a stack trace to graph nodes by file and line, then rank suspects by spreading
activation from them (issue 15 item 6).

A frame's path is matched to an ingested file by the longest common suffix of path components (runtimes print
absolute paths, paths relative to another directory, or Java's package path), and its line to the innermost
definition of that file whose line range contains it (the file itself when none does). Innermost frames seed with
more energy; the nodes the spread reaches are ranked with the frames' own nodes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import numpy as np

from m1nd.defaults import DECAY, TRACE_MAX_HOPS, TRACE_TOP_K
from m1nd.graph.model import RHO, STRUCTURAL_MASK, Graph
from m1nd.graph.nodes import DIR, FILE
from m1nd.graph.results import Suspect, TraceResult

FRAME_DECAY = 0.85  # seed energy of each frame further out from the innermost mapped one
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://+[^/]*", re.I)


def _components(path: str) -> list[str]:
    p = _SCHEME.sub("", path.strip()).replace("\\", "/")
    p = p.split("?", 1)[0]
    return [c for c in p.split("/") if c not in ("", ".")]


class FileIndex:
    """Ingested files by base name, for suffix matching (cached per graph generation in ``Graph.extra``)."""

    def __init__(self, g: Graph) -> None:
        t = g.nodes
        self.by_name: dict[str, list[tuple[list[str], int]]] = defaultdict(list)
        self.members: dict[int, list[int]] = defaultdict(list)
        for i in np.nonzero(t.kind == FILE)[0].tolist():
            parts = _components(t.source_path[i])
            if parts:
                self.by_name[parts[-1]].append((parts, i))
        for i in np.nonzero((t.file_of >= 0) & (t.kind != DIR) & (t.kind != FILE))[0].tolist():
            self.members[int(t.file_of[i])].append(i)

    def file_for(self, path: str) -> tuple[int | None, str]:
        """(file node, "") or (None, why not)."""
        parts = _components(path)
        if not parts:
            return None, "no file in the frame"
        best: list[int] = []
        best_key = (0, False)
        for cand, i in self.by_name.get(parts[-1], []):
            n = 0
            while n < min(len(cand), len(parts)) and cand[-1 - n] == parts[-1 - n]:
                n += 1
            # More matching components first; at a tie, a file whose whole relative path matched (the frame's path
            # is <somewhere>/<relpath>) beats one that matched only its tail.
            key = (n, n == len(cand))
            if key > best_key:
                best, best_key = [i], key
            elif key == best_key:
                best.append(i)
        if not best:
            return None, "file not in the graph (a library, the runtime, or not ingested)"
        if len(best) > 1:
            return None, f"ambiguous: {len(best)} ingested files end with {'/'.join(parts[-best_key[0]:])}"
        return best[0], ""


def file_index(g: Graph) -> FileIndex:
    idx = g.extra.get("trace_files")
    if idx is None:
        idx = g.extra["trace_files"] = FileIndex(g)
    return idx


def node_at(g: Graph, idx: FileIndex, file_node: int, line: int | None) -> int:
    """The innermost definition of ``file_node`` containing ``line``; the file when none does (or no line)."""
    if line is None:
        return file_node
    t = g.nodes
    best, span = file_node, None
    for i in idx.members.get(file_node, []):
        lo, hi = int(t.line_start[i]), int(t.line_end[i])
        if lo <= line <= hi and (span is None or hi - lo < span):
            best, span = i, hi - lo
    return best


def suspects(g: Graph, frames: list[dict[str, Any]], *, top_k: int = TRACE_TOP_K,
             max_hops: int = TRACE_MAX_HOPS) -> TraceResult:
    """``frames``: innermost first, each with ``path``, ``line``, ``function``, ``language``, ``text``."""
    idx = file_index(g)
    t = g.nodes
    mapped: list[dict[str, Any]] = []
    unmapped: list[dict[str, Any]] = []
    seed_energy: dict[int, float] = {}
    frames_of: dict[int, list[int]] = defaultdict(list)
    k = 0
    for pos, f in enumerate(frames):
        file_node, reason = idx.file_for(f["path"]) if f["path"] else (None, "no file in the frame")
        if file_node is None:
            unmapped.append({**f, "frame": pos, "reason": reason})
            continue
        node = node_at(g, idx, file_node, f["line"])
        mapped.append({**f, "frame": pos, "node_id": t.ext_id[node], "label": t.label[node],
                       "kind": t.kind_name(node)})
        seed_energy[node] = max(seed_energy.get(node, 0.0), FRAME_DECAY ** k)
        frames_of[node].append(pos)
        k += 1
    if not seed_energy:
        return TraceResult(frames_total=len(frames), mapped=mapped, unmapped=unmapped, suspects=[])
    seeds = np.array(sorted(seed_energy), dtype=np.int32)
    amps = np.array([seed_energy[int(s)] for s in seeds], dtype=np.float32)
    nodes, act, hops = g.engine.spread_sparse(seeds, amps, decay=DECAY, threshold=0.01, max_hops=max_hops,
                                              mode="both", mask=STRUCTURAL_MASK, rev_mult=RHO)
    score = dict(zip(nodes.tolist(), act.tolist()))
    for s, energy in seed_energy.items():
        score[s] = max(score.get(s, 0.0), energy)
    # Directories and files the spread merely passes through are not suspects; code units are.
    keep = [i for i in score if t.kind[i] != DIR and (t.kind[i] != FILE or i in seed_energy)]
    keep.sort(key=lambda i: (-score[i], i not in seed_energy, t.ext_id[i]))
    hop_of = dict(zip(nodes.tolist(), hops.tolist()))
    return TraceResult(frames_total=len(frames), mapped=mapped, unmapped=unmapped, suspects=[
        Suspect(node_id=t.ext_id[i], label=t.label[i], kind=t.kind_name(i), source_path=t.source_path[i],
                line_start=int(t.line_start[i]), line_end=int(t.line_end[i]), score=round(float(score[i]), 5),
                in_trace=i in seed_energy, frames=frames_of.get(i, []),
                hops_from_trace=0 if i in seed_energy else int(hop_of.get(i, -1)))
        for i in keep[:top_k]])
