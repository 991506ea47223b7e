"""Query → seed nodes (spec activation.md §1): tokenising, per-token match rules, aggregation, selection.

Everything is precomputed into indexes keyed by *unique* labels and paths, so a query costs a handful of dict
lookups, one C-level substring scan over the joined labels and a few numpy passes over N, never a Python loop over
nodes. Scores per token are dense float32 arrays (N is at most a few hundred thousand).
"""

from __future__ import annotations

import bisect

import re
from dataclasses import dataclass, field

import numpy as np

from m1nd.graph.nodes import DIR, FILE, KIND_CODE, NodeTable

STOPWORDS = frozenset("a an the and or of to in on at is are be for with this that from into its own how what where "
                      "which why does do it we codebase task validate using focus around".split())
_SPLIT = re.compile(r"[\s?!,;()\[\]{}<>\"']+")
_PARTS = re.compile(r"::|[_\-./:]")
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

GENERATED = re.compile(r"(_pb2\.py$|\.min\.js$|(^|/)generated/|\.gen\.)")
SYMBOL_KINDS = {KIND_CODE[k] for k in ("fn", "class", "struct", "interface", "trait", "enum", "type")}


def identifier_parts(word: str) -> list[str]:
    """``parseHTTPResponse_v2`` → ``parse http response v 2``: separators, camel humps, letter↔digit."""
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


def trigrams(word: str) -> set[str]:
    w = f" {word} "
    return {w[i:i + 3] for i in range(len(w) - 2)}


@dataclass
class SeedIndex:
    """Indexes over one NodeTable. Built once per graph generation (cached on disk with the arrays)."""

    n: int
    labels: list[str]  # unique lower-cased labels
    label_nodes: list[np.ndarray]  # per unique label: node indices
    label_id: dict[str, int]
    part_labels: dict[str, list[int]]  # identifier part -> unique label ids
    sorted_labels: list[str]
    sorted_label_ids: list[int]
    joined_labels: str  # "\n".join(labels) for C-speed substring scans
    label_offsets: list[int]
    paths: list[str]  # unique lower-cased source paths
    path_nodes: list[np.ndarray]
    segment_paths: dict[str, list[int]]  # dir name / file stem -> path ids
    words: dict[str, np.ndarray]  # whole words of signature/doc -> node indices
    label_trigrams: dict[str, np.ndarray]  # trigram -> unique label ids
    label_trigram_count: np.ndarray
    path_bias: np.ndarray  # float32[N] without a test token
    path_bias_test: np.ndarray  # float32[N] with a test token
    kind_bias: np.ndarray
    ext_lookup: dict[str, int] = field(default_factory=dict)  # ext id / relpath / file::relpath -> node

    @classmethod
    def build(cls, t: NodeTable) -> SeedIndex:
        n = t.n
        by_label: dict[str, list[int]] = {}
        by_path: dict[str, list[int]] = {}
        words: dict[str, list[int]] = {}
        for i in range(n):
            by_label.setdefault(t.label[i].casefold(), []).append(i)
            by_path.setdefault(t.source_path[i].casefold(), []).append(i)
            text = t.signature[i] + " " + t.doc[i]
            if text.strip():
                for w in set(_WORD.findall(text.casefold())):
                    words.setdefault(w, []).append(i)
        labels = list(by_label)
        label_id = {lab: k for k, lab in enumerate(labels)}
        part_labels: dict[str, list[int]] = {}
        tri: dict[str, list[int]] = {}
        tri_count = np.zeros(len(labels), dtype=np.float32)
        for k, lab in enumerate(labels):
            for p in set(identifier_parts(lab)) | set(identifier_parts(t.label[by_label[lab][0]])):
                part_labels.setdefault(p, []).append(k)
            tg = trigrams(lab)
            tri_count[k] = len(tg)
            for g in tg:
                tri.setdefault(g, []).append(k)
        order = sorted(range(len(labels)), key=labels.__getitem__)
        offsets, pos = [], 0
        for lab in labels:
            offsets.append(pos)
            pos += len(lab) + 1
        paths = list(by_path)
        segment_paths: dict[str, list[int]] = {}
        for k, p in enumerate(paths):
            segs = p.split("/")
            stem = segs[-1].rsplit(".", 1)[0] if "." in segs[-1] else segs[-1]
            for s in {*segs[:-1], segs[-1], stem}:
                if s:
                    segment_paths.setdefault(s, []).append(k)
        # Biases (activation.md §1 table).
        pb = np.zeros(n, np.float32)
        pbt = np.zeros(n, np.float32)
        kb = np.zeros(n, np.float32)
        for i in range(n):
            sp = t.source_path[i]
            b = 0.0
            if sp.startswith(("src/", "lib/")) or "/src/" in sp or "/lib/" in sp:
                b += 0.05
            if re.search(r"(^|/)(docs|examples|vendor|third_party)/", sp):
                b -= 0.10
            if GENERATED.search(sp):
                b -= 0.15
            test = bool(t.is_test[i])
            pb[i] = min(0.10, max(-0.15, b - (0.05 if test else 0.0)))
            pbt[i] = min(0.10, max(-0.15, b + (0.05 if test else 0.0)))
            k = int(t.kind[i])
            kb[i] = (0.04 if k in SYMBOL_KINDS else 0.02 if k == FILE else 0.01 if k in (KIND_CODE["impl"], KIND_CODE["mod"])
                     else -0.02 if k == KIND_CODE["section"] else -0.05 if k == DIR else 0.0)
        ext_lookup: dict[str, int] = {}
        for i, e in enumerate(t.ext_id):
            ext_lookup[e] = i
            if int(t.kind[i]) == FILE and e.startswith("file::"):
                ext_lookup.setdefault(e[6:], i)
        as_arr = lambda xs: np.asarray(xs, dtype=np.int32)  # noqa: E731
        return cls(
            n=n, labels=labels, label_nodes=[as_arr(by_label[lab]) for lab in labels], label_id=label_id,
            part_labels=part_labels, sorted_labels=[labels[k] for k in order], sorted_label_ids=order,
            joined_labels="\n".join(labels), label_offsets=offsets, paths=paths,
            path_nodes=[as_arr(by_path[p]) for p in paths], segment_paths=segment_paths,
            words={w: as_arr(v) for w, v in words.items()},
            label_trigrams={g: as_arr(v) for g, v in tri.items()}, label_trigram_count=tri_count,
            path_bias=pb, path_bias_test=pbt, kind_bias=kb, ext_lookup=ext_lookup)

    # -- per-token matching ------------------------------------------------------------------------------------
    def _label_scores(self, t: str) -> dict[int, float]:
        """Best label-rule score per unique label id for token t."""
        best: dict[int, float] = {}

        def put(k: int, s: float) -> None:
            if s > best.get(k, 0.0):
                best[k] = s

        k = self.label_id.get(t)
        if k is not None:
            put(k, 1.00)
        for k in self.part_labels.get(t, ()):
            put(k, 0.92)
        if len(t) >= 3:
            # label starts with t
            i = bisect.bisect_left(self.sorted_labels, t)
            while i < len(self.sorted_labels) and self.sorted_labels[i].startswith(t):
                put(self.sorted_label_ids[i], 0.90)
                i += 1
            # t starts with label (label ≥ 3 chars), and label is a substring of t
            for a in range(len(t)):
                for b in range(a + 3, len(t) + 1):
                    k = self.label_id.get(t[a:b])
                    if k is not None:
                        put(k, 0.90 if a == 0 else 0.80)
            # t is a substring of a label: one C-level scan over the joined labels
            joined, offs = self.joined_labels, self.label_offsets
            pos = joined.find(t)
            while pos != -1:
                k = bisect.bisect_right(offs, pos) - 1
                put(k, 0.80)
                nxt = offs[k + 1] if k + 1 < len(offs) else len(joined)
                pos = joined.find(t, nxt)
        # trigram similarity with labels (0.7·σ when σ > 0.3)
        tg = trigrams(t)
        posts = [self.label_trigrams[g] for g in tg if g in self.label_trigrams]
        if posts:
            ids = np.concatenate(posts)
            counts = np.bincount(ids, minlength=len(self.labels))
            cand = np.nonzero(counts)[0]
            sigma = counts[cand] / np.sqrt(len(tg) * self.label_trigram_count[cand])
            keep = sigma > 0.3
            for k, s in zip(cand[keep].tolist(), sigma[keep].tolist()):
                put(k, 0.7 * s)
        return best

    def token_scores(self, t: str, scratch: np.ndarray) -> np.ndarray:
        """Dense m(t, ·) over all nodes (written into and returned as ``scratch``)."""
        m = scratch
        m.fill(0.0)
        # signature / doc whole words (lowest rule first, later rules overwrite with max)
        w = self.words.get(t)
        if w is not None:
            m[w] = 0.60
        if len(t) >= 4:
            for k, p in enumerate(self.paths):
                if t in p:
                    idx = self.path_nodes[k]
                    m[idx] = np.maximum(m[idx], 0.72)
        for k in self.segment_paths.get(t, ()):
            idx = self.path_nodes[k]
            m[idx] = np.maximum(m[idx], 0.82)
        by_score: dict[float, list[int]] = {}
        for k, s in self._label_scores(t).items():
            by_score.setdefault(s, []).append(k)
        for s in sorted(by_score):
            idx = np.concatenate([self.label_nodes[k] for k in by_score[s]])
            m[idx] = np.maximum(m[idx], s)
        return m


@dataclass
class Seeds:
    nodes: np.ndarray  # int32
    scores: np.ndarray  # float32
    via: list[str]
    lex: np.ndarray  # float32[N] lexical score of every node (for temporal D3 and diagnostics)
    tokens: list[str]
    direct: list[int]


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


def lexical_scores(index: SeedIndex, tokens: list[str]) -> np.ndarray:
    n = index.n
    k = len(tokens)
    if k == 0 or n == 0:
        return np.zeros(n, np.float32)
    total = np.zeros(n, np.float32)
    covered = np.zeros(n, np.float32)
    best = np.zeros(n, np.float32)
    all_exact = np.ones(n, np.bool_)
    scratch = np.empty(n, np.float32)
    for t in tokens:
        m = index.token_scores(t, scratch)
        total += m
        covered += m >= 0.5
        np.maximum(best, m, out=best)
        all_exact &= m >= 1.0
    avg = total / k
    coverage = covered / k
    testy = any(t in ("test", "tests", "spec") for t in tokens)
    bias = (index.path_bias_test if testy else index.path_bias) + index.kind_bias
    lex = np.clip(0.5 * avg + 0.35 * coverage + 0.15 * best + bias, 0.0, 1.0).astype(np.float32)
    lex[best < 0.5] = 0.0
    lex[all_exact] = 1.0
    return lex


def select_seeds(index: SeedIndex, table: NodeTable, query: str, *, max_seeds: int = 24,
                 semantic: np.ndarray | None = None, per_file: int = 4, min_seed: float = 0.2) -> Seeds:
    """Activation.md §1 end to end. ``semantic`` is sem(n) ∈ [0,1] (None without an embedding model)."""
    tokens = tokenize(query)
    direct = direct_hits(index, query)
    lex = lexical_scores(index, tokens)
    if direct:
        lex *= 0.5
        lex[direct] = 1.0
    if semantic is not None:
        seed = 1.0 - (1.0 - lex) * (1.0 - 0.8 * semantic)
    else:
        seed = lex
    cand = np.nonzero(seed >= min_seed)[0]
    # sort: seed desc, pagerank desc, ext id (= index order)
    order = np.lexsort((cand, -table.pagerank[cand], -seed[cand]))
    chosen: list[int] = []
    per: dict[int, int] = {}
    for i in cand[order].tolist():
        f = int(table.file_of[i]) if table.file_of[i] >= 0 else i
        if per.get(f, 0) >= per_file:
            continue
        per[f] = per.get(f, 0) + 1
        chosen.append(i)
        if len(chosen) >= max_seeds:
            break
    nodes = np.asarray(chosen, dtype=np.int32)
    via = []
    for i in chosen:
        has_lex = lex[i] > 0
        has_sem = semantic is not None and semantic[i] > 0
        via.append("both" if has_lex and has_sem else "semantic" if has_sem else "lexical")
    return Seeds(nodes=nodes, scores=seed[nodes].astype(np.float32), via=via, lex=lex.astype(np.float32),
                 tokens=tokens, direct=direct)


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


