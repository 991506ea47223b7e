"""Trail tools (learning.md §8–§11): thin adapters onto :mod:`m1nd.codegraph.trails`."""

from __future__ import annotations

from typing import Any

from m1nd.defaults import TRAIL_LIST_LIMIT
from m1nd.tools import hints
from m1nd.tools.registry import Param, Tool, register
from m1nd.tools.learning import SchemaParam
from m1nd.codegraph.trails import STATUSES, TAG_PATTERN, TRAIL_ID_PATTERN


def _captured_nodes(ws: Any, agent_id: str) -> list[str]:
    """Visited nodes of the caller's open perspectives (learning.md §8 capture)."""
    try:
        from m1nd.perspectives.service import service_for
    except ImportError:  # perspectives not available: nothing to capture
        return []
    return [str(x) for x in service_for(ws).visited_nodes(agent_id)]


def _save(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.codegraph.trails import save

    captured = _captured_nodes(ws, a["agent_id"]) if "visited_nodes" not in a else None
    return save(ws.graph, a["agent_id"], a["label"], hypotheses=a.get("hypotheses"),
                conclusions=a.get("conclusions"), open_questions=a.get("open_questions"), tags=a.get("tags"),
                summary=a.get("summary"), visited_nodes=a.get("visited_nodes"),
                activation_boosts=a.get("activation_boosts"), captured_nodes=captured).to_dict()


register(Tool(
    name="trail_save", title="Save an investigation", group="trails",
    description=("Save the current investigation as a shared trail: visited nodes, hypotheses (with supporting / "
                 "contradicting node ids), conclusions, open questions, tags and activation boosts. Without "
                 "visited_nodes the nodes of your open perspectives and hypotheses are captured. Use before ending "
                 "a session or before context compaction; later trail_resume restores it."),
    params=(
        Param("label", "string", "Short name of the investigation.", required=True, min_length=1, max_length=200),
        Param("hypotheses", "object[]", "{statement, confidence=0.5, supporting_nodes=[], contradicting_nodes=[]}",
              default=(), max_items=100),
        Param("conclusions", "object[]", "{statement, confidence=0.5, from_hypotheses=[statements], "
              "supporting_nodes=[]}", default=(), max_items=100),
        Param("open_questions", "string[]", "Questions still open.", default=(), max_items=100,
              max_length=1000),
        Param("tags", "string[]", "Tags to find the trail by.", default=(), max_items=50,
              pattern=TAG_PATTERN),
        Param("summary", "string", "Generated when omitted.", max_length=2000),
        Param("visited_nodes", "object[]", "{node_external_id, annotation, relevance=0.5}; captured when omitted.",
              max_items=2000),
        Param("activation_boosts", "object", "node id -> boost in [0, 1] re-injected on resume; derived when "
              "omitted."),
    ),
    handler=_save, timed=True, counts_query=True,
    output_required=("trail_id", "nodes_saved", "hypotheses_saved", "graph_generation_at_creation", "created_at_ms"),
))


def _resume(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.codegraph.trails import resume

    return resume(ws.graph, a["agent_id"], a["trail_id"], force=a["force"], max_listed=a["max_listed"]).to_dict()


register(Tool(
    name="trail_resume", title="Resume an investigation", group="trails",
    description=("Restore a saved trail (any agent's): re-injects its activation boosts into YOUR next activations, "
                 "reports nodes that vanished since it was saved and downgrades hypotheses that lost support. "
                 "Stale trails (over half the nodes gone) need force=true. Use at session start after trail_list; "
                 "then activate or perspective_start from next_focus_node."),
    params=(
        SchemaParam("trail_id", "string", "From trail_save or trail_list.", required=True, max_length=100,
                    schema_extra=(("pattern", TRAIL_ID_PATTERN),)),
        Param("force", "boolean", "Resume even when stale.", default=False),
        Param("max_listed", "integer", "Cap on missing_nodes.", default=20, minimum=0, maximum=200),
    ),
    handler=_resume, timed=True, counts_query=True,
    output_required=("trail_id", "stale", "generations_behind", "missing_nodes", "nodes_reactivated",
                     "hypotheses_downgraded", "trail"),
    shrinkable=("missing_nodes", "hypotheses_downgraded", "open_questions"),
))


def _list(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.codegraph.trails import list_trails

    return list_trails(ws.graph, filter_agent_id=a.get("filter_agent_id"), filter_status=a.get("filter_status"),
                       filter_tags=a.get("filter_tags"), limit=a["limit"]).to_dict()


register(Tool(
    name="trail_list", title="List saved investigations", group="trails",
    description=("List saved trails of every agent, newest first, with status (saved, active, archived, merged, "
                 "stale), counts, tags and summary; filter by agent, status or tags. Use at session start or "
                 "before merging; then trail_resume or trail_merge."),
    params=(
        Param("filter_agent_id", "string", "Only this agent's trails.", max_length=64),
        Param("filter_status", "string", "Only this status.", enum=STATUSES),
        Param("filter_tags", "string[]", "Any of these tags.", default=(), max_items=50, max_length=64),
        Param("limit", "integer", "Trails returned.", default=TRAIL_LIST_LIMIT, minimum=1, maximum=500),
    ),
    handler=_list, hint=hints.trail_list, timed=True, elapsed_before=("hint",), counts_query=True, read_only=True,
    output_required=("trails", "total_count"), shrinkable=("trails",),
))


def _merge(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.codegraph.trail_merge import merge

    return merge(ws.graph, a["agent_id"], a["trail_ids"], label=a.get("label")).to_dict()


register(Tool(
    name="trail_merge", title="Merge investigations", group="trails",
    description=("Combine 2-10 trails (e.g. from parallel agents) into a new trail: fuses equal hypotheses, "
                 "resolves contradicting ones by confidence and recency (unresolved when too close), and reports "
                 "graph edges bridging the investigations. Sources become merged. Then trail_resume the new trail."),
    params=(
        Param("trail_ids", "string[]", "2 to 10 distinct trail ids.", required=True, min_items=2, max_items=10,
              max_length=100),
        Param("label", "string", "Defaults to 'merge: <label1> + <label2> …'.", min_length=1, max_length=200),
    ),
    handler=_merge, timed=True, counts_query=True,
    output_required=("merged_trail_id", "source_trails", "nodes_merged", "conflicts", "connections_discovered"),
    shrinkable=("connections_discovered", "conflicts"),
))
