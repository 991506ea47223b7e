"""Query words and node ids: tokenising (identifier parts come from :mod:`m1nd.identifiers`), direct id hits, the
seed record, and the sparse-array helpers the graph layer shares (the packed strings live in
:mod:`m1nd.graph.strings`; re-exported here).

Relevance itself (which nodes a query's words reach, and how much) is the BM25F index of :mod:`m1nd.graph.lexicon`
and the rules of :mod:`m1nd.graph.ranking`; seed *selection* is ``activation.query_seeds``. What remains here is the
id side: an external id, ``file::relpath`` or a bare relpath in a query is a direct hit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from m1nd.graph.nodes import FILE, NodeTable
from m1nd.graph.strings import pack_strings, unpack_strings
from m1nd.identifiers import identifier_parts

STOPWORDS = frozenset([
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "is", "are", "be", "for", "with", "this",
    "that", "from", "into", "its", "own", "how", "what", "where", "which", "why", "does", "do", "it", "we",
    "codebase", "task", "validate", "using", "focus", "around",
])
_SPLIT = re.compile(r"[\s?!,;()\[\]{}<>\"']+")
_PARTS = re.compile(r"::|[_\-./:]")


def tokenize(query: str) -> list[str]:
    """Case-folded tokens: each raw word plus its identifier parts, stopwords and 1-char tokens dropped."""
    seen: dict[str, None] = {}
    for raw in _SPLIT.split(query):
        if not raw:
            continue
        for t in (raw.casefold(), *identifier_parts(raw)):
            t = t.strip(".:/-_")
            if len(t) >= 2 and t not in STOPWORDS:
                seen.setdefault(t, None)
    return list(seen)


def run_starts(a: np.ndarray) -> np.ndarray:
    """Boolean mask of the first element of every run of equal values (``np.r_`` costs ~10 µs a call)."""
    m = np.empty(len(a), bool)
    if len(a):
        m[0] = True
        np.not_equal(a[1:], a[:-1], out=m[1:])
    return m


def run_ends(a: np.ndarray) -> np.ndarray:
    """Boolean mask of the last element of every run of equal values."""
    m = np.empty(len(a), bool)
    if len(a):
        m[-1] = True
        np.not_equal(a[1:], a[:-1], out=m[:-1])
    return m


def lookup_sorted(keys: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``values[k]`` where ``keys[k] == at[i]`` (``keys`` ascending and unique), 0 elsewhere: a sparse vector read at
    given positions."""
    out = np.zeros(len(at), values.dtype)
    if len(keys) and len(at):
        k = np.minimum(np.searchsorted(keys, at), len(keys) - 1)
        hit = keys[k] == at
        out[hit] = values[k[hit]]
    return out


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """Sorted unique values by sort + diff: for a query's arrays (up to a few thousand values) 1.5–3x cheaper than
    ``np.unique`` / ``np.union1d``, whose numpy 2.x hash-table path has a fixed setup cost."""
    a = np.sort(a)
    return a[run_starts(a)]


@dataclass
class SeedIndex:
    """Id lookups of one NodeTable: external id → node, and the primary root's relpaths → file node (cached with the
    graph generation)."""

    n: int
    ext_ids: Sequence[str]
    file_rel: dict[str, int] = field(default_factory=dict)  # relpath -> file node (primary root)
    ext_index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.ext_index:
            self.ext_index = {e: i for i, e in enumerate(self.ext_ids)}

    def lookup(self, text: str) -> int | None:
        """External id, ``file::relpath`` or a bare relpath of the primary root → node index."""
        i = self.ext_index.get(text)
        if i is None:
            i = self.file_rel.get(text.removeprefix("./"))
        return i

    @property
    def ext_lookup(self) -> SeedIndex:  # mapping-style access: g.seeds.ext_lookup.get(x)
        return self

    def get(self, text: str, default: int | None = None) -> int | None:
        i = self.lookup(text)
        return default if i is None else i

    @classmethod
    def build(cls, t: NodeTable) -> SeedIndex:
        file_rel = {}
        for i in np.nonzero(t.kind == FILE)[0].tolist():
            e = t.ext_id[i]
            if e.startswith("file::"):
                file_rel[e[6:]] = i
        return cls(n=t.n, ext_ids=t.ext_id, file_rel=file_rel)

    def arrays(self) -> dict[str, np.ndarray]:
        rel = list(self.file_rel)
        return {"n": np.asarray([self.n]), "file_rel_keys": pack_strings(rel),
                "file_rel_keys__count": np.asarray([len(rel)]),
                "file_rel_vals": np.asarray([self.file_rel[r] for r in rel], np.int32)}

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray], ext_ids: Sequence[str],
                    ext_index: dict[str, int] | None = None) -> SeedIndex:
        keys = unpack_strings(a["file_rel_keys"], int(a["file_rel_keys__count"][0]))
        return cls(n=int(a["n"][0]), ext_ids=ext_ids, file_rel=dict(zip(keys, a["file_rel_vals"].tolist())),
                   ext_index=ext_index or {})


@dataclass
class Seeds:
    nodes: np.ndarray  # int32
    scores: np.ndarray  # float32
    via: list[str]
    lex: np.ndarray  # float32[N] lexical score of every node (for temporal D3 and diagnostics)
    tokens: list[str]
    direct: list[int]
    semantic: np.ndarray | None = None  # sem(n) used for these seeds (resolved when a callable was given)
    #: the history field's file scores (ascending file nodes, values in (0, 1] after priors), fused per file
    history: tuple[np.ndarray, np.ndarray] | None = None


_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|'([^']+)'")


def direct_hits(index: SeedIndex, query: str) -> list[int]:
    q = query.strip()
    hits: list[int] = []
    for cand in [q, *(a or b or c for a, b, c in _QUOTED.findall(q))]:
        cand = cand.strip()
        i = index.ext_lookup.get(cand)
        if i is None and cand.startswith("./"):
            i = index.ext_lookup.get(cand[2:])
        if i is not None and i not in hits:
            hits.append(i)
    return hits


SEED_POOL = 256  # candidates sorted in full before the per-file cap; more only when the cap skips too many


def capped(table: NodeTable, ordered: list[int], max_seeds: int, per_file: int) -> tuple[list[int], bool]:
    """The first ``max_seeds`` of ``ordered`` with at most ``per_file`` per file; True when all were read."""
    chosen: list[int] = []
    per: dict[int, int] = {}
    file_of = table.file_of
    for i in ordered:
        f = int(file_of[i])
        f = f if f >= 0 else i
        c = per.get(f, 0)
        if c >= per_file:
            continue
        per[f] = c + 1
        chosen.append(i)
        if len(chosen) >= max_seeds:
            return chosen, False
    return chosen, True
