"""Learning tools (learning.md §2, §4, §5): ``learn``, ``drift`` and the lifecycle tool ``persist``.

Thin adapters onto :mod:`m1nd.codegraph.learning` and :mod:`m1nd.codegraph.baselines`. A few constraints are
declared for the schema only (:class:`SchemaParam`) and checked by the service, so that their error messages are
exactly the ones the spec tables give (``feedback must be "correct", "wrong" or "partial" (got "x")``) rather than
the generic validator's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from m1nd.defaults import DRIFT_MAX_LIST, DRIFT_TOP_N, LEARN_PATH_HOPS, LEARN_PATHS_PER_PAIR, LEARN_STRENGTH
from m1nd.tools import hints
from m1nd.tools.registry import Param, Tool, register


@dataclass(frozen=True)
class SchemaParam(Param):
    """A parameter whose extra schema keywords (``schema_extra``) are advertised but validated by the handler."""

    schema_extra: tuple[tuple[str, Any], ...] = ()

    def schema(self) -> dict[str, Any]:
        s = super().schema()
        for k, v in self.schema_extra:
            s[k] = list(v) if isinstance(v, tuple) else v
        return s


NODE_LIST: dict[str, Any] = {"max_items": 100, "max_length": 2000}


def _learn(ws: Any, a: dict[str, Any]) -> Any:
    from m1nd.codegraph.learning import learn

    return learn(ws.graph, a["agent_id"], a["query"], a["feedback"], a["node_ids"], strength=a["strength"],
                 wrong_node_ids=a.get("wrong_node_ids"), max_path_hops=a["max_path_hops"],
                 paths_per_pair=a["paths_per_pair"])


register(Tool(
    name="learn", title="Teach the graph from results", group="learning",
    description=("Give feedback on the results of a query (activate, impact, why...): correct strengthens the "
                 "graph paths from the query's seeds to node_ids, wrong weakens the links to irrelevant node_ids, "
                 "partial confirms node_ids and rejects wrong_node_ids. Committed at once; later activations by "
                 "every agent rank better. Use right after using results; then drift shows cumulative changes."),
    params=(
        Param("query", "string", "The query the feedback is about (same text as the activate call).", required=True,
              min_length=1, max_length=2000),
        SchemaParam("feedback", "string", "correct, wrong or partial.", required=True,
                    schema_extra=(("enum", ("correct", "wrong", "partial")),)),
        Param("node_ids", "string[]", "correct: the relevant results; wrong: the irrelevant ones; partial: the "
              "confirmed ones.", required=True, min_items=1, **NODE_LIST),
        SchemaParam("strength", "number", "Learning rate (0 = no-op).", default=LEARN_STRENGTH,
                    schema_extra=(("minimum", 0.0), ("maximum", 1.0))),
        Param("wrong_node_ids", "string[]", "Rejected results of a partial answer (only with feedback=partial).",
              default=(), **NODE_LIST),
        Param("max_path_hops", "integer", "Length of the linking paths.", default=LEARN_PATH_HOPS, minimum=1,
              maximum=5),
        Param("paths_per_pair", "integer", "Strongest paths used per (seed, node) pair.",
              default=LEARN_PATHS_PER_PAIR, minimum=1,
              maximum=10),
    ),
    handler=_learn, hint=hints.learn, timed=True, elapsed_before=("query",), counts_query=True,
    output_required=("edges_adjusted", "nodes_affected", "plasticity_delta"),
    shrinkable=("pairs_without_path", "seeds_used"),
))


def _drift(ws: Any, a: dict[str, Any]) -> Any:
    from m1nd.codegraph.baselines import drift

    return drift(ws.graph, since=a["since"], include_weight_drift=a["include_weight_drift"], top_n=a["top_n"],
                 max_list=a["max_list"])


register(Tool(
    name="drift", title="What changed since last session", group="learning",
    description=("Compare the graph with a saved baseline: nodes added/removed and the learned edge weights that "
                 "moved most (strengthened or weakened by feedback). since: last_session (state at the previous "
                 "server start), this_session, an ISO-8601 time or epoch ms. Use at session start to recover "
                 "context; then trail_list or activate."),
    params=(
        Param("since", "string", "last_session, this_session, an ISO-8601 time or epoch milliseconds.",
              default="last_session", min_length=1, max_length=100),
        Param("include_weight_drift", "boolean", "Include learned-weight changes.", default=True),
        Param("top_n", "integer", "Weight drifts listed.", default=DRIFT_TOP_N, minimum=1, maximum=200),
        Param("max_list", "integer", "Cap on new_nodes and removed_nodes.", default=DRIFT_MAX_LIST, minimum=0,
              maximum=500),
    ),
    handler=_drift, timed=True, counts_query=True, read_only=True,
    output_required=("since", "baseline", "node_count_delta", "edge_count_delta", "new_nodes", "removed_nodes"),
    shrinkable=("top_weight_drifts", "new_nodes", "removed_nodes"),
))


PERSIST_ACTIONS = ("save", "status", "baseline")


def _persist(ws: Any, a: dict[str, Any]) -> Any:
    from m1nd.codegraph.learning import persist

    return persist(ws.graph, a["action"])


register(Tool(
    name="persist", title="Save learned weights / record a baseline", group="lifecycle",
    description=("Learned weights are saved automatically (every 50 queries, on shutdown); explicit learn feedback "
                 "is saved at once. action=save flushes now, status reports unsaved learning, baseline records a "
                 "manual snapshot that drift can compare against later (pass its time as since)."),
    params=(
        Param("action", "string", "save, status or baseline.", required=True, enum=PERSIST_ACTIONS),
    ),
    handler=_persist, timed=True,
    output_required=("action", "dirty_weights", "weights_generation"),
))
