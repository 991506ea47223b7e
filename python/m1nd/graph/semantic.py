"""Semantic dimension without an embedding model: character-trigram TF-IDF over node text (activation.md §3).

Node text = label, qname parts and the first line of the doc. Vectors are L2-normalised and stored as posting lists
(trigram → node indices + weights) so a query costs one ``np.bincount`` over the postings of its trigrams.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from m1nd.graph.nodes import NodeTable
from m1nd.graph.seeds import identifier_parts

_WORDS = re.compile(r"[A-Za-z0-9]+")


def node_text_words(label: str, qname: str, doc: str) -> list[str]:
    words = identifier_parts(label) + identifier_parts(qname)
    first = doc.split("\n", 1)[0] if doc else ""
    words += [w.lower() for w in _WORDS.findall(first)]
    return [w for w in words if len(w) >= 2]


def word_trigrams(words: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for w in words:
        s = f" {w} "
        for i in range(len(s) - 2):
            g = s[i:i + 3]
            out[g] = out.get(g, 0) + 1
    return out


@dataclass
class TrigramIndex:
    grams: dict[str, int]  # trigram -> id
    idf: np.ndarray  # float32[G]
    indptr: np.ndarray  # int64[G+1]
    nodes: np.ndarray  # int32[P]
    weights: np.ndarray  # float32[P]
    n: int

    @classmethod
    def build(cls, t: NodeTable) -> TrigramIndex:
        n = t.n
        per_node: list[dict[str, int]] = []
        df: dict[str, int] = {}
        for i in range(n):
            tg = word_trigrams(node_text_words(t.label[i], t.qname[i], t.doc[i]))
            per_node.append(tg)
            for g in tg:
                df[g] = df.get(g, 0) + 1
        grams = {g: k for k, g in enumerate(sorted(df))}
        idf = np.zeros(len(grams), np.float32)
        for g, k in grams.items():
            idf[k] = math.log((1 + n) / (1 + df[g])) + 1.0
        rows_g: list[int] = []
        rows_n: list[int] = []
        rows_w: list[float] = []
        for i, tg in enumerate(per_node):
            if not tg:
                continue
            ks = [grams[g] for g in tg]
            w = np.asarray([1.0 + math.log(c) for c in tg.values()], np.float32) * idf[ks]
            w /= max(1e-9, float(np.linalg.norm(w)))
            rows_g.extend(ks)
            rows_n.extend([i] * len(ks))
            rows_w.extend(w.tolist())
        g_arr = np.asarray(rows_g, np.int64)
        order = np.argsort(g_arr, kind="stable")
        counts = np.bincount(g_arr, minlength=len(grams))
        indptr = np.zeros(len(grams) + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(grams=grams, idf=idf, indptr=indptr, nodes=np.asarray(rows_n, np.int32)[order],
                   weights=np.asarray(rows_w, np.float32)[order], n=n)

    def similarity(self, tokens: list[str]) -> np.ndarray:
        """Cosine of the query's trigram vector with every node (float32[N])."""
        q = word_trigrams([w for t in tokens for w in ([t] if t.isalnum() else identifier_parts(t))])
        ks, ws = [], []
        norm2 = 0.0
        unseen_idf = math.log(1 + self.n) + 1.0  # a trigram no node has: rarest possible
        for g, c in q.items():
            k = self.grams.get(g)
            w = (1.0 + math.log(c)) * (float(self.idf[k]) if k is not None else unseen_idf)
            norm2 += w * w
            if k is not None:
                ks.append(k)
                ws.append(w)
        out = np.zeros(self.n, np.float32)
        if not ks:
            return out
        qw = np.asarray(ws, np.float32) / max(1e-9, math.sqrt(norm2))
        parts_n, parts_w = [], []
        for k, w in zip(ks, qw.tolist()):
            a, b = int(self.indptr[k]), int(self.indptr[k + 1])
            parts_n.append(self.nodes[a:b])
            parts_w.append(self.weights[a:b] * w)
        out[:] = np.bincount(np.concatenate(parts_n), weights=np.concatenate(parts_w), minlength=self.n)
        return out
