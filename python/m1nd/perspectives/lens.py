"""The lens of a perspective (perspectives.md §3): which dimensions, kinds, families and weights shape its routes.

A lens is validated once at ``perspective_start`` and stored in normalised form (every key present), so synthesis
never re-checks it. Unknown keys, kinds, families or dimensions are refused with ``invalid_argument`` naming the key
and the nearest valid value.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any

from m1nd.errors import InvalidInputError
from m1nd.graph.activation import DIMENSIONS
from m1nd.graph.schema import KINDS

#: Route families in tie-break order (perspectives.md §2).
FAMILIES: tuple[str, ...] = ("structural_neighbor", "causal_downstream", "causal_upstream", "semantic_affinity",
                             "co_change", "test_coverage", "configuration", "hub")
TERMS: tuple[str, ...] = ("local_activation", "path_coherence", "novelty", "anchor_relevance", "continuity")
ANCHORED_WEIGHTS = {"local_activation": 0.35, "path_coherence": 0.25, "novelty": 0.15, "anchor_relevance": 0.15,
                    "continuity": 0.10}
LOCAL_WEIGHTS = {"local_activation": 0.45, "path_coherence": 0.25, "novelty": 0.20, "anchor_relevance": 0.0,
                 "continuity": 0.10}
LENS_KEYS = ("dimensions", "node_kinds", "route_families", "ranking_weights", "top_k", "path_prefix", "include_tests")
DEFAULT_TOP_K = 12
_SHORT_FAMILY = {"structural_neighbor": "structural", "causal_downstream": "causal_down",
                 "causal_upstream": "causal_up", "semantic_affinity": "semantic", "co_change": "co_change",
                 "test_coverage": "tests", "configuration": "config", "hub": "hub"}


@dataclass
class Lens:
    dimensions: list[str] = field(default_factory=lambda: list(DIMENSIONS))
    node_kinds: list[str] = field(default_factory=list)
    route_families: list[str] = field(default_factory=lambda: list(FAMILIES))
    ranking_weights: dict[str, float] = field(default_factory=dict)
    top_k: int = DEFAULT_TOP_K
    path_prefix: str | None = None
    include_tests: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"dimensions": list(self.dimensions), "node_kinds": list(self.node_kinds),
                "route_families": list(self.route_families), "ranking_weights": dict(self.ranking_weights),
                "top_k": self.top_k, "path_prefix": self.path_prefix, "include_tests": self.include_tests}

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> Lens:
        return cls(**d) if d else cls()

    def weights(self, anchored: bool) -> dict[str, float]:
        """Weights of the five score terms for the effective mode (overrides renormalised to 1)."""
        w = dict(ANCHORED_WEIGHTS if anchored else LOCAL_WEIGHTS)
        if self.ranking_weights:
            w.update(self.ranking_weights)
            # Overrides are renormalised: the defaults fill the keys not overridden.
        if not anchored:
            w["anchor_relevance"] = 0.0
        total = sum(w.values())
        if total <= 0:
            w = dict(ANCHORED_WEIGHTS if anchored else LOCAL_WEIGHTS)
            total = 1.0
        return {k: w[k] / total for k in TERMS}

    def summary(self) -> str:
        dims = "all dimensions" if set(self.dimensions) == set(DIMENSIONS) else "+".join(self.dimensions)
        parts = [dims]
        parts.append(f"kinds {'|'.join(self.node_kinds)}" if self.node_kinds else "no type filter")
        if set(self.route_families) != set(FAMILIES):
            parts.append("families " + "|".join(self.route_families))
        if self.path_prefix:
            parts.append(f"under {self.path_prefix}")
        if not self.include_tests:
            parts.append("no tests")
        if self.ranking_weights:
            parts.append("custom weights")
        if self.top_k != DEFAULT_TOP_K:
            parts.append(f"top {self.top_k}")
        return ", ".join(parts)


def _bad(key: str, msg: str, options: tuple[str, ...] | list[str] = (), got: Any = None) -> InvalidInputError:
    hint = ""
    if options and isinstance(got, str):
        close = difflib.get_close_matches(got, list(options), n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
    return InvalidInputError(f"lens.{key}: {msg}{hint}", details={"argument": f"lens.{key}"},
                             recover=f"fix lens.{key}" + (f"; allowed: {', '.join(options)}" if options else ""))


def _names(raw: dict[str, Any], key: str, allowed: tuple[str, ...], *, allow_empty: bool) -> list[str]:
    v = raw[key]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _bad(key, "must be an array of strings", allowed)
    for x in v:
        if x not in allowed:
            raise _bad(key, f"unknown value '{x}'", allowed, x)
    if not v and not allow_empty:
        raise _bad(key, "must not be empty", allowed)
    out: list[str] = []
    for x in v:
        if x not in out:
            out.append(x)
    return out


def parse_lens(raw: dict[str, Any] | None) -> Lens:
    lens = Lens()
    if not raw:
        return lens
    for key in raw:
        if key not in LENS_KEYS:
            close = difflib.get_close_matches(key, LENS_KEYS, n=1, cutoff=0.5)
            did = f" (did you mean '{close[0]}'?)" if close else f"; valid keys: {', '.join(LENS_KEYS)}"
            raise InvalidInputError(f"unknown lens key '{key}'{did}", details={"argument": f"lens.{key}"})
    if "dimensions" in raw:
        lens.dimensions = _names(raw, "dimensions", DIMENSIONS, allow_empty=False)
    if "node_kinds" in raw:
        lens.node_kinds = _names(raw, "node_kinds", tuple(KINDS), allow_empty=True)
    if "route_families" in raw:
        lens.route_families = _names(raw, "route_families", FAMILIES, allow_empty=False)
    if "ranking_weights" in raw:
        rw = raw["ranking_weights"]
        if not isinstance(rw, dict):
            raise _bad("ranking_weights", "must be an object with some of " + ", ".join(TERMS))
        clean: dict[str, float] = {}
        for k, v in rw.items():
            if k not in TERMS:
                raise _bad(f"ranking_weights.{k}", "unknown weight", TERMS, k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise _bad(f"ranking_weights.{k}", f"must be a finite number ≥ 0 (got {v!r})")
            clean[k] = float(v)
        lens.ranking_weights = clean
    if "top_k" in raw:
        v = raw["top_k"]
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 50:
            raise _bad("top_k", f"must be an integer between 1 and 50 (got {v!r})")
        lens.top_k = v
    if "path_prefix" in raw:
        v = raw["path_prefix"]
        if v is not None and (not isinstance(v, str) or len(v) > 1000):
            raise _bad("path_prefix", "must be a relpath prefix string")
        lens.path_prefix = ((v.removeprefix("./")) or None) if isinstance(v, str) else None
    if "include_tests" in raw:
        v = raw["include_tests"]
        if not isinstance(v, bool):
            raise _bad("include_tests", f"must be true or false (got {v!r})")
        lens.include_tests = v
    return lens


def short_family(f: str) -> str:
    return _SHORT_FAMILY.get(f, f)
