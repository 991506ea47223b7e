"""Benchmarks of the m1nd_core kernels on seeded synthetic power-law graphs (10^4 and 10^5 nodes, ~10 edges/node).

Run with timing:            pytest bench/test_kernels.py
As correctness checks (CI): pytest bench/test_kernels.py --benchmark-disable

Graphs are built once per module (fixtures), so only the kernel call is timed. Out/in degrees follow a Zipf-like
law (endpoint probabilities ∝ rank^-0.8 over a random permutation of the nodes), relations are uniform in 0..11,
weights uniform in [0.05, 1].
"""

from __future__ import annotations

import numpy as np
import pytest

from m1nd_core import activation, hebbian, paths, postings, rank, termcount
from m1nd_core.csr import CSRGraph

SIZES = [10_000, 100_000]
EDGES_PER_NODE = 10
STRUCTURAL = 0xFFFFFFFF & ~(1 << 7)                       # every relation but co_changes
PAGERANK_MASK = STRUCTURAL & ~(1 << 11)                   # ... and mentions


def power_law_edges(n: int, seed: int = 20240601):
    rng = np.random.default_rng(seed)
    m = EDGES_PER_NODE * n
    p = np.arange(1, n + 1, dtype=np.float64) ** -0.8
    p /= p.sum()
    src = rng.permutation(n)[rng.choice(n, m, p=p)]
    dst = rng.permutation(n)[rng.choice(n, m, p=p)]
    rel = rng.integers(0, 12, m)
    keep = src != dst
    key = np.unique((src[keep].astype(np.int64) * n + dst[keep]) * 16 + rel[keep])
    key = key[rng.permutation(key.shape[0])]
    e = key.shape[0]
    src = (key // 16 // n).astype(np.int32)
    dst = (key // 16 % n).astype(np.int32)
    w = rng.uniform(0.05, 1.0, e).astype(np.float32)
    return src, dst, w, w.copy(), (key % 16).astype(np.uint8)


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"n{n:.0e}".replace("+0", ""))
def graph(request):
    n = request.param
    edges = power_law_edges(n)
    return n, edges, CSRGraph.from_edges(n, *edges)


def test_from_edges(benchmark, graph):
    n, edges, _ = graph
    g = benchmark(CSRGraph.from_edges, n, *edges)
    assert g.n_nodes == n and g.n_edges == edges[0].shape[0] > 8 * n
    assert np.array_equal(np.sort(g.rev_edge), np.arange(g.n_edges))


def test_spread(benchmark, graph):
    n, _, g = graph
    rng = np.random.default_rng(7)
    seeds = rng.choice(n, 24, replace=False).astype(np.int32)
    amps = rng.uniform(0.5, 1.0, 24).astype(np.float32)
    act = np.empty(n, np.float32)
    hops = np.empty(n, np.int16)
    rho = np.array([1.0, 0.7, 0.8, 0.8, 0.8, 0.6, 0.9, 1.0, 0.7, 1.0, 0.7, 0.5, 1, 1, 1, 1], np.float32)
    reached = benchmark(activation.spread, g, seeds, amps, act, hops, mode=2, relation_mask=STRUCTURAL,
                        rev_mult=rho)
    assert 24 < reached < n
    assert act.max() == amps.max() and act.min() >= 0.0
    assert np.all((act > 0) == (hops >= 0)) and hops.max() <= 5


def test_spread_sparse(benchmark, graph):
    """The same spread returning only the reached nodes, over a reused scratch (what queries run)."""
    n, _, g = graph
    rng = np.random.default_rng(7)
    seeds = rng.choice(n, 24, replace=False).astype(np.int32)
    amps = rng.uniform(0.5, 1.0, 24).astype(np.float32)
    rho = np.array([1.0, 0.7, 0.8, 0.8, 0.8, 0.6, 0.9, 1.0, 0.7, 1.0, 0.7, 0.5, 1, 1, 1, 1], np.float32)
    scratch = activation.SpreadScratch(n)
    nodes, act, hops = benchmark(activation.spread_sparse, g, seeds, amps, scratch, mode=2, relation_mask=STRUCTURAL,
                                 rev_mult=rho)
    dense, dense_hops = np.empty(n, np.float32), np.empty(n, np.int16)
    activation.spread(g, seeds, amps, dense, dense_hops, mode=2, relation_mask=STRUCTURAL, rev_mult=rho)
    assert np.array_equal(nodes, np.flatnonzero(dense)) and np.array_equal(act, dense[nodes])
    assert np.array_equal(hops, dense_hops[nodes])


@pytest.mark.parametrize("lists", [20, 200], ids=["q20", "q200"])
def test_accumulate(benchmark, graph, lists: int):
    """Posting accumulation shaped like the trigram index: one posting list per 'trigram', sizes Zipf-distributed
    (a few lists hold a large share of the values), weighted; ``lists`` lists are accumulated per call."""
    n, _, _ = graph
    rng = np.random.default_rng(11)
    n_lists = 4000
    sizes = np.minimum(n, (n * 0.3 * np.arange(1, n_lists + 1) ** -0.9).astype(np.int64) + 1)
    offsets = np.zeros(n_lists + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    flat = np.concatenate([np.sort(rng.choice(n, s, replace=False)) for s in sizes]).astype(np.int32)
    weights = rng.uniform(0.01, 0.5, len(flat)).astype(np.float32)
    keys = rng.choice(n_lists, lists, replace=False).astype(np.int64)
    kw = rng.uniform(0.1, 1.0, lists).astype(np.float32)
    scratch = postings.AccumulatorScratch(n)
    ids, sums, counts = benchmark(postings.accumulate, flat, offsets, keys, scratch, weights, kw)
    want = np.bincount(np.concatenate([flat[offsets[k]:offsets[k + 1]] for k in keys]), minlength=n)
    assert np.array_equal(ids, np.flatnonzero(want)) and np.array_equal(counts, want[ids])
    benchmark.extra_info["postings"] = int(want.sum())


def test_hebbian_apply(benchmark, graph):
    _, _, g = graph
    rng = np.random.default_rng(11)
    weights = g.weights.copy()
    edges = rng.choice(g.n_edges, 1000, replace=False).astype(np.int64)
    signs = rng.choice(np.array([-1, 1], np.int8), 1000)
    assert 0 < hebbian.apply(weights.copy(), edges, signs, 0.1) <= 1000
    changed = benchmark(hebbian.apply, weights, edges, signs, 0.1)  # repeated rounds drive weights to the bounds
    assert 0 <= changed <= 1000
    assert weights.min() >= np.float32(0.05) and weights.max() <= 1.0


def test_k_paths(benchmark, graph):
    n, _, g = graph
    hops = np.empty(n, np.int16)
    source = int(np.argmax(g.out_degree() + g.in_degree() == 12))  # an ordinary node, not a hub
    activation.bfs_hops(g, source, hops, max_hops=3)
    # the first node 3 hops away that the budgeted search connects (hubs can eat the budget for others)
    target = next(int(t) for t in np.flatnonzero(hops == 3)
                  if paths.k_paths(g, source, int(t), budget=10_000)["total_found"] > 0)
    res = benchmark(paths.k_paths, g, source, target, max_hops=6, max_paths=10, budget=10_000)
    assert res["shortest_hops"] == 3 and res["total_found"] >= 1
    strengths = [p[3] for p in res["paths"]]
    assert strengths == sorted(strengths, reverse=True)
    for nodes, _, _, _ in res["paths"]:
        assert nodes[0] == source and nodes[-1] == target and len(set(nodes.tolist())) == len(nodes)


def test_pagerank(benchmark, graph):
    n, _, g = graph
    out = np.empty(n, np.float32)
    iterations = benchmark(rank.pagerank, g, out, relation_mask=PAGERANK_MASK)
    assert 1 <= iterations <= 100
    assert out.max() == 1.0 and out.min() > 0


def test_count_terms(benchmark):
    """The lexical index's body field: per-node term counting over strings shaped like the stdlib's stored body
    terms (Zipf-distributed words: 24.6 M characters, 5.7 M tokens; 23.5 M characters on the stdlib). The reference
    is the Python loop the kernel replaced (``tests/core/reference.py``); same triples, same order."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.core.reference import count_terms as python_loop

    rng = np.random.default_rng(5)
    vocab_size = 120_000
    words = np.asarray([f"t{k:x}" for k in range(vocab_size)], object)
    p = np.arange(1, vocab_size + 1, dtype=np.float64) ** -1.05
    p /= p.sum()
    sizes = np.minimum(rng.zipf(1.6, 20_000), 4000) * 6
    texts = [" ".join(words[rng.choice(vocab_size, int(s), p=p)]) for s in sizes]
    skip = (rng.random(len(texts)) < 0.05).astype(np.uint8)
    vocab = words[:2000].tolist()
    got = benchmark(termcount.count_terms, texts, skip, vocab)
    want = python_loop(texts, skip, vocab)
    assert all(np.array_equal(a, b) for a, b in zip(got[:3], want[:3])) and got[3] == want[3]
    benchmark.extra_info["characters"] = sum(map(len, texts))
    benchmark.extra_info["triples"] = len(got[0])


def test_fold_forms(benchmark):
    """Index forms of written words (``m1nd.graph.lexicon.forms_many`` / ``folded_texts``: identifier split, case
    fold, stopwords, one stemming batch): every distinct written word of the stdlib's Python files (~110k; each
    extraction worker folds the words it has not met yet, the index build its labels). The reference is the Python
    version the native split replaced (``tests/core/reference.py``); same forms for every word."""
    import re
    import sys
    import sysconfig
    from pathlib import Path

    from m1nd.graph.lexicon import folded_texts

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.core.reference import forms_many as python_version

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found: set[bytes] = set()
    for p in stdlib.rglob("*.py"):
        if "site-packages" not in p.parts:
            found.update(re.findall(rb"[A-Za-z_][A-Za-z0-9_]{1,79}", p.read_bytes()))
    words = sorted(w.decode("ascii") for w in found)
    if len(words) < 10_000:
        pytest.skip("stdlib sources not available")
    got = benchmark(folded_texts, words)
    want = python_version(words)
    assert got == [" ".join(want[w]) for w in words]
    benchmark.extra_info["words"] = len(words)
