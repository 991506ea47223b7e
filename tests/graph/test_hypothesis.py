"""hypothesize: claim classification, entity resolution and the structural tests (activation.md §13)."""

from __future__ import annotations

import pytest
from m1nd.errors import M1ndError
from m1nd.graph.hypothesis import classify, hypothesize


@pytest.mark.parametrize(("claim", "kind", "negated"), [
    ("SessionPool depends on connect", "depends_on", False),
    ("render_page never calls connect", "no_dependency", False),
    ("db and session_pool change together", "coupling", False),
    ("there is a circular dependency between a and b", "circular", False),
    ("all paths from a to b go through c", "gateway", False),
    ("render_page is unused", "isolated", False),
    ("acquire is tested", "tested", False),
    ("release has no tests", "tested", True),
    ("something vague about pools", "unknown", False),
], ids=lambda v: str(v))
def test_classify(claim: str, kind: str, negated: bool) -> None:
    k, n, _ = classify(claim)
    assert (k, n) == (kind, negated)


def test_depends_on_true_through_contained_methods(small_graph) -> None:
    r = hypothesize(
        small_graph, "`file::src/session_pool.py::class::SessionPool` depends on `file::src/db.py::fn::connect`"
    )
    assert r.claim_type == "depends_on"
    assert r.supporting_evidence[0].evidence_type == "direct_edge"
    odds = 1.0
    for ev in r.supporting_evidence + r.contradicting_evidence:
        odds *= ev.likelihood_factor
    assert r.confidence == pytest.approx(odds / (1 + odds), abs=1e-3)
    assert r.confidence >= 0.75


def test_no_dependency_false_when_edge_exists(small_graph) -> None:
    r = hypothesize(small_graph, "`file::src/session_pool.py::class::SessionPool::fn::acquire` never calls "
                                 "`file::src/db.py::fn::connect`")
    assert r.verdict == "likely_false"
    assert r.contradicting_evidence[0].likelihood_factor == pytest.approx(0.1)


def test_no_path_reports_partial_reach(small_graph) -> None:
    r = hypothesize(small_graph, "`file::src/render.py::fn::render_page` depends on `file::src/db.py::fn::connect`")
    assert r.verdict in ("inconclusive", "likely_false")
    assert r.partial_reach is not None


def test_tested_and_negated(small_graph) -> None:
    acq = "`file::src/session_pool.py::class::SessionPool::fn::acquire`"
    yes = hypothesize(small_graph, f"{acq} is tested")
    no = hypothesize(small_graph, f"{acq} has no tests")
    assert yes.confidence == pytest.approx(2.5 / 3.5, abs=1e-3)  # tests edge: factor 2.5
    assert no.confidence == pytest.approx(0.4 / 1.4, abs=1e-3)  # negated: factor 1/2.5
    assert no.negated is True


def test_isolated(small_graph) -> None:
    r = hypothesize(small_graph, "`file::src/render.py::fn::render_page` is unused")
    assert r.supporting_evidence[0].evidence_type == "no_users"
    r = hypothesize(small_graph, "`file::src/db.py::fn::connect` is unused")
    assert r.contradicting_evidence[0].evidence_type == "used_by"
    assert r.confidence == pytest.approx(0.2 / 1.2, abs=1e-3)
    assert r.verdict == "likely_false"


def test_unresolved_claim_is_a_clear_error(small_graph) -> None:
    with pytest.raises(M1ndError) as e:
        hypothesize(small_graph, "zzzqqq depends on yyyxxx")
    assert e.value.code == "unresolved_claim" and "zzzqqq" in e.value.message
