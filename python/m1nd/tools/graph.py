"""Graph and lifecycle tools (activation.md, graph.md §15): thin adapters onto ``Workspace.graph``."""

from __future__ import annotations

from typing import Any

from m1nd.defaults import (
    ACTIVATE_MAX_HOPS,
    ACTIVATE_MAX_PER_FILE,
    ACTIVATE_MAX_SEEDS,
    ACTIVATE_TOP_K,
    DECAY,
    GIT_WINDOW_DAYS,
    IMPACT_MAX_CHAINS,
    IMPACT_MAX_HOPS,
    IMPACT_MIN_SIGNAL,
    IMPACT_TOP_K,
    THRESHOLD,
    WHY_MAX_HOPS,
    WHY_MAX_PATHS,
    WHY_MIN_STRENGTH,
    WHY_PATH_BUDGET,
)
from m1nd.graph.activation import DIMENSIONS
from m1nd.graph.nodes import KIND_NAMES
from m1nd.graph.schema import INVERSE_RELATION_CODES, RELATION_CODES
from m1nd.tools import hints
from m1nd.tools.registry import Param, Tool, register

RELATION_NAMES = tuple(RELATION_CODES) + tuple(n for n in INVERSE_RELATION_CODES if n not in RELATION_CODES)


def _ingest(ws: Any, a: dict[str, Any]) -> Any:
    keys = ("mode", "namespace", "incremental", "include_dotfiles", "dotfile_patterns", "exclude", "max_file_bytes",
            "git_window_days", "embed")
    return ws.graph.ingest(a["path"], **{k: a[k] for k in keys if k in a})


register(Tool(
    name="ingest", title="Ingest a repository", group="lifecycle",
    description=("Parse a repository (Python, JS/TS, Go, Rust, Java, markdown, config) into the code graph with git "
                 "history; re-ingest is incremental. Use when health reports an empty graph or after large "
                 "changes; then activate, why or impact."),
    params=(
        Param("path", "string", "Repository root (or a file inside an ingested root).", required=True, min_length=1,
              max_length=4096),
        Param("mode", "string", "replace: the only root; merge: add a secondary root.", default="replace",
              enum=("replace", "merge")),
        Param("namespace", "string", "Id prefix of a secondary root.", pattern=r"^[a-z][a-z0-9_-]{0,31}$"),
        Param("incremental", "boolean", "Reuse unchanged files.", default=True),
        Param("include_dotfiles", "boolean", "Also parse dotfiles.", default=False),
        Param("dotfile_patterns", "string[]", "Dotfiles to include (glob).", max_items=50, max_length=500),
        Param("exclude", "string[]", "gitignore-style patterns to skip.", max_items=200, max_length=500),
        Param("max_file_bytes", "integer", "Skip larger files.", default=1048576, minimum=1024,
              maximum=16777216),
        Param("git_window_days", "integer", "History window for co-change.", default=GIT_WINDOW_DAYS, minimum=1,
              maximum=3650),
        Param("embed", "string", "Code vectors: in the background, now, or not.", default="background",
              enum=("background", "sync", "skip")),
    ),
    handler=_ingest, destructive=True, timed=True, elapsed_before=("warnings",),
    output_required=("files_scanned", "nodes", "edges", "graph_generation", "changed"),
    shrinkable=("warnings", "files_cut"),
))


def _activate(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    return ws.activation(a["agent_id"], a["query"], include_memory=a["include_memory"], top_k=a["top_k"],
                         dimensions=a.get("dimensions"), max_hops=a["max_hops"], decay=a["decay"],
                         threshold=a["threshold"], max_seeds=a["max_seeds"], node_kinds=a.get("node_kinds"),
                         path_prefix=a.get("path_prefix"), include_ghost_edges=a["include_ghost_edges"],
                         include_structural_holes=a["include_structural_holes"],
                         coactivation_ltp=a["coactivation_ltp"], max_per_file=a["max_per_file"],
                         group_by=a["group_by"], history_before=a.get("history_before"),
                         code_only=a["code_only"]).to_dict()


register(Tool(
    name="activate", title="Find related code", group="graph",
    description=("Rank the code most related to a query: a text match over every definition's name, body and path "
                 "(BM25F; identifiers and backticked words count double), then spreading activation over the code "
                 "graph (calls, imports, tests, change history); implementation ranks above tests and docs unless "
                 "the query asks for them. Use first on a task, with the change or issue text as the query; "
                 "group_by=file for distinct files; then learn, why, impact or perspective_start."),
    params=(
        Param("query", "string", "Words, identifiers, a file path or an external id.", required=True, min_length=1,
              max_length=2000),
        Param("top_k", "integer", "Results returned.", default=ACTIVATE_TOP_K, minimum=1, maximum=200),
        Param("dimensions", "string[]", "Signals used (default all).", min_items=1, unique_items=True,
              enum=DIMENSIONS),
        Param("max_hops", "integer", "Spreading depth.", default=ACTIVATE_MAX_HOPS, minimum=1, maximum=10),
        Param("decay", "number", "Energy kept per hop.", default=DECAY, minimum=0.05, maximum=0.95),
        Param("threshold", "number", "Energy below which spreading stops.", default=THRESHOLD, minimum=0.001,
              maximum=0.5),
        Param("max_seeds", "integer", "Text matches used as seeds.", default=ACTIVATE_MAX_SEEDS, minimum=1,
              maximum=200),
        Param("node_kinds", "string[]", "Result filter by kind.", enum=KIND_NAMES, unique_items=True),
        Param("path_prefix", "string", "Result filter by relpath prefix.", max_length=1000),
        Param("code_only", "boolean", "Result filter: implementation code only (no tests, docs, config or "
              "markup files).", default=False),
        Param("include_ghost_edges", "boolean", "Report co-activated unlinked pairs.", default=True),
        Param("include_structural_holes", "boolean", "Report likely missing links.", default=False),
        Param("include_memory", "boolean", "Add memory entries about the results.", default=False),
        Param("coactivation_ltp", "boolean", "Strengthen co-activated edges.", default=True),
        Param("max_per_file", "integer", "Results of one file placed before every other file has had its turn "
              "(diversity); 0 keeps the raw score order.", default=ACTIVATE_MAX_PER_FILE, minimum=0, maximum=200),
        Param("group_by", "string", "node: ranked nodes; file: also `files`, the top_k distinct files with their "
              "best nodes and line ranges.", default="node", enum=("node", "file")),
        Param("history_before", "integer", "Count only commits older than this Unix time (seconds) in the "
              "change-history match; for evaluating on the repository's own recent commits.", minimum=0,
              maximum=2**53),
    ),
    handler=_activate, hint=hints.activate, hint_before=("truncated",), timed=True, elapsed_before=("stale",),
    counts_query=True,
    output_required=("query", "seeds", "activated", "semantic_backend", "graph_generation", "elapsed_ms"),
    shrinkable=("activated", "files", "ghost_edges", "structural_holes", "seeds", "related_memories"),
))


def _why(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    g = ws.graph
    return g.why(source=a["source"], target=a["target"], max_hops=a["max_hops"], max_paths=a["max_paths"],
                 path_budget=a["path_budget"], min_strength=a["min_strength"],
                 relations=a.get("relations") or None).to_dict()


register(Tool(
    name="why", title="Explain how two nodes connect", group="graph",
    description=("List the strongest simple paths between two external ids (edges followed both ways, ranked by "
                 "cumulative strength). Use to explain a link found by activate or impact; then learn or "
                 "hypothesize."),
    params=(
        Param("source", "string", "External id of the start node.", required=True, min_length=1,
              max_length=2000),
        Param("target", "string", "External id of the end node.", required=True, min_length=1,
              max_length=2000),
        Param("max_hops", "integer", "Longest path.", default=WHY_MAX_HOPS, minimum=1, maximum=8),
        Param("max_paths", "integer", "Paths returned.", default=WHY_MAX_PATHS, minimum=1, maximum=50),
        Param("path_budget", "integer", "Paths explored at most.", default=WHY_PATH_BUDGET, minimum=100,
              maximum=200000),
        Param("min_strength", "number", "Drop weaker paths.", default=WHY_MIN_STRENGTH, minimum=0, maximum=1),
        Param("relations", "string[]", "Edge kinds followed (default all).", enum=RELATION_NAMES,
              unique_items=True),
    ),
    handler=_why, hint=hints.why, timed=True, counts_query=True, read_only=True,
    output_required=("source", "target", "paths", "total_paths_found", "budget_exhausted"), shrinkable=("paths",),
))


def _impact(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    g = ws.graph
    return g.impact(node_id=a["node_id"], direction=a["direction"], max_hops=a["max_hops"],
                    min_signal=a["min_signal"], top_k=a["top_k"], relations=a.get("relations") or None,
                    include_causal_chains=a["include_causal_chains"], max_chains=a["max_chains"]).to_dict()


register(Tool(
    name="impact", title="Blast radius of a change", group="graph",
    description=("Estimate what a change to one node affects: signal spread forward (what it uses) and reverse "
                 "(callers, importers, tests that may break), with causal chains. Use before editing; then why to "
                 "explain an entry."),
    params=(
        Param("node_id", "string", "External id of the node being changed.", required=True, min_length=1,
              max_length=2000),
        Param("direction", "string", "forward: what it uses; reverse: what uses it.", default="both",
              enum=("forward", "reverse", "both")),
        Param("max_hops", "integer", "Spreading depth.", default=IMPACT_MAX_HOPS, minimum=1, maximum=10),
        Param("min_signal", "number", "Drop weaker nodes.", default=IMPACT_MIN_SIGNAL, minimum=0.001, maximum=0.5),
        Param("top_k", "integer", "Nodes returned.", default=IMPACT_TOP_K, minimum=1, maximum=500),
        Param("relations", "string[]", "Edge kinds followed (default all).", enum=RELATION_NAMES,
              unique_items=True),
        Param("include_causal_chains", "boolean", "Explain each entry's path.", default=True),
        Param("max_chains", "integer", "Chains returned.", default=IMPACT_MAX_CHAINS, minimum=0, maximum=50),
    ),
    handler=_impact, hint=hints.impact, timed=True, counts_query=True, read_only=True,
    output_required=("source", "direction", "blast_radius", "total_energy", "causal_chains"),
    shrinkable=("blast_radius", "causal_chains", "tests_affected"),
))


def _health(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    return ws.health(a["agent_id"])


register(Tool(
    name="health", title="Server and graph health", group="lifecycle",
    description=("Report whether the graph is ingested, its size and generations, learned-weight persistence, "
                 "the embedder, git state and agents. Call first in a session; if the graph is empty, call ingest."),
    params=(), handler=_health, hint=hints.health, read_only=True,
    output_required=("status", "node_count", "edge_count", "graph_generation", "embedder"),
    shrinkable=("agents", "ingest_roots", "warnings"),
))
