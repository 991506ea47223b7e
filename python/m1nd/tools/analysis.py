"""Priming and analysis tools: ``warmup``, ``missing``, ``hypothesize`` (activation.md §9, §12, §13)."""

from __future__ import annotations

from typing import Any

from m1nd.defaults import (HYPOTHESIS_MAX_HOPS, HYPOTHESIS_PATH_BUDGET, MISSING_MIN_SIBLING, MISSING_TOP_K,
                           WARMUP_BOOST, WARMUP_MAX_PRIMED)
from m1nd.tools import hints
from m1nd.tools.registry import Param, Tool, register


def _warmup(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    return ws.graph.warmup(a["agent_id"], a["task_description"], boost_strength=a["boost_strength"],
                           max_primed=a["max_primed"]).to_dict()


register(Tool(
    name="warmup", title="Prime for a task", group="graph",
    description=("Describe the task you are about to do; the nodes it activates get a decaying boost in YOUR later "
                 "activate calls (other agents are unaffected). boost_strength=0 clears your warmup. Then "
                 "activate."),
    params=(
        Param("task_description", "string", "What you are about to do.", required=True, min_length=1,
              max_length=4000),
        Param("boost_strength", "number", "Boost added to primed nodes; 0 clears.", default=WARMUP_BOOST,
              minimum=0.0, maximum=1.0),
        Param("max_primed", "integer", "Nodes primed at most.", default=WARMUP_MAX_PRIMED, minimum=1, maximum=100),
    ),
    handler=_warmup, hint=hints.warmup, timed=True, counts_query=True,
    output_required=("seeds", "primed_nodes", "total_primed"), shrinkable=("primed_nodes", "seeds"),
))


def _missing(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    return ws.graph.missing(a["agent_id"], a["query"], min_sibling_activation=a["min_sibling_activation"],
                            top_k=a["top_k"], include_ghost_edges=a["include_ghost_edges"]).to_dict()


register(Tool(
    name="missing", title="Find structural holes", group="graph",
    description=("Find code that should be related to a query but is not activated itself (its neighbours are), "
                 "and strongly co-activated pairs with no direct link. Use to spot forgotten call sites or "
                 "missing tests; then why or impact."),
    params=(
        Param("query", "string", "Words or ids of the area to check.", required=True, min_length=1,
              max_length=2000),
        Param("min_sibling_activation", "number", "Neighbour activation that marks a hole.",
              default=MISSING_MIN_SIBLING, minimum=0.05, maximum=1.0),
        Param("top_k", "integer", "Results per list.", default=MISSING_TOP_K, minimum=1, maximum=50),
        Param("include_ghost_edges", "boolean", "Report co-activated unlinked pairs.", default=True),
    ),
    handler=_missing, hint=hints.missing, timed=True, elapsed_before=("hint",), counts_query=True,
    read_only=True, output_required=("query", "structural_holes", "ghost_edges"),
    shrinkable=("structural_holes", "ghost_edges"),
))


def _hypothesize(ws: Any, a: dict[str, Any]) -> Any:
    return ws.graph.hypothesize(a["agent_id"], a["claim"], max_hops=a["max_hops"], path_budget=a["path_budget"],
                                include_ghost_edges=a["include_ghost_edges"],
                                include_partial_flow=a["include_partial_flow"])


register(Tool(
    name="hypothesize", title="Test a claim about the code", group="graph",
    description=("Test a claim such as 'A depends on B', 'A never calls B', 'A and B are coupled', 'A is unused', "
                 "'A is tested', 'all paths from A to B go through C' against the graph; returns a verdict, "
                 "confidence and evidence. Quote ids in backticks for precision; then why for details."),
    params=(
        Param("claim", "string", "The claim in words; ids in backticks.", required=True, min_length=1,
              max_length=1000),
        Param("max_hops", "integer", "Longest path considered.", default=HYPOTHESIS_MAX_HOPS, minimum=1,
              maximum=8),
        Param("path_budget", "integer", "Paths explored at most.", default=HYPOTHESIS_PATH_BUDGET, minimum=100,
              maximum=100000),
        Param("include_ghost_edges", "boolean", "Count co-activation as evidence.", default=True),
        Param("include_partial_flow", "boolean", "Report partial paths.", default=True),
    ),
    handler=_hypothesize, timed=True, counts_query=True, read_only=True,
    output_required=("claim", "claim_type", "verdict", "confidence", "supporting_evidence",
                     "contradicting_evidence"),
    shrinkable=("supporting_evidence", "contradicting_evidence"),
))


def _diverge(ws: Any, a: dict[str, Any]) -> Any:
    from m1nd.codegraph.diverge import diverge

    return diverge(ws.graph, a["baseline"], scope=a.get("scope"),
                   include_coupling_changes=a["include_coupling_changes"], include_anomalies=a["include_anomalies"],
                   top_k=a["top_k"])


register(Tool(
    name="diverge", title="Drift from a baseline", group="graph",
    description=("Compare the code now with a baseline (last_session, this_session, or an ISO date): new, removed "
                 "and modified files, structural drift, coupling changes from git, and anomalies such as new code "
                 "without tests. Use at the start of a session; then impact on modified nodes."),
    params=(
        Param("baseline", "string", "last_session, this_session, or an ISO-8601 date/datetime.", required=True,
              min_length=1, max_length=64),
        Param("scope", "string", "Restrict to files under this relpath prefix.", max_length=1000),
        Param("include_coupling_changes", "boolean", "Git co-change shifts.", default=True),
        Param("include_anomalies", "boolean", "E.g. new code without tests.", default=True),
        Param("top_k", "integer", "Entries per list.", default=50, minimum=1, maximum=500),
    ),
    handler=_diverge, timed=True, counts_query=True, read_only=True,
    output_required=("baseline", "structural_drift", "new_nodes", "removed_nodes", "modified_nodes", "anomalies"),
    shrinkable=("modified_nodes", "coupling_changes", "new_nodes", "removed_nodes", "anomalies"),
))
