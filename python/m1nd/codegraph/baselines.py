"""Baselines of the graph and its learned weights, and ``drift`` against them (learning.md §5).

A baseline is a compact snapshot stored in ``graph.db``: counts, both generation counters, the sorted external ids
(``nodes_blob``), the learned weights that differ from ``w0`` (``weights_blob``: sorted 12-byte records
``blake2b-64(src \\0 dst \\0 relation) ‖ float32 w``, little-endian) and the file hashes (``files_blob``, used by
``diverge``). ``m1nd serve`` records a ``server_start`` baseline once per process (:func:`record_server_start`);
``persist action="baseline"`` records ``manual`` ones; every ingest that changes the graph records an ``ingest`` one
of the graph as the ingest found it (:func:`record_before_ingest`), so that a process without a baseline of its
own — a one-shot CLI call — drifts from the state before the latest ingest or server start, whichever is newer.
The newest 20 of each kind are kept.

``drift`` compares the current in-memory graph (including this process's unflushed learning) with a baseline.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import time
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.graph.model import Graph, edge_label, relation_name
from m1nd.timeutil import now_ms
from m1nd.codegraph.results import DriftResult, WeightDrift, WeightDriftSummary
from m1nd.defaults import DRIFT_MAX_LIST, DRIFT_TOP_N

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

KEEP_PER_KIND = 20
KINDS = ("server_start", "manual", "ingest")
RECORD = struct.Struct("<8sf")
_DIGITS = re.compile(r"^-?\d+$")
SINCE_ERROR = 'since must be "last_session", "this_session", an ISO-8601 time or epoch milliseconds'
NO_BASELINE = 'no baseline yet; run m1nd serve once, or call persist with action="baseline"'


@dataclass
class Baseline:
    id: int
    kind: str
    created_ms: int
    pid: int
    graph_generation: int
    weights_generation: int
    node_count: int
    edge_count: int
    nodes_blob: bytes | None = None
    weights_blob: bytes | None = None
    files_blob: bytes | None = None

    def nodes(self) -> list[str]:
        if not self.nodes_blob:
            return []
        text = zlib.decompress(self.nodes_blob).decode("utf-8")
        return text.split("\n") if text else []

    def weights(self) -> dict[bytes, float]:
        if not self.weights_blob:
            return {}
        raw = zlib.decompress(self.weights_blob)
        return {d: float(w) for d, w in RECORD.iter_unpack(raw)}

    def files(self) -> dict[str, str]:
        """relpath -> content hash (for ``diverge``)."""
        if not self.files_blob:
            return {}
        out = {}
        for line in zlib.decompress(self.files_blob).decode("utf-8").split("\n"):
            if line:
                path, _, h = line.partition("\t")
                out[path] = h
        return out

    def header(self) -> dict[str, Any]:
        return {"kind": self.kind, "created_ms": self.created_ms, "graph_generation": self.graph_generation,
                "weights_generation": self.weights_generation}


# -- edge digests ------------------------------------------------------------------------------------------------
def edge_digest(src: str, dst: str, relation: str) -> bytes:
    return hashlib.blake2b(f"{src}\0{dst}\0{relation}".encode(), digest_size=8).digest()


def _digests(g: Graph, positions: np.ndarray) -> list[bytes]:
    src, dst = g.edge_endpoints()
    rel = g.engine.csr.relations
    ext = g.nodes.ext_id
    return [edge_digest(ext[int(src[p])], ext[int(dst[p])], relation_name(int(rel[p]))) for p in positions.tolist()]


def _digest_index(g: Graph) -> dict[bytes, int]:
    """digest -> forward edge position for every edge of this generation (computed once, cached on the graph)."""
    cached = g.extra.get("edge_digest_index")
    if cached is None:
        cached = dict(zip(_digests(g, np.arange(g.e, dtype=np.int64)), range(g.e)))
        g.extra["edge_digest_index"] = cached
    return cached


def _changed_positions(g: Graph) -> np.ndarray:
    w = g.engine.weights
    return np.nonzero(w != np.asarray(g.engine.csr.base_weights))[0]


# -- recording ---------------------------------------------------------------------------------------------------
def snapshot(cg: CodeGraph, kind: str) -> int:
    """Record a baseline of the current graph; returns its id. Keeps the newest 20 of ``kind``."""
    if kind not in KINDS:
        raise ValueError(kind)
    with cg.lock:
        g = cg.graph()
        nodes_blob = zlib.compress("\n".join(sorted(g.nodes.ext_id)).encode("utf-8"), 1)
        changed = _changed_positions(g)
        w = g.engine.weights
        recs = sorted(zip(_digests(g, changed), (float(w[p]) for p in changed.tolist())))
        weights_blob = zlib.compress(b"".join(RECORD.pack(d, x) for d, x in recs), 1)
        repo = cg.store.baselines
        with cg.store.db.write():
            files = repo.file_hashes()
            files_blob = zlib.compress("\n".join(f"{p}\t{h or ''}" for p, h in files).encode("utf-8"), 1)
            gen, wgen = cg.generations()
            bid = repo.insert(kind=kind, created_ms=now_ms(), pid=os.getpid(), graph_generation=gen,
                              weights_generation=wgen, node_count=g.n, edge_count=g.e, nodes_blob=nodes_blob,
                              weights_blob=weights_blob, files_blob=files_blob)
            repo.prune(kind, KEEP_PER_KIND)
    return int(bid)


def record_server_start(cg: CodeGraph) -> int:
    """Called once by ``m1nd serve`` (``Workspace.on_server_start``) after loading, before the first request."""
    bid = snapshot(cg, "server_start")
    cg.server_baseline_id = bid
    return bid


def record_manual(cg: CodeGraph) -> int:
    return snapshot(cg, "manual")


def record_before_ingest(cg: CodeGraph) -> int | None:
    """The graph as an ingest finds it (None when it is empty: nothing to drift from)."""
    with cg.lock:
        if cg.graph().n == 0:
            return None
        return snapshot(cg, "ingest")


def forget(cg: CodeGraph, baseline_id: int) -> None:
    """Drop a baseline that turned out to say nothing (an ingest that changed nothing)."""
    with cg.store.db.write():
        cg.store.baselines.delete(baseline_id)


# -- lookup ------------------------------------------------------------------------------------------------------
def _row(r: tuple[Any, ...]) -> Baseline:
    return Baseline(*[int(x) if i != 1 else x for i, x in enumerate(r)])


def _fetch(cg: CodeGraph, **where: Any) -> Baseline | None:
    """The newest baseline matching ``where`` (:meth:`m1nd.store.baselines_repo.BaselineRepo.newest`)."""
    r = cg.store.baselines.newest(**where)
    return _row(r) if r else None


def load_blobs(cg: CodeGraph, b: Baseline) -> Baseline:
    r = cg.store.baselines.blobs(b.id)
    if r:
        b.nodes_blob, b.weights_blob, b.files_blob = r
    return b


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{ms % 1000:03d}Z"


def parse_since(since: str) -> int | None:
    """``last_session``/``this_session`` → None; ISO-8601 or epoch ms → epoch ms; anything else → error."""
    s = since.strip()
    if s in ("last_session", "this_session"):
        return None
    if _DIGITS.match(s):
        return int(s)
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00") if s.endswith(("Z", "z")) else s)
    except ValueError:
        raise InvalidInputError(SINCE_ERROR, details={"argument": "since"}) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def select_baseline(cg: CodeGraph, since: str) -> tuple[Baseline, str | None]:
    """The baseline for a ``since`` value (learning.md §5) and an optional note saying how it was chosen."""
    when = parse_since(since)
    own_id = cg.server_baseline_id
    if when is not None:
        b = _fetch(cg, created_at_most=when)
        if b is None:
            oldest = cg.store.baselines.oldest_created_ms()
            if oldest is None:
                raise NotFoundError(NO_BASELINE, recover='call persist with action="baseline", or run m1nd serve')
            raise NotFoundError(f"no baseline at or before {iso(when)}; oldest is {iso(oldest)}",
                                recover="pass a later time, or since=\"last_session\"")
        return b, None
    if own_id is None:
        b = _fetch(cg, kinds=("server_start", "ingest"))
        if b is not None:
            return b, (f"this process has no baseline of its own; using the newest {b.kind} baseline"
                       + (" (the graph before the latest ingest)" if b.kind == "ingest" else ""))
        b = _fetch(cg, kinds=("manual",))
        if b is not None:
            return b, "no server_start baseline exists; using the newest manual baseline"
        raise NotFoundError(NO_BASELINE, recover='call persist with action="baseline", or run m1nd serve')
    own = _fetch(cg, baseline_id=own_id)
    if since.strip() == "last_session":
        started_ms = int(cg.started * 1000)
        b = _fetch(cg, kinds=("server_start",), exclude_id=own_id, created_before=started_ms)
        if b is not None:
            return b, None
        if own is not None:
            return own, "no baseline from a previous server start; using this session's own baseline"
    elif own is not None:
        return own, None
    b = _fetch(cg, kinds=("server_start",)) or _fetch(cg, kinds=("manual",))
    if b is None:
        raise NotFoundError(NO_BASELINE, recover='call persist with action="baseline", or run m1nd serve')
    return b, "this session's baseline was pruned; using the newest remaining baseline"


# -- drift -------------------------------------------------------------------------------------------------------
def drift(cg: CodeGraph, *, since: str = "last_session", include_weight_drift: bool = True,
          top_n: int = DRIFT_TOP_N, max_list: int = DRIFT_MAX_LIST) -> DriftResult:
    with cg.lock:
        g = cg.graph()
        base, note = select_baseline(cg, since)
        load_blobs(cg, base)
        then = base.nodes()
        then_set = set(then)
        now_ids = g.nodes.ext_id
        now_set = set(now_ids)
        new_nodes = sorted(now_set - then_set)
        removed = sorted(then_set - now_set)
        return DriftResult(
            since=since, baseline=base.header(), baseline_note=note, node_count_delta=g.n - base.node_count,
            edge_count_delta=g.e - base.edge_count, new_nodes=new_nodes[:max_list], removed_nodes=removed[:max_list],
            new_nodes_total=len(new_nodes), removed_nodes_total=len(removed),
            weights=_weight_drift(g, base, top_n) if include_weight_drift else None,
            learn_events_since=cg.shared.learning.events_since(base.created_ms),
            queries_processed=int(cg.queries_processed), uptime_seconds=round(time.time() - cg.started, 3))


def _weight_drift(g: Graph, base: Baseline, top_n: int) -> WeightDriftSummary:
    old = base.weights()
    w = g.engine.weights
    w0 = np.asarray(g.engine.csr.base_weights)
    changed = _changed_positions(g)
    drifts: dict[int, tuple[float, float]] = {}  # position -> (old, new)
    seen: set[bytes] = set()
    for d, p in zip(_digests(g, changed), changed.tolist()):
        seen.add(d)
        drifts[p] = (old.get(d, float(w0[p])), float(w[p]))
    missing = [d for d in old if d not in seen]  # learned at the baseline, back at w0 (or gone) now
    if missing:
        index = _digest_index(g)
        for d in missing:
            p = index.get(d)
            if p is not None:
                drifts[p] = (old[d], float(w[p]))
    rows = [(new - o, p, o, new) for p, (o, new) in drifts.items() if abs(new - o) > 1e-6]
    rows.sort(key=lambda r: (-abs(r[0]), r[1]))
    top = []
    for delta, p, o, new in rows[:top_n]:
        edge, s, t, rel = edge_label(g, p)
        top.append(WeightDrift(edge=edge, source=s, target=t, relation=rel, old=round(o, 4), new=round(new, 4),
                               delta=round(delta, 4)))
    return WeightDriftSummary(top_weight_drifts=top, weights_changed_total=len(rows),
                              strengthened_total=sum(1 for r in rows if r[0] > 0),
                              weakened_total=sum(1 for r in rows if r[0] < 0))


__all__ = ["Baseline", "drift", "edge_digest", "iso", "parse_since", "record_manual", "record_server_start",
           "select_baseline", "snapshot"]
