"""Agent-facing hints: the next step a tool result suggests, in the tools' own vocabulary.

Services answer with data; what an agent should do with an answer (which tool next, which argument to change) is
the tool layer's to say. Each function reads a result's fields (and the call's validated arguments) and returns the
``hint`` text, or None when the result needs none. The result is what the tool's handler answered: the service's
typed result (read by attribute: ``learn``'s hint quotes labels that are on the result but not on the wire), or the
wire dict (``Result``) for the tools whose handler converts it or composes its answer.
:func:`m1nd.tools.registry.call_tool` places the hint (a tool's ``hint_before`` keeps the key where it has always
been in the result).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from m1nd.codegraph.results import HealthReport, LearnResult
    from m1nd.graph.results import TraceResult
    from m1nd.perspectives.results import PerspectiveStarted

Result = dict[str, Any]
Args = dict[str, Any]


def activate(r: Result, a: Args) -> str:
    if r["activated"]:
        return "then: learn (feedback on these results), why SOURCE TARGET, impact NODE, or perspective_start"
    return "no code matched; try other words (identifiers, file names), or why/impact with an external id"


def why(r: Result, a: Args) -> str | None:
    if r["paths"]:
        return None
    return (f"no path within {a['max_hops']} hops; raise max_hops (up to 8) or path_budget, or test the relationship "
            "with hypothesize")


def impact(r: Result, a: Args) -> str:
    if not r["total_reached"]:
        return "nothing reached: try direction='both', a lower min_signal, or more max_hops"
    if r["direction"] != "reverse":
        return "reverse entries (callers, importers, tests) are what may break; run why to explain one link"
    return "run why SOURCE TARGET to explain a link, or learn to teach which entries mattered"


def warmup(r: Result, a: Args) -> str:
    return "later activate calls by this agent are primed toward these nodes"


def missing(r: Result, a: Args) -> str | None:
    if r["structural_holes"]:
        return None
    return "no structural hole found; lower min_sibling_activation or broaden the query"


def trace(r: TraceResult, a: Args) -> str | None:
    if r.mapped:  # a mapped frame seeds the spreading: suspects follow
        return None
    if r.frames_total:
        return ("no frame matched an ingested file: ingest the repository the trace comes from, or check that the "
                "trace names its files")
    return "no stack frame recognised (Python, JavaScript/TypeScript, Go, Rust and Java traces are read)"


def trail_list(r: Result, a: Args) -> str | None:
    return None if r["trails"] else "no trail matches; save one with trail_save at the end of an investigation"


def perspective_start(r: PerspectiveStarted, a: Args) -> str:
    return (f"next: perspective_inspect / perspective_peek / perspective_follow with a route_id and "
            f"route_set_version={r.route_set_version}")


def health(r: HealthReport, a: Args) -> str | None:
    return "call ingest with path=<repo root>" if r.node_count == 0 else None


def learn(r: LearnResult, a: Args) -> str | None:
    if not r.seeds_used:
        words = " ".join(dict.fromkeys(r.reported_labels))
        return (f"no seed matched the query, so only direct edges among the reported nodes could change; next time "
                f"pass a query that names the code, e.g. \"{words}\"")
    if not r.edges_adjusted and r.plasticity_delta > 0:
        return ("nothing changed: the reported nodes are the query's own seeds, already at the weight bound, or not "
                "linked to the seeds within max_path_hops (raise it, or check the link with why)")
    return None
