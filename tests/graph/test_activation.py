"""Fusion, priming and the why/impact logic on a hand-built graph."""

from __future__ import annotations

import numpy as np
import pytest
from m1nd.errors import InvalidInputError, UnknownNodeError
from m1nd.graph import activation as A
from m1nd.graph import queries as Q
from m1nd.graph import ranking as R

ACQUIRE = "file::src/session_pool.py::class::SessionPool::fn::acquire"
CONNECT = "file::src/db.py::fn::connect"
POOL = "file::src/pool.py::class::Pool"


def test_activation_ranks_the_named_code_first(small_graph) -> None:
    run = A.run_activation(small_graph, "session pool acquire", A.ActivationParams())
    top, total = A.ranked(small_graph, run, 5)
    assert small_graph.nodes.ext_id[top[0]] == ACQUIRE
    assert total >= 5
    assert set(run.used) == {"structural", "semantic", "temporal", "causal"}
    assert (run.activation >= 0).all() and (run.activation <= 1).all()


def test_fusion_formula(small_graph) -> None:
    """score = prior·(rel + Σ W_d·D_d) / (1 + Σ W_d) + PR·pagerank (graph/ranking.py), recomputed from the run."""
    g = small_graph
    run = A.run_activation(g, "render page", A.ActivationParams())
    w = {d: R.DIM_WEIGHTS[d] for d in run.used}
    p = R.query_prior(A.ranking_priors(g), np.arange(g.n), tests_wanted=False, docs_wanted=False)
    fused = p * (run.seeds.lex + sum(w[d] * run.dims[d] for d in run.used)) / (1 + sum(w.values()))
    expected = np.where(fused > 0, fused + R.PR * g.nodes.pagerank, 0.0)
    support = np.flatnonzero(run.score)
    np.testing.assert_allclose(run.score[support], expected[support], rtol=1e-5, atol=1e-6)
    assert not expected[run.score == 0].any()


def test_disabled_dimension_gets_zero_weight(small_graph) -> None:
    run = A.run_activation(small_graph, "session pool", A.ActivationParams(dimensions=("structural",)))
    assert run.used == ["structural"]
    assert not run.dims["causal"].any() and not run.dims["semantic"].any()


def test_temporal_inactive_without_git(small_graph_no_git) -> None:
    g = small_graph_no_git
    run = A.run_activation(g, "session pool", A.ActivationParams())
    assert "temporal" not in run.used


def test_priming_reorders_but_never_adds(small_graph) -> None:
    g = small_graph
    base = A.run_activation(g, "database connect", A.ActivationParams())
    i = g.nodes.index["file::src/render.py::fn::render_page"]
    primed = A.run_activation(g, "database connect", A.ActivationParams(), boosts={i: 1.0})
    if base.score[i] == 0:
        assert primed.activation[i] == 0
    j = g.nodes.index[CONNECT]
    boosted = A.run_activation(g, "database connect", A.ActivationParams(), boosts={j: 0.5})
    assert boosted.activation[j] >= base.activation[j]


def test_filters(small_graph) -> None:
    run = A.run_activation(small_graph, "session pool acquire", A.ActivationParams())
    top, _ = A.ranked(small_graph, run, 20, node_kinds=("fn",))
    assert all(small_graph.nodes.kind_name(i) == "fn" for i in top)
    top, _ = A.ranked(small_graph, run, 20, path_prefix="tests/")
    assert all(small_graph.nodes.source_path[i].startswith("tests/") for i in top)


def test_structural_holes_have_hot_neighbours(small_graph) -> None:
    g = small_graph
    act = np.zeros(g.n, np.float32)
    for e in (ACQUIRE, POOL):
        act[g.nodes.index[e]] = 0.9
    holes = A.structural_holes(g, act, 0.3, 5)
    assert holes and holes[0]["node_id"] == "file::src/session_pool.py::class::SessionPool"
    assert holes[0]["reason"].startswith("2 activated neighbours (mean 0.90)")


def test_why_paths_are_real_and_sorted(small_graph) -> None:
    r = Q.why(small_graph, ACQUIRE, POOL, max_hops=6)
    assert r.paths, r
    strengths = [p.cumulative_strength for p in r.paths]
    assert strengths == sorted(strengths, reverse=True)
    best = r.paths[0]
    assert best.nodes[0] == ACQUIRE and best.nodes[-1] == POOL
    assert best.relations == ["contained_in", "inherits"]
    assert best.cumulative_strength == pytest.approx(0.8 * 0.7, rel=1e-5)
    assert r.shortest_hops == 2


def test_why_errors(small_graph) -> None:
    with pytest.raises(InvalidInputError):
        Q.why(small_graph, ACQUIRE, ACQUIRE)
    with pytest.raises(UnknownNodeError) as e:
        Q.why(small_graph, "file::src/session_pool.py::fn::acquir", POOL)
    assert ACQUIRE in e.value.details["closest"]


def test_impact_reverse_reaches_callers_and_tests(small_graph) -> None:
    r = Q.impact(small_graph, CONNECT, direction="reverse")
    ids = [b.node_id for b in r.blast_radius]
    assert ACQUIRE in ids
    entry = r.blast_radius[ids.index(ACQUIRE)]
    assert entry.via_relation == "called_by" and entry.hop_distance == 1
    assert entry.signal_strength == pytest.approx(0.5 * 0.55 * 0.8, rel=1e-4)  # ŵ·decay·ρ(calls)
    assert "file::tests/test_session_pool.py::fn::test_acquire" in r.tests_affected
    assert sum(r.by_hop.values()) == r.total_reached


def test_impact_forward_only_follows_edges(small_graph) -> None:
    r = Q.impact(small_graph, ACQUIRE, direction="forward")
    assert [b.node_id for b in r.blast_radius] == [CONNECT]
    assert r.causal_chains[0].path == [ACQUIRE, CONNECT]
