"""Perspective tools (perspectives.md §6): thin adapters onto ``m1nd.perspectives.PerspectiveService``."""

from __future__ import annotations

from typing import Any

from m1nd.graph.activation import DIMENSIONS
from m1nd.tools import hints
from m1nd.tools.registry import Param, Tool, register
from m1nd.perspectives import service_for

PID = Param("perspective_id", "string", "Id returned by perspective_start or perspective_branch.", required=True,
            min_length=1, max_length=100)
VERSION = Param("route_set_version", "integer", "route_set_version from your last perspective response.",
                required=True, minimum=0)
ROUTE_ID = Param("route_id", "string", "Content-addressed route id (R_…); pass this or route_index.", min_length=1,
                 max_length=40)
ROUTE_INDEX = Param("route_index", "integer", "The route's displayed index (rank in the whole set); pass this or "
                    "route_id.")


def _svc(ws: Any, a: dict[str, Any]) -> Any:
    return service_for(ws)


def _start(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).start(a["agent_id"], a["query"], a.get("anchor_node"), a.get("lens"))


register(Tool(
    name="perspective_start", title="Start a navigable perspective", group="perspectives",
    description=("Open a stateful exploration centred on the code best matching a query (or on anchor_node, which "
                 "keeps routes relevant to it). Returns scored routes of eight families (structure, callers, "
                 "dependencies, similar code, co-change, tests, config, hubs) and route_set_version. Next: "
                 "perspective_inspect or perspective_peek a route, then perspective_follow it."),
    params=(
        Param("query", "string", "Words, identifiers or a file path to start from.", required=True, min_length=1,
              max_length=2000),
        Param("anchor_node", "string", "External id to anchor on (anchored mode).", min_length=1, max_length=2000),
        Param("lens", "object", "Optional: dimensions, node_kinds, route_families, ranking_weights, top_k (1..50, "
              "12), path_prefix, include_tests."),
    ),
    handler=_start, hint=hints.perspective_start, timed=True, counts_query=True,
    output_required=("perspective_id", "mode", "focus_node", "routes", "total_routes", "route_set_version",
                     "cache_generation"),
    shrinkable=("routes", "seeds", "overlapping_locks"),
))


def _routes(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).routes(a["agent_id"], a["perspective_id"], a["page"], a["page_size"],
                              a.get("route_set_version"))


register(Tool(
    name="perspective_routes", title="Browse a perspective's routes", group="perspectives",
    description=("Page through the current route set of a perspective (6 per page, page_size clamped to 1..10). "
                 "Never refuses a stale version: it refreshes routes after a graph change and flags "
                 "version_mismatch. Use to see more routes or to recover from stale_route_set; then inspect, peek or "
                 "follow with the returned route_set_version."),
    params=(
        PID,
        Param("page", "integer", "1-based page.", default=1, minimum=1),
        Param("page_size", "integer", "Routes per page; clamped to 1..10.", default=6),
        Param("route_set_version", "integer", "Version you last saw (for the mismatch flag)."),
    ),
    handler=_routes, timed=True, counts_query=True, read_only=True,
    output_required=("routes", "page", "total_pages", "route_set_version"), shrinkable=("routes",),
))


def _inspect(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).inspect(a["agent_id"], a["perspective_id"], a["route_set_version"], a.get("route_id"),
                               a.get("route_index"))


register(Tool(
    name="perspective_inspect", title="Explain one route", group="perspectives",
    description=("Detail one route without moving: full path with relations, the five score terms and their "
                 "weights, source file and line range (with a staleness flag), target metrics and up to 3 probable "
                 "connections. Pass route_id or route_index, and route_set_version. Then perspective_peek for the "
                 "code or perspective_follow to move there."),
    params=(PID, ROUTE_ID, ROUTE_INDEX, VERSION),
    handler=_inspect, timed=True, counts_query=True, read_only=True,
    output_required=("route_id", "target_node", "score_breakdown", "provenance"),
    shrinkable=("affinity_candidates", "path", "path_relations"),
))


def _peek(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).peek(a["agent_id"], a["perspective_id"], a["route_set_version"], a.get("route_id"),
                            a.get("route_index"), a["max_lines"], a["max_chars"], a["context_lines"])


register(Tool(
    name="perspective_peek", title="Read a route target's code", group="perspectives",
    description=("Return a short excerpt of the source of a route's target (symbol span or first lines of a file), "
                 "read only from inside the ingested roots. Use to decide whether a route is worth following; then "
                 "perspective_follow, or inspect another route."),
    params=(
        PID, ROUTE_ID, ROUTE_INDEX, VERSION,
        Param("max_lines", "integer", "Lines returned at most.", default=40, minimum=5, maximum=200),
        Param("max_chars", "integer", "Characters returned at most.", default=2000, minimum=200,
              maximum=8000),
        Param("context_lines", "integer", "Extra lines before and after a symbol.", default=0, minimum=0,
              maximum=20),
    ),
    handler=_peek, timed=True, counts_query=True, read_only=True,
    output_required=("route_id", "target_node", "content"),
))


def _follow(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).follow(a["agent_id"], a["perspective_id"], a["route_set_version"], a.get("route_id"),
                              a.get("route_index"))


register(Tool(
    name="perspective_follow", title="Move to a route's target", group="perspectives",
    description=("Move the focus along a route: the previous state is checkpointed for perspective_back, routes "
                 "are recomputed from the new focus and route_set_version goes up by one (pass the new one next). "
                 "Then inspect, peek or follow again, or perspective_suggest when unsure."),
    params=(PID, ROUTE_ID, ROUTE_INDEX, VERSION),
    handler=_follow, timed=True, counts_query=True,
    output_required=("previous_focus", "new_focus", "routes", "route_set_version"), shrinkable=("routes",),
))


def _suggest(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).suggest(a["agent_id"], a["perspective_id"], a["route_set_version"])


register(Tool(
    name="perspective_suggest", title="Recommend the next move", group="perspectives",
    description=("Recommend one next action (follow, inspect, branch, back or close) with a reason and a "
                 "confidence, favouring unvisited targets and route families not yet explored. Use when unsure "
                 "which route to take; then do what it says."),
    params=(PID, VERSION),
    handler=_suggest, timed=True, counts_query=True, read_only=True,
    output_required=("suggestion", "based_on"), shrinkable=("alternatives",),
))


def _affinity(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).affinity(a["agent_id"], a["perspective_id"], a["route_set_version"], a.get("route_id"),
                                a.get("route_index"), a["top_k"])


register(Tool(
    name="perspective_affinity", title="Probable connections of a route target", group="perspectives",
    description=("List nodes not directly connected to a route's target that probably relate to it: shared "
                 "neighbours (weighted Jaccard) and similar names or purpose. These are hypotheses, not edges. Use "
                 "to find missing links; confirm with why or perspective_peek."),
    params=(PID, ROUTE_ID, ROUTE_INDEX, VERSION,
            Param("top_k", "integer", "Candidates returned.", default=8, minimum=1, maximum=20)),
    handler=_affinity, timed=True, counts_query=True, read_only=True,
    output_required=("notice", "candidates"), shrinkable=("candidates",),
))


def _branch(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).branch(a["agent_id"], a["perspective_id"], a.get("branch_name"))


register(Tool(
    name="perspective_branch", title="Fork a perspective", group="perspectives",
    description=("Copy a perspective (focus, routes, version, history, visited nodes) into an independent new one "
                 "so two directions can be explored from the same point. Then follow different routes in each and "
                 "perspective_compare them."),
    params=(PID, Param("branch_name", "string", "Unique name in this perspective tree (default branch_<n>).",
                       pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$")),
    handler=_branch, timed=True, counts_query=True,
    output_required=("branch_perspective_id", "branch_name", "branched_from_focus"),
))


def _back(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).back(a["agent_id"], a["perspective_id"])


register(Tool(
    name="perspective_back", title="Undo the last follow", group="perspectives",
    description=("Return to the focus and route set held before the last perspective_follow (recomputed if the "
                 "graph changed meanwhile); route_set_version goes up by one. Use after a dead end; then follow "
                 "another route."),
    params=(PID,),
    handler=_back, timed=True, counts_query=True,
    output_required=("restored_focus", "restored_mode", "route_set_version"), shrinkable=("routes",),
))


def _compare(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).compare(a["agent_id"], a["perspective_id_a"], a["perspective_id_b"], a.get("dimensions"))


register(Tool(
    name="perspective_compare", title="Compare two of your perspectives", group="perspectives",
    description=("Compare the nodes visited by two of your perspectives (shared, unique to each, overlap) and how "
                 "strongly each one's seeds activate its visited nodes per dimension. Use after branching to see "
                 "where two explorations diverged; then close the one you no longer need."),
    params=(
        Param("perspective_id_a", "string", "First perspective.", required=True, min_length=1,
              max_length=100),
        Param("perspective_id_b", "string", "Second perspective.", required=True, min_length=1,
              max_length=100),
        Param("dimensions", "string[]", "Dimensions to compare ([] = all four).", enum=DIMENSIONS, unique_items=True),
    ),
    handler=_compare, timed=True, counts_query=True, read_only=True,
    output_required=("shared_nodes", "unique_to_a", "unique_to_b", "dimension_deltas"),
    shrinkable=("shared_nodes", "unique_to_a", "unique_to_b"),
))


def _list(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).list(a["agent_id"])


register(Tool(
    name="perspective_list", title="List your perspectives", group="perspectives",
    description=("List your open perspectives with focus, mode, route count, staleness, version and memory use, "
                 "plus the limits. Use to resume work after a restart or before closing some; then perspective_routes "
                 "on one to continue it."),
    params=(),
    handler=_list, timed=True, counts_query=True, read_only=True,
    output_required=("perspectives", "total_memory_bytes"), shrinkable=("perspectives",),
))


def _close(ws: Any, a: dict[str, Any]) -> Any:
    return _svc(ws, a).close(a["agent_id"], a["perspective_id"])


register(Tool(
    name="perspective_close", title="Close a perspective", group="perspectives",
    description=("Close a perspective and release its region lock; branches made from it stay open. Use when an "
                 "exploration is done or to get under the limit of 8 open perspectives."),
    params=(PID,),
    handler=_close, timed=True, counts_query=True,
    output_required=("closed", "locks_released"),
))
