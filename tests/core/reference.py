"""Slow, obvious pure-Python references for the m1nd_core kernels.

Each reference works on a plain edge list ``(src, dst, w, w0, rel)`` indexed by forward edge position (see
``edge_list``), never on the CSR rows, and evaluates floating-point products in the same order as the kernel so
results can be compared exactly.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np


def edge_list(csr):
    """(src, dst, w, w0, rel) as Python lists, indexed by forward position."""
    src = np.repeat(np.arange(csr.n_nodes), np.diff(csr.indptr)).tolist()
    return (src, csr.indices.tolist(), [float(x) for x in csr.weights],
            [float(x) for x in csr.base_weights], csr.relations.tolist())


def _table(t):
    return [1.0] * 16 if t is None else [float(x) for x in np.asarray(t, dtype=np.float32)]


def _steps(n, edges, mask, mode):
    """adjacency: per node, list of (neighbour, edge position, dir) in the allowed directions."""
    src, dst, _, _, rel = edges
    adj = [[] for _ in range(n)]
    for e, (u, v, r) in enumerate(zip(src, dst, rel)):
        if (mask >> r) & 1:
            if mode != 1:
                adj[u].append((v, e, 1))
            if mode != 0:
                adj[v].append((u, e, -1))
    return adj


def spread(n, edges, seeds, amps, *, decay=0.55, threshold=0.04, max_hops=5, mode=2, mask=0xFFFFFFFF,
           hub_ref=16.0, fwd_mult=None, rev_mult=None):
    """Best-first max-product propagation with hop tracking (activation.md §2)."""
    _, _, w, _, rel = edges
    fwd, rev = _table(fwd_mult), _table(rev_mult)
    adj = _steps(n, edges, mask, mode)
    outdeg, indeg = [0] * n, [0] * n
    for u, v, r in zip(edges[0], edges[1], rel):
        if (mask >> r) & 1:
            outdeg[u] += 1
            indeg[v] += 1
    hub = lambda d: 1.0 if hub_ref <= 0 or d == 0 else min(1.0, math.sqrt(hub_ref / d))  # noqa: E731
    act, hops, heap, done = [0.0] * n, [-1] * n, [], set()
    for s, a in zip(seeds, amps):
        a = min(1.0, float(a))
        if a > 0 and a > act[s]:
            act[s], hops[s] = a, 0
            heapq.heappush(heap, (-a, s))
    while heap:
        _, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        if hops[u] >= max_hops:
            continue
        for v, e, d in adj[u]:
            r = rel[e]
            if d == 1:
                s = act[u] * w[e] * decay * fwd[r] * hub(outdeg[u])
            else:
                s = act[u] * w[e] * rev[r] * decay * hub(indeg[u])
            if s >= threshold and s > act[v]:
                act[v], hops[v] = s, hops[u] + 1
                heapq.heappush(heap, (-s, v))
    return np.array(act, dtype=np.float32), np.array(hops, dtype=np.int16)


def bfs_hops(n, edges, source, *, max_hops, mode=2, mask=0xFFFFFFFF):
    adj = _steps(n, edges, mask, mode)
    hops = [-1] * n
    hops[source] = 0
    q = deque([source])
    while q:
        u = q.popleft()
        if hops[u] < max_hops:
            for v, _, _ in adj[u]:
                if hops[v] < 0:
                    hops[v] = hops[u] + 1
                    q.append(v)
    return np.array(hops, dtype=np.int16)


def top_k(values, k, min_value=0.0):
    idx = [i for i in range(len(values)) if values[i] > min_value]
    return sorted(idx, key=lambda i: (-float(values[i]), i))[:k]


def apply(weights, edges, signs, rate, *, w_min=0.05, w_max=1.0):
    """Hebbian LTP/LTD, first non-zero occurrence of an edge wins; returns (new weights, n changed)."""
    w = weights.copy()
    seen, changed = set(), 0
    for e, s in zip(edges.tolist(), signs.tolist()):
        if s == 0 or e in seen:
            continue
        seen.add(e)
        old = float(w[e])
        x = old + rate * (w_max - old) if s > 0 else old - rate * (old - w_min)
        if not math.isfinite(x):
            continue
        f = np.float32(min(max(x, w_min), w_max))
        f = min(max(f, np.float32(w_min)), np.float32(w_max))
        if f != w[e]:
            w[e] = f
            changed += 1
    return w, changed


def relax(weights, base, age, half_life):
    out = weights.copy()
    for i in range(len(out)):
        a = max(float(age[i]), 0.0)
        out[i] = np.float32(float(base[i]) + (float(weights[i]) - float(base[i])) * 2.0 ** (-a / half_life))
    return out


def all_paths(n, edges, source, target, *, max_hops, min_strength=0.0, mask=0xFFFFFFFF):
    """Every simple path source → target (edges both ways) within max_hops with strength >= min_strength,
    sorted by (strength desc, hops asc). Items: (nodes, edges, dirs, strength)."""
    w = edges[2]
    adj = _steps(n, edges, mask, 2)
    found = []

    def dfs(nodes, es, ds, strength):
        u = nodes[-1]
        if u == target:
            found.append((tuple(nodes), tuple(es), tuple(ds), strength))
            return
        if len(es) == max_hops:
            return
        for v, e, d in adj[u]:
            s = strength * w[e]
            if v not in nodes and s >= min_strength:
                dfs(nodes + [v], es + [e], ds + [d], s)

    dfs([source], [], [], 1.0)
    return sorted(found, key=lambda p: (-p[3], len(p[1])))


def maximal_chains(n, edges, source, *, mode, max_depth, min_strength, mask=0xFFFFFFFF, fwd_mult=None,
                   rev_mult=None):
    """Every maximal simple chain from source (≥ 1 edge), sorted by (strength desc, hops asc)."""
    w, rel = edges[2], edges[4]
    fwd, rev = _table(fwd_mult), _table(rev_mult)
    adj = _steps(n, edges, mask, mode)
    found = []

    def dfs(nodes, es, ds, strength):
        ext = 0
        if len(es) < max_depth:
            for v, e, d in adj[nodes[-1]]:
                s = strength * (w[e] * (fwd if d == 1 else rev)[rel[e]])
                if v not in nodes and s >= min_strength:
                    ext += 1
                    dfs(nodes + [v], es + [e], ds + [d], s)
        if ext == 0 and es:
            found.append((tuple(nodes), tuple(es), tuple(ds), strength))

    dfs([source], [], [], 1.0)
    return sorted(found, key=lambda p: (-p[3], len(p[1])))


def pagerank(n, edges, *, mask=0xFFFFFFFF, damping=0.85, tol=1e-6, max_iter=100, use_base_weights=True):
    """Dense power iteration; returns (scores scaled to max 1, iterations)."""
    src, dst, w, w0, rel = edges
    m = np.zeros((n, n))
    for u, v, x, r in zip(src, dst, w0 if use_base_weights else w, rel):
        if (mask >> r) & 1 and x > 0:
            m[u, v] += x
    rows = m.sum(axis=1)
    dangling = rows <= 0
    t = np.divide(m, rows[:, None], out=np.zeros_like(m), where=~dangling[:, None])
    p = np.full(n, 1.0 / n)
    it = 0
    while it < max_iter:
        q = damping * (p @ t) + (1 - damping) / n + damping * p[dangling].sum() / n
        diff = np.abs(q - p).sum()
        p, it = q, it + 1
        if diff < tol:
            break
    return p / p.max(), it


def count_terms(texts, skip, vocab):
    """The lexical index's body-field loop as it was written in Python (``TermParts.build``): per text not
    skipped, ``Counter(text.split())``, term ids given on first sight after the vocabulary's."""
    from collections import Counter

    term_id = {w: k for k, w in enumerate(vocab)}
    t, c, d, new = [], [], [], []
    for i, text in enumerate(texts):
        if not text or skip[i]:
            continue
        for w, n in Counter(text.split()).items():
            k = term_id.get(w)
            if k is None:
                k = term_id[w] = len(term_id)
                new.append(w)
            t.append(k)
            c.append(n)
            d.append(i)
    return (np.asarray(t, np.int32), np.asarray(c, np.float32), np.asarray(d, np.int32), new)


def attach_terms(blob, data, max_words_per_node):
    """Extraction's body terms as they were written in Python (``m1nd.ingest.terms.attach_terms`` before the
    ``wordfold`` kernel): ``re.findall`` per line run, a fold per distinct word, ``str.join``; in place."""
    import re

    word = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{1,79}")
    defs = blob.get("definitions") or []
    newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    n_lines = len(newlines) + 1
    starts = np.empty(n_lines + 1, np.int64)
    starts[0] = 0
    starts[1:n_lines] = newlines + 1
    starts[n_lines] = len(data)
    owner = np.full(n_lines, -1, np.int32)
    for i, d in enumerate(defs):
        a = max(int(d.get("line_start") or 1), 1) - 1
        b = min(max(int(d.get("line_end") or a + 1), a + 1), n_lines)
        owner[a:b] = i
    words = [[] for _ in range(len(defs) + 1)]
    cut = np.flatnonzero(owner[1:] != owner[:-1]) + 1
    run_start = np.concatenate(([0], cut))
    run_end = np.concatenate((cut, [n_lines]))
    for s, e, o in zip(run_start.tolist(), run_end.tolist(), owner[run_start].tolist()):
        words[o].extend(word.findall(data, int(starts[s]), int(starts[e])))
    folded = {w.encode("ascii"): " ".join(fs)
              for w, fs in forms_many(w.decode("ascii") for w in set().union(*words)).items()}
    for i, d in enumerate(defs):
        d["terms"] = " ".join(map(folded.__getitem__, words[i][:max_words_per_node])).strip()
    blob["terms"] = " ".join(map(folded.__getitem__, words[-1][:max_words_per_node])).strip()


def forms_many(words):
    """``m1nd.graph.lexicon.forms_many`` as it was written in Python (before ``wordfold.fold_forms``): per distinct
    word, its whole (case-folded) and its identifier humps, 2+ characters and no stopwords, stemmed, distinct in
    first-seen order."""
    from m1nd.graph.lexicon import _STEMMER, QUERY_STOPWORDS
    from m1nd.identifiers import HUMPS as _HUMPS

    split = {}
    distinct = set()
    for w in words:
        if w.isalpha() and w.islower():
            parts = [w] if len(w) >= 2 and w not in QUERY_STOPWORDS else []
        else:
            whole = w.casefold()
            parts = [whole] if len(whole) >= 2 and whole not in QUERY_STOPWORDS else []
            parts.extend([p for p in map(str.lower, _HUMPS.findall(w)) if len(p) >= 2 and p not in QUERY_STOPWORDS])
        split[w] = parts
        distinct.update(parts)
    order = list(distinct)
    stems = dict(zip(order, _STEMMER.stemWords(order)))
    return {w: tuple(dict.fromkeys([stems[p] for p in parts])) for w, parts in split.items()}
