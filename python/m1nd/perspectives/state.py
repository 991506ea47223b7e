"""Perspective state (perspectives.md §1): what is persisted, what is only cached in the process.

Persisted (compact JSON in ``graph.db`` table ``perspectives``): identity, query and seeds, mode, anchor, focus,
lens, the current route set and its version, the history stack of checkpoints, visited nodes, the query activation
(top 500 by external id), branch bookkeeping and timestamps. Everything is keyed by external ids, so a state
survives a re-ingest that renumbers nodes.

Cached only in the process (rebuilt on demand for the current graph generation): dense arrays of the query
activation, the anchor activation and the anchor hop distances, and the activation used by ``compare``.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from m1nd.perspectives.lens import Lens

HISTORY_MAX = 200
SEEN_MAX = 5000
QUERY_ACT_TOP = 500
ID_RE = re.compile(r"^persp_[a-z0-9]{1,16}_[0-9]{3,}$")
BRANCH_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$")


def agent_slug(agent_id: str) -> str:
    """``agent_id`` case-folded, characters outside ``[a-z0-9]`` removed, first 16 characters, ``agent`` if empty."""
    s = "".join(ch for ch in agent_id.casefold() if ch.isascii() and (ch.isdigit() or "a" <= ch <= "z"))
    return s[:16] or "agent"


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def pack_activation(gen: int, idx: np.ndarray, val: np.ndarray) -> dict[str, Any]:
    """A sparse activation for the JSON state: node indices and values as base64 of little-endian int32/float32
    (500 numbers as JSON text cost more to format than everything else in a state; bytes are exact and tiny)."""
    return {"gen": gen, "idx32": base64.b64encode(np.asarray(idx, "<i4").tobytes()).decode("ascii"),
            "val32": base64.b64encode(np.asarray(val, "<f4").tobytes()).decode("ascii")}


def unpack_activation(d: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(int64 indices, float32 values) of :func:`pack_activation`, or of the older ``idx``/``val`` number lists."""
    if "idx32" in d:
        return (np.frombuffer(base64.b64decode(d["idx32"]), "<i4").astype(np.int64),
                np.frombuffer(base64.b64decode(d["val32"]), "<f4").astype(np.float32))
    return np.asarray(d.get("idx") or [], np.int64), np.asarray(d.get("val") or [], np.float32)


@dataclass
class Perspective:
    perspective_id: str
    agent_id: str
    query: str
    seeds: list[list[Any]]  # [[ext id, relevance], ...] (≤ 24)
    mode: str  # "anchored" | "local"
    mode_effective: str
    anchor_node: str | None
    focus_node: str
    lens: Lens
    routes: list[dict[str, Any]]
    route_set_version: int
    cache_generation: int
    semantic_backend: str = "trigram"
    diagnostic: dict[str, Any] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    seen_targets: list[str] = field(default_factory=list)
    # query activation of the start query, top 500: pack_activation(graph generation, node indices, values)
    # (indices are only meaningful for that generation; a perspective on another generation is refreshed first)
    query_act: dict[str, Any] = field(default_factory=dict)
    follows: list[str] = field(default_factory=list)  # families of every follow, in order
    nav_event_count: int = 0
    branch_of: str | None = None
    branch_name: str | None = None
    tree_root: str | None = None
    branch_seq: int = 0  # branches made in this tree (kept on the root)
    lock_ids: list[str] = field(default_factory=list)
    refresh_version: int = 0  # version produced by the last refresh after a graph change
    created_ms: int = 0
    last_accessed_ms: int = 0
    # -- process-only caches (never serialised) --
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    _PERSISTED = ("perspective_id", "agent_id", "query", "seeds", "mode", "mode_effective", "anchor_node",
                  "focus_node", "routes", "route_set_version", "cache_generation", "semantic_backend", "diagnostic",
                  "history", "visited", "seen_targets", "query_act", "follows", "nav_event_count", "branch_of",
                  "branch_name", "tree_root", "branch_seq", "lock_ids", "refresh_version", "created_ms",
                  "last_accessed_ms")

    def to_json(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self._PERSISTED}
        d["lens"] = self.lens.to_json()
        return d

    _BULKY = ("routes", "query_act", "history")

    def encode(self) -> str:
        """Compact JSON of the persisted state.

        Route sets, checkpoints and the query activation are never mutated once built (a new synthesis makes a new
        list), so their encodings are cached by identity: saving after a follow only encodes what changed.
        """
        old: dict[int, tuple[Any, str]] = self.cache.get("json", {})
        new: dict[int, tuple[Any, str]] = {}

        def piece(obj: Any) -> str:
            hit = old.get(id(obj)) or new.get(id(obj))
            if hit is None or hit[0] is not obj:
                hit = (obj, dumps(obj))
            new[id(obj)] = hit
            return hit[1]

        small = {k: getattr(self, k) for k in self._PERSISTED if k not in self._BULKY}
        small["lens"] = self.lens.to_json()
        head = dumps(small)
        text = (head[:-1] + ',"routes":' + piece(self.routes) + ',"query_act":' + piece(self.query_act)
                + ',"history":[' + ",".join(piece(cp) for cp in self.history) + "]}")
        self.cache["json"] = new
        return text

    @classmethod
    def decode(cls, text: str) -> Perspective:
        d = json.loads(text)
        d["lens"] = Lens.from_json(d.get("lens"))
        known = set(cls._PERSISTED) | {"lens"}
        return cls(**{k: v for k, v in d.items() if k in known})

    def memory_bytes(self) -> int:
        """Length of the compact JSON encoding of the state (perspectives.md §6 list)."""
        return len(self.encode().encode("utf-8"))

    def clone(self, new_id: str) -> Perspective:
        d = copy.deepcopy(self.to_json())
        d["perspective_id"] = new_id
        d["lens"] = Lens.from_json(d["lens"])
        p = Perspective(**d)
        # caches describe the same graph and the same seeds/anchor: share the arrays (they are never mutated)
        p.cache = {k: v for k, v in self.cache.items() if k not in ("compare", "json")}
        return p

    # -- navigation bookkeeping ----------------------------------------------------------------------------------
    def checkpoint(self, route: dict[str, Any] | None) -> dict[str, Any]:
        return {"focus": self.focus_node, "routes": self.routes, "route_set_version": self.route_set_version,
                "mode_effective": self.mode_effective, "route_id": route["route_id"] if route else None,
                "family": route["family"] if route else None, "generation": self.cache_generation,
                "diagnostic": self.diagnostic}

    def push(self, cp: dict[str, Any]) -> None:
        self.history.append(cp)
        if len(self.history) > HISTORY_MAX:
            del self.history[: len(self.history) - HISTORY_MAX]

    def visit(self, ext: str) -> None:
        if ext not in self.visited:
            self.visited.append(ext)

    def remember_targets(self) -> None:
        seen = set(self.seen_targets)
        for r in self.routes:
            if r["target_node"] not in seen:
                self.seen_targets.append(r["target_node"])
                seen.add(r["target_node"])
        if len(self.seen_targets) > SEEN_MAX:
            del self.seen_targets[: len(self.seen_targets) - SEEN_MAX]

    @property
    def last_family(self) -> str | None:
        """Family of the last followed route still on the history stack (back undoes a follow)."""
        return self.history[-1]["family"] if self.history else None
