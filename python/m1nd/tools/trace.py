"""The ``trace`` tool (issue 15 item 6): an error output or stack trace in, ranked suspects out. A thin adapter onto
:meth:`m1nd.codegraph.service.CodeGraph.trace` (parsing is :mod:`m1nd.stacktrace`, mapping and ranking
:mod:`m1nd.graph.suspects`)."""

from __future__ import annotations

from typing import Any

from m1nd.defaults import TRACE_MAX_HOPS, TRACE_TOP_K
from m1nd.tools import hints
from m1nd.tools.registry import Param, Tool, register


def _trace(ws: Any, a: dict[str, Any]) -> Any:
    return ws.graph.trace(a["trace"], top_k=a["top_k"], max_hops=a["max_hops"])


register(Tool(
    name="trace", title="Suspects of a stack trace", group="graph",
    description=("Paste an error output or stack trace (Python, JavaScript/TypeScript, Go, Rust, Java): its frames "
                 "are mapped to graph nodes by file and line and suspects ranked by spreading activation from them, "
                 "innermost frames strongest; frames outside the graph are listed as unmapped with the reason. Use "
                 "when debugging a failure; then why or impact on a suspect."),
    params=(
        Param("trace", "string", "The error output or stack trace, as printed.", required=True, min_length=1,
              max_length=200_000),
        Param("top_k", "integer", "Suspects returned.", default=TRACE_TOP_K, minimum=1, maximum=100),
        Param("max_hops", "integer", "How far suspicion spreads from the frames.", default=TRACE_MAX_HOPS,
              minimum=0,
              maximum=6),
    ),
    handler=_trace, hint=hints.trace, timed=True, counts_query=True,
    read_only=True, output_required=("frames_total", "mapped", "unmapped", "suspects"),
    shrinkable=("suspects", "mapped", "unmapped"),
))
