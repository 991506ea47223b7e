"""Query → seed nodes (spec activation.md §1): tokenising, per-token match rules, aggregation, selection.

Everything is precomputed into indexes keyed by *unique* labels and paths, so a query costs a handful of dict
lookups, one C-level substring scan over the joined labels and a few numpy passes over N, never a Python loop over
nodes. Scores per token are dense float32 arrays (N is at most a few hundred thousand).
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from m1nd.graph.engine import PostingLists
from m1nd.graph.nodes import DIR, FILE, KIND_CODE, NodeTable
from m1nd.lru import LRU

STOPWORDS = frozenset(["a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "is", "are", "be", "for", "with", "this", "that", "from", "into", "its", "own", "how", "what", "where", "which", "why", "does", "do", "it", "we", "codebase", "task", "validate", "using", "focus", "around"])
_SPLIT = re.compile(r"[\s?!,;()\[\]{}<>\"']+")
_PARTS = re.compile(r"::|[_\-./:]")
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOCS = re.compile(r"(^|/)(docs|examples|vendor|third_party)/")

TOKEN_CACHE_TOKENS = 4096
TOKEN_CACHE_ENTRIES = 1_000_000  # matched nodes over all cached tokens (8 bytes each)
GENERATED = re.compile(r"(_pb2\.py$|\.min\.js$|(^|/)generated/|\.gen\.)")
SYMBOL_KINDS = {KIND_CODE[k] for k in ("fn", "class", "struct", "interface", "trait", "enum", "type")}
_KIND_BIAS = {**{k: 0.04 for k in SYMBOL_KINDS}, FILE: 0.02, KIND_CODE["impl"]: 0.01, KIND_CODE["mod"]: 0.01,
              KIND_CODE["section"]: -0.02, DIR: -0.05}


@functools.lru_cache(maxsize=1 << 17)
def _parts_cached(word: str) -> tuple[str, ...]:
    return tuple(_identifier_parts(word))


def identifier_parts(word: str) -> list[str]:
    """``parseHTTPResponse_v2`` → ``parse http response v 2``: separators, camel humps, letter↔digit."""
    return list(_parts_cached(word))


def _identifier_parts(word: str) -> list[str]:
    out: list[str] = []
    for piece in _PARTS.split(word):
        if piece:
            out.extend(h.lower() for h in _HUMPS.findall(piece))
    return out


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


def pack_strings(items: Sequence[str]) -> np.ndarray:
    """A list of strings as one uint8 array (NUL-separated UTF-8) for the array cache."""
    if isinstance(items, LazyStrings):
        return items.packed()
    return np.frombuffer("\0".join(items).encode("utf-8", "surrogatepass"), np.uint8).copy()


def unpack_strings(arr: np.ndarray, count: int) -> list[str]:
    if count == 0:
        return []
    return arr.tobytes().decode("utf-8", "surrogatepass").split("\0")


class LazyStrings(Sequence[str]):
    """A packed string column that is split into a list only when first read.

    Start-up maps the cache and never touches columns such as ``doc`` or ``signature`` unless a tool needs them.
    """

    __slots__ = ("_count", "_items", "_packed")

    def __init__(self, packed: np.ndarray, count: int) -> None:
        self._packed = packed
        self._count = count
        self._items: list[str] | None = None

    def _list(self) -> list[str]:
        if self._items is None:
            self._items = unpack_strings(self._packed, self._count)
        return self._items

    def __getitem__(self, i):
        return self._list()[i]

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        return iter(self._list())

    def packed(self) -> np.ndarray:
        return self._packed


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


class Ragged:
    """A list of int32 arrays stored flat (values + offsets): cheap to cache, cheap to slice."""

    __slots__ = ("flat", "offsets")

    def __init__(self, flat: np.ndarray, offsets: np.ndarray) -> None:
        self.flat = flat
        self.offsets = offsets

    @classmethod
    def from_lists(cls, lists: list[list[int]]) -> Ragged:
        offsets = np.zeros(len(lists) + 1, np.int64)
        np.cumsum([len(x) for x in lists], out=offsets[1:])
        flat = np.fromiter((v for x in lists for v in x), np.int32, count=int(offsets[-1]))
        return cls(flat, offsets)

    def __getitem__(self, k: int) -> np.ndarray:
        return self.flat[self.offsets[k]:self.offsets[k + 1]]

    def expand(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All values of the given keys, concatenated, and the count per key (vectorised)."""
        starts = self.offsets[keys]
        counts = self.offsets[keys + 1] - starts
        total = int(counts.sum())
        if total == 0:
            return np.zeros(0, np.int32), counts
        # positions = starts[k] + 0..counts[k]-1 for each key, without a Python loop
        before = np.zeros(len(counts), np.int64)  # values emitted before each key's run
        np.cumsum(counts[:-1], out=before[1:])
        base = np.repeat(starts - before, counts)
        return self.flat[base + np.arange(total)], counts

    def __len__(self) -> int:
        return len(self.offsets) - 1


def _ragged_from_pairs(keys: np.ndarray, values: np.ndarray, n_keys: int) -> Ragged:
    """Group ``values`` by ``keys`` (ids 0..n_keys-1) into a Ragged, values kept in input order per key."""
    order = np.argsort(keys, kind="stable")
    offsets = np.zeros(n_keys + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n_keys), out=offsets[1:])
    return Ragged(np.ascontiguousarray(values[order], np.int32), offsets)


def _group_ragged(keys: list[str]) -> tuple[list[str], Ragged]:
    """Unique keys in first-seen order and, per key, the indices where it occurs."""
    ids: dict[str, int] = {}
    out = np.empty(len(keys), np.int32)
    for i, k in enumerate(keys):
        j = ids.get(k)
        if j is None:
            j = ids[k] = len(ids)
        out[i] = j
    return list(ids), _ragged_from_pairs(out, np.arange(len(keys), dtype=np.int32), len(ids))


@dataclass
class SeedIndex:
    """Indexes over one NodeTable. Built once per graph generation, cached on disk as flat arrays."""

    n: int
    labels: list[str]  # unique case-folded labels
    label_nodes: Ragged  # per unique label: node indices
    parts: list[str]  # identifier parts of labels
    part_labels: Ragged  # per part: unique label ids
    sorted_label_ids: np.ndarray  # int32, label ids in label order (prefix search)
    paths: list[str]  # unique case-folded source paths
    path_nodes: Ragged
    segments: list[str]  # dir names and file stems
    segment_paths: Ragged
    words: list[str]  # whole words of signature/doc
    word_nodes: Ragged
    trigram_keys: np.ndarray  # int64 sorted unique trigram codes over labels
    trigram_labels: Ragged  # per trigram: unique label ids
    label_trigram_count: np.ndarray  # float32 per unique label
    path_bias: np.ndarray  # float32[N] without a test token
    path_bias_test: np.ndarray  # float32[N] with a test token
    kind_bias: np.ndarray
    ext_ids: list[str]
    file_rel: dict[str, int] = field(default_factory=dict)  # relpath -> file node (primary root)
    # derived at load (not cached): dict lookups and the joined label string
    label_id: dict[str, int] = field(default_factory=dict)
    part_id: dict[str, int] = field(default_factory=dict)
    segment_id: dict[str, int] = field(default_factory=dict)
    word_id: dict[str, int] = field(default_factory=dict)
    sorted_labels: list[str] = field(default_factory=list)
    joined_labels: str = ""
    label_offsets: list[int] = field(default_factory=list)
    ext_index: dict[str, int] = field(default_factory=dict)
    _label_of: np.ndarray | None = None
    _path_of: np.ndarray | None = None
    _joined_paths: str = ""
    _path_offsets: np.ndarray | None = None
    _path_offsets_list: list[int] = field(default_factory=list)
    _trigram_postings: PostingLists | None = field(default=None, repr=False, compare=False)
    # per-token matches of this generation (agents reuse their vocabulary: a repeated token costs a lookup)
    _token_cache: LRU[str, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=lambda: LRU(TOKEN_CACHE_TOKENS, max_weight=TOKEN_CACHE_ENTRIES, weigh=lambda v: len(v[0])),
        repr=False, compare=False)

    def __post_init__(self) -> None:
        self.label_id = {lab: k for k, lab in enumerate(self.labels)}
        self.part_id = {p: k for k, p in enumerate(self.parts)}
        self.segment_id = {p: k for k, p in enumerate(self.segments)}
        self.word_id = {w: k for k, w in enumerate(self.words)}
        self.sorted_labels = [self.labels[k] for k in self.sorted_label_ids.tolist()]
        self.joined_labels = "\n".join(self.labels)
        offs = np.zeros(len(self.labels), np.int64)
        if self.labels:
            np.cumsum(np.fromiter((len(x) + 1 for x in self.labels[:-1]), np.int64, count=len(self.labels) - 1),
                      out=offs[1:])
        self.label_offsets = offs.tolist()
        if not self.ext_index:
            self.ext_index = {e: i for i, e in enumerate(self.ext_ids)}

    # -- id lookups ----------------------------------------------------------------------------------------------
    def lookup(self, text: str) -> int | None:
        """External id, ``file::relpath`` or a bare relpath of the primary root → node index."""
        i = self.ext_index.get(text)
        if i is None:
            i = self.file_rel.get(text.removeprefix("./"))
        return i

    @property
    def ext_lookup(self) -> SeedIndex:  # backwards-compatible mapping-style access: g.seeds.ext_lookup.get(x)
        return self

    def get(self, text: str, default: int | None = None) -> int | None:
        i = self.lookup(text)
        return default if i is None else i

    @classmethod
    def build(cls, t: NodeTable) -> SeedIndex:
        n = t.n
        labels, label_nodes = _group_ragged([x.casefold() for x in t.label])
        paths, path_nodes = _group_ragged([x.casefold() for x in t.source_path])
        # whole words of signature + doc: (word id, node) pairs in compact arrays, grouped by one argsort
        word_id: dict[str, int] = {}
        w_ids = array("i")
        w_nodes = array("i")
        find = _WORD.findall
        for i in range(n):
            sig, doc = t.signature[i], t.doc[i]
            if sig or doc:
                for w in set(find(f"{sig} {doc}".casefold())):
                    k = word_id.get(w)
                    if k is None:
                        k = word_id[w] = len(word_id)
                    w_ids.append(k)
                    w_nodes.append(i)
        word_nodes = _ragged_from_pairs(np.frombuffer(w_ids, np.int32), np.frombuffer(w_nodes, np.int32),
                                        len(word_id))
        # identifier parts of labels (from the original spelling, so camel humps survive)
        part_id: dict[str, int] = {}
        p_ids = array("i")
        p_labels = array("i")
        first_of_label = label_nodes.flat[label_nodes.offsets[:-1]].tolist() if len(labels) else []
        for k, lab in enumerate(labels):
            for p in set(identifier_parts(t.label[first_of_label[k]])) | set(identifier_parts(lab)):
                j = part_id.get(p)
                if j is None:
                    j = part_id[p] = len(part_id)
                p_ids.append(j)
                p_labels.append(k)
        part_labels = _ragged_from_pairs(np.frombuffer(p_ids, np.int32), np.frombuffer(p_labels, np.int32),
                                         len(part_id))
        # label trigrams, vectorised like the semantic index
        from m1nd.graph.semantic import trigram_codes

        owner, code = trigram_codes(labels)
        key = np.sort(code * max(len(labels), 1) + owner)
        key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
        u_code, u_owner = key // max(len(labels), 1), (key % max(len(labels), 1)).astype(np.int32)
        tri_count = np.bincount(u_owner, minlength=len(labels)).astype(np.float32)
        g_starts = np.flatnonzero(np.r_[True, u_code[1:] != u_code[:-1]]) if len(u_code) else np.zeros(0, np.int64)
        tri_keys = u_code[g_starts]
        tri_off = np.r_[g_starts, len(u_code)].astype(np.int64)
        # path segments
        seg_id: dict[str, int] = {}
        s_ids = array("i")
        s_paths = array("i")
        for k, p in enumerate(paths):
            segs = p.split("/")
            stem = segs[-1].rsplit(".", 1)[0] if "." in segs[-1] else segs[-1]
            for sgm in {*segs, stem}:
                if sgm:
                    j = seg_id.get(sgm)
                    if j is None:
                        j = seg_id[sgm] = len(seg_id)
                    s_ids.append(j)
                    s_paths.append(k)
        segment_paths = _ragged_from_pairs(np.frombuffer(s_ids, np.int32), np.frombuffer(s_paths, np.int32),
                                           len(seg_id))
        # biases per unique path, then spread to nodes (activation.md §1 table)
        pb_path = np.zeros(len(paths), np.float32)
        for k, p in enumerate(paths):
            b = 0.0
            if p.startswith(("src/", "lib/")) or "/src/" in p or "/lib/" in p:
                b += 0.05
            if _DOCS.search(p):
                b -= 0.10
            if GENERATED.search(p):
                b -= 0.15
            pb_path[k] = b
        path_of = np.zeros(n, np.int64)
        for k in range(len(paths)):
            path_of[path_nodes[k]] = k
        base = pb_path[path_of]
        test = t.is_test.astype(np.float32) * 0.05
        kind_table = np.zeros(256, np.float32)
        for code_, val in _KIND_BIAS.items():
            kind_table[code_] = val
        file_rel = {}
        for i in np.nonzero(t.kind == FILE)[0].tolist():
            e = t.ext_id[i]
            if e.startswith("file::"):
                file_rel[e[6:]] = i
        sorted_ids = np.asarray(sorted(range(len(labels)), key=labels.__getitem__), np.int32)
        return cls(
            n=n, labels=labels, label_nodes=label_nodes, parts=list(part_id), part_labels=part_labels,
            sorted_label_ids=sorted_ids, paths=paths, path_nodes=path_nodes, segments=list(seg_id),
            segment_paths=segment_paths, words=list(word_id), word_nodes=word_nodes, trigram_keys=tri_keys,
            trigram_labels=Ragged(u_owner, tri_off), label_trigram_count=tri_count,
            path_bias=np.clip(base - test, -0.15, 0.10).astype(np.float32),
            path_bias_test=np.clip(base + test, -0.15, 0.10).astype(np.float32),
            kind_bias=kind_table[t.kind], ext_ids=t.ext_id, file_rel=file_rel)

    # -- cache -----------------------------------------------------------------------------------------------------
    _STRINGS = ("labels", "parts", "paths", "segments", "words")
    _RAGGED = ("label_nodes", "part_labels", "path_nodes", "segment_paths", "word_nodes", "trigram_labels")
    _ARRAYS = ("sorted_label_ids", "trigram_keys", "label_trigram_count", "path_bias", "path_bias_test", "kind_bias")

    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {"n": np.asarray([self.n])}
        for k in self._STRINGS:
            out[k] = pack_strings(getattr(self, k))
            out[k + "__count"] = np.asarray([len(getattr(self, k))])
        for k in self._RAGGED:
            r = getattr(self, k)
            out[k + "__flat"], out[k + "__off"] = r.flat, r.offsets
        for k in self._ARRAYS:
            out[k] = getattr(self, k)
        rel = list(self.file_rel)
        out["file_rel_keys"] = pack_strings(rel)
        out["file_rel_keys__count"] = np.asarray([len(rel)])
        out["file_rel_vals"] = np.asarray([self.file_rel[r] for r in rel], np.int32)
        return out

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray], ext_ids: Sequence[str],
                    ext_index: dict[str, int] | None = None) -> SeedIndex:
        kw: dict = {"n": int(a["n"][0]), "ext_ids": ext_ids, "ext_index": ext_index or {}}
        for k in cls._STRINGS:
            kw[k] = unpack_strings(a[k], int(a[k + "__count"][0]))
        for k in cls._RAGGED:
            kw[k] = Ragged(a[k + "__flat"], a[k + "__off"])
        for k in cls._ARRAYS:
            kw[k] = a[k]
        keys = unpack_strings(a["file_rel_keys"], int(a["file_rel_keys__count"][0]))
        kw["file_rel"] = dict(zip(keys, a["file_rel_vals"].tolist()))
        return cls(**kw)

    # -- per-token matching ------------------------------------------------------------------------------------
    def _maps(self) -> tuple[np.ndarray, np.ndarray]:
        """node → unique label id, node → unique path id (derived from the Ragged groups, cached)."""
        if self._label_of is None:
            lab = np.empty(self.n, np.int32)
            lab[self.label_nodes.flat] = np.repeat(np.arange(len(self.labels), dtype=np.int32),
                                                   np.diff(self.label_nodes.offsets))
            pth = np.empty(self.n, np.int32)
            pth[self.path_nodes.flat] = np.repeat(np.arange(len(self.paths), dtype=np.int32),
                                                  np.diff(self.path_nodes.offsets))
            self._label_of, self._path_of = lab, pth
            self._joined_paths = "\n".join(self.paths)
            offs = np.zeros(len(self.paths), np.int64)
            if self.paths:
                np.cumsum([len(p) + 1 for p in self.paths[:-1]], out=offs[1:])
            self._path_offsets = offs
            self._path_offsets_list = offs.tolist()
        return self._label_of, self._path_of  # type: ignore[return-value]

    def _trigram_counts(self, t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        """Labels sharing trigrams with t, in one pass over the postings of t's padded trigrams (those of " t "; the
        interior ones, windows of t itself, are a subset): (label ids ascending, how many of t's padded trigrams
        each holds, how many of its interior ones, number of padded trigrams, number of interior trigrams)."""
        from m1nd.graph.semantic import _ALPHA, _LUT

        empty = np.zeros(0, np.int32)
        sym = _LUT[np.frombuffer(f" {t} ".encode("ascii", "replace"), np.uint8)]
        if len(sym) < 3:
            return empty, empty, empty, 0, 0
        windows = (sym[:-2] * (_ALPHA * _ALPHA) + sym[1:-1] * _ALPHA + sym[2:]).tolist()
        interior = set(windows[1:-1])  # without " t…" and "…t " (the windows touching the padding)
        codes = np.asarray(sorted(set(windows)), np.int64)  # a token has a handful: sets beat numpy calls here
        pos = np.searchsorted(self.trigram_keys, codes)
        ok = pos < len(self.trigram_keys)
        pos, codes_ok = pos[ok], codes[ok]
        hit = self.trigram_keys[pos] == codes_ok
        pos, codes_ok = pos[hit], codes_ok[hit]
        if not len(pos):
            return empty, empty, empty, len(codes), len(interior)
        if self._trigram_postings is None:
            tl = self.trigram_labels
            self._trigram_postings = PostingLists(tl.flat, tl.offsets, len(self.labels))
        inner = np.asarray([c in interior for c in codes_ok.tolist()], np.float32)
        ids, n_inner, counts = self._trigram_postings.accumulate(pos, inner)
        return ids, counts, n_inner.astype(np.int64), len(codes), len(interior)

    def label_matches(self, t: str) -> tuple[np.ndarray, np.ndarray]:
        """Best label-rule score of token t for the labels it matches: (unique label ids ascending, float32)."""
        ls = np.zeros(len(self.labels), np.float32)  # a scratch map: only the touched pages cost anything
        hit: list[np.ndarray] = []
        # trigram similarity with labels (0.7·σ when σ > 0.3): the weakest rule, applied first
        ids, counts, n_inner, n_codes, n_interior = self._trigram_counts(t)
        if len(ids):
            sigma = counts / np.sqrt(n_codes * self.label_trigram_count[ids])
            keep = sigma > 0.3
            ls[ids[keep]] = (0.7 * sigma[keep]).astype(np.float32)
            hit.append(ids[keep])
        if len(t) >= 3:
            # t is a substring of a label: labels holding all of t's interior trigrams, then verified
            if len(ids) and n_inner.max() >= n_interior:
                cand = ids[n_inner >= n_interior]
                if len(t) > 3 or not t.isascii():
                    labels = self.labels
                    cand = np.asarray([k for k in cand.tolist() if t in labels[k]], np.int64)
                if len(cand):
                    ls[cand] = np.maximum(ls[cand], 0.80)
                    hit.append(cand)
            elif not t.isascii():
                joined, offs = self.joined_labels, self.label_offsets
                found = []
                pos = joined.find(t)
                while pos != -1:
                    k = bisect.bisect_right(offs, pos) - 1
                    found.append(k)
                    pos = joined.find(t, offs[k + 1] if k + 1 < len(offs) else len(joined))
                if found:
                    f = np.asarray(found, np.int64)
                    ls[f] = np.maximum(ls[f], 0.80)
                    hit.append(f)
            # a label is a substring of t (≥ 3 chars); t starts with the label → 0.90
            inner = []
            for a in range(len(t)):
                for b in range(a + 3, len(t) + 1):
                    k = self.label_id.get(t[a:b])
                    if k is not None:
                        ls[k] = max(ls[k], 0.90 if a == 0 else 0.80)
                        inner.append(k)
            if inner:
                hit.append(np.asarray(inner, np.int64))
            # the label starts with t: a contiguous range of the sorted labels
            i = bisect.bisect_left(self.sorted_labels, t)
            j = bisect.bisect_left(self.sorted_labels, t + "\U0010ffff", lo=i)
            if j > i:
                idx = self.sorted_label_ids[i:j]
                ls[idx] = np.maximum(ls[idx], 0.90)
                hit.append(idx)
        pk = self.part_id.get(t)
        if pk is not None:
            idx = self.part_labels[pk]
            ls[idx] = np.maximum(ls[idx], 0.92)
            hit.append(idx)
        k = self.label_id.get(t)
        if k is not None:
            ls[k] = 1.0
            hit.append(np.asarray([k], np.int64))
        if not hit:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        ids = sorted_unique(np.concatenate(hit).astype(np.int64))
        return ids, ls[ids]

    def label_scores(self, t: str) -> np.ndarray:
        """Dense form of :meth:`label_matches` (float32[L])."""
        ls = np.zeros(len(self.labels), np.float32)
        ids, val = self.label_matches(t)
        ls[ids] = val
        return ls

    def path_matches(self, t: str) -> tuple[np.ndarray, np.ndarray]:
        """Best path-rule score of token t for the source paths it matches: (unique path ids ascending, float32)."""
        self._maps()
        found: dict[int, float] = {}
        if len(t) >= 4:
            joined, offs = self._joined_paths, self._path_offsets_list
            pos = joined.find(t)
            while pos != -1:
                k = bisect.bisect_right(offs, pos) - 1
                found[k] = 0.72
                pos = joined.find(t, offs[k + 1] if k + 1 < len(offs) else len(joined))
        sk = self.segment_id.get(t)
        if sk is not None:
            for k in self.segment_paths[sk].tolist():
                found[k] = 0.82
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        ids = np.fromiter(sorted(found), np.int64, count=len(found))
        return ids, np.fromiter((found[k] for k in ids.tolist()), np.float32, count=len(ids))

    def path_scores(self, t: str) -> np.ndarray:
        """Dense form of :meth:`path_matches` (float32[P])."""
        ps = np.zeros(len(self.paths), np.float32)
        ids, val = self.path_matches(t)
        ps[ids] = val
        return ps

    def drop_query_caches(self) -> None:
        self._token_cache.clear()

    def token_sparse(self, t: str) -> tuple[np.ndarray, np.ndarray]:
        """Non-zero m(t, ·) as (unique node indices int32, scores float32; read-only): labels and paths scored once
        each, then only the matching ones expanded to their nodes (a query touches thousands of nodes, not all of
        them). Cached per token for this index."""
        hit = self._token_cache.get(t)
        if hit is None:
            hit = self._token_matches(t)
            for a in hit:
                a.flags.writeable = False
            self._token_cache.put(t, hit)
        return hit

    def _token_matches(self, t: str) -> tuple[np.ndarray, np.ndarray]:
        parts_i: list[np.ndarray] = []
        parts_v: list[np.ndarray] = []
        for (ids, scores), groups in ((self.label_matches(t), self.label_nodes), (self.path_matches(t), self.path_nodes)):
            if len(ids):
                nodes, counts = groups.expand(ids)
                parts_i.append(nodes)
                parts_v.append(np.repeat(scores, counts))
        wk = self.word_id.get(t)
        if wk is not None:
            w = self.word_nodes[wk]
            parts_i.append(w)
            parts_v.append(np.full(len(w), 0.60, np.float32))
        if not parts_i:
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        idx = np.concatenate(parts_i)
        val = np.concatenate(parts_v).astype(np.float32)
        if len(parts_i) > 1:  # max per node: sort by (node, score) and keep each node's last entry
            order = np.lexsort((val, idx))
            idx, val = idx[order], val[order]
            last = run_ends(idx)
            idx, val = idx[last], val[last]
        return idx.astype(np.int32, copy=False), val

    def token_scores(self, t: str, scratch: np.ndarray) -> np.ndarray:
        """Dense m(t, ·) over all nodes (written into and returned as ``scratch``): label and path rules are
        scored once per unique label / path and gathered to nodes."""
        label_of, path_of = self._maps()
        m = scratch
        np.maximum(self.label_scores(t)[label_of], self.path_scores(t)[path_of], out=m)
        wk = self.word_id.get(t)
        if wk is not None:
            idx = self.word_nodes[wk]
            m[idx] = np.maximum(m[idx], 0.60)
        return m


@dataclass
class Seeds:
    nodes: np.ndarray  # int32
    scores: np.ndarray  # float32
    via: list[str]
    lex: np.ndarray  # float32[N] lexical score of every node (for temporal D3 and diagnostics)
    tokens: list[str]
    direct: list[int]
    semantic: np.ndarray | None = None  # sem(n) used for these seeds (resolved when a callable was given)


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


def lexical_sparse(index: SeedIndex, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """lex(n) (activation.md §1 aggregation) on the nodes some token matched: (ascending nodes, scores; a score
    may be 0 where no token reached 0.5). Every other node scores 0."""
    k = len(tokens)
    if k == 0 or index.n == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.float32)
    per_token = [index.token_sparse(t) for t in tokens]
    cand = sorted_unique(np.concatenate([i for i, _ in per_token]))
    if not len(cand):
        return cand, np.zeros(0, np.float32)
    total = np.zeros(len(cand), np.float32)
    covered = np.zeros(len(cand), np.float32)
    best = np.zeros(len(cand), np.float32)
    exact = np.zeros(len(cand), np.int32)
    for idx, val in per_token:
        pos = np.searchsorted(cand, idx)
        total[pos] += val
        covered[pos] += val >= 0.5
        np.maximum.at(best, pos, val)
        exact[pos] += val >= 1.0
    testy = any(t in ("test", "tests", "spec") for t in tokens)
    bias = (index.path_bias_test if testy else index.path_bias)[cand] + index.kind_bias[cand]
    sub = np.clip(0.5 * total / k + 0.35 * covered / k + 0.15 * best + bias, 0.0, 1.0).astype(np.float32)
    sub[best < 0.5] = 0.0
    sub[exact == k] = 1.0
    return cand, sub


def lexical_scores(index: SeedIndex, tokens: list[str]) -> np.ndarray:
    """lex(n) for every node (float32[N]); see :func:`lexical_sparse`."""
    lex = np.zeros(index.n, np.float32)
    cand, sub = lexical_sparse(index, tokens)
    lex[cand] = sub
    return lex


SEED_POOL = 256  # candidates sorted in full before the per-file cap; more only when the cap skips too many


def select_seeds(index: SeedIndex, table: NodeTable, query: str, *, max_seeds: int = 24,
                 semantic: np.ndarray | Callable[[], np.ndarray | None] | None = None, per_file: int = 4,
                 min_seed: float = 0.2) -> Seeds:
    """Activation.md §1 end to end. ``semantic`` is sem(n) ∈ [0,1] (None without an embedding model), or a callable
    that returns it: it is called only after the lexical stage, so a query embedding computed in another thread
    (model inference releases the GIL) overlaps with the lexical matching."""
    tokens = tokenize(query)
    direct = direct_hits(index, query)
    lex_i, lex_v = lexical_sparse(index, tokens)
    lex = np.zeros(index.n, np.float32)
    lex[lex_i] = lex_v
    if callable(semantic):
        semantic = semantic()
    if direct:
        lex *= 0.5
        lex[direct] = 1.0
    if semantic is not None:
        seed = 1.0 - (1.0 - lex) * (1.0 - 0.8 * semantic)
    else:
        seed = lex
    if semantic is None and not direct:
        cand = lex_i[lex_v >= min_seed].astype(np.int64)  # the matched nodes only, not a pass over N
    else:
        cand = np.flatnonzero(seed >= min_seed)
    # order: seed desc, pagerank desc, ext id (= index order). Only a prefix is ever read: sort the SEED_POOL best
    # (every tie of the last one included) and widen to all candidates if the per-file cap exhausts them.
    values = seed[cand]
    if len(cand) > SEED_POOL:
        kth = np.partition(values, len(values) - SEED_POOL)[len(values) - SEED_POOL]
        head = values >= kth
        pools = [cand[head], cand]
    else:
        pools = [cand]
    for pool in pools:
        order = pool[np.lexsort((pool, -table.pagerank[pool], -seed[pool]))]
        chosen, exhausted = _capped(table, order.tolist(), max_seeds, per_file)
        if not exhausted:  # max_seeds reached inside this prefix
            break
    nodes = np.asarray(chosen, dtype=np.int32)
    via = []
    for i in chosen:
        has_lex = lex[i] > 0
        has_sem = semantic is not None and semantic[i] > 0
        via.append("both" if has_lex and has_sem else "semantic" if has_sem else "lexical")
    return Seeds(nodes=nodes, scores=seed[nodes].astype(np.float32), via=via, lex=lex.astype(np.float32),
                 semantic=semantic,
                 tokens=tokens, direct=direct)


def _capped(table: NodeTable, ordered: list[int], max_seeds: int, per_file: int) -> tuple[list[int], bool]:
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


def closest_ids(index: SeedIndex, table: NodeTable, text: str, n: int = 5) -> list[str]:
    """'Did you mean' suggestions for an unknown id: seed selection on the given string, then close ext ids."""
    import difflib

    out: list[str] = []
    tail = text.split("::")[-1] if "::" in text else text
    if tokenize(tail) or tokenize(text):
        s = select_seeds(index, table, text.replace("::", " "), max_seeds=n * 2, per_file=n)
        out.extend(table.ext_id[i] for i in s.nodes.tolist())
    if len(out) < n and table.n < 300_000:
        out.extend(difflib.get_close_matches(text, table.ext_id, n=n, cutoff=0.6))
    dedup: list[str] = []
    for e in out:
        if e not in dedup:
            dedup.append(e)
    return dedup[:n]


