"""The ``diagram`` tool (issue 15 item 7): Mermaid text of a neighbourhood, a blast radius or the paths between two
nodes, for hosts that render Mermaid in chat. A thin adapter onto :mod:`m1nd.diagram`."""

from __future__ import annotations

from typing import Any

from m1nd.errors import InvalidInputError
from m1nd.tools.registry import Param, Tool, register

VIEWS = ("neighbourhood", "impact", "why")


def _diagram(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd import diagram

    view = a["view"]
    if view == "why":
        if not a.get("target"):
            raise InvalidInputError("view 'why' needs argument 'target' (the other end of the paths)",
                                    details={"argument": "target"})
        d = diagram.from_why(ws.graph.why(source=a["node_id"], target=a["target"], max_hops=a["depth"] + 3,
                                          max_paths=5, path_budget=10000, min_strength=0.0001))
    elif view == "impact":
        d = diagram.from_impact(ws.graph.impact(node_id=a["node_id"], direction=a["direction"],
                                                max_hops=a["depth"], min_signal=0.01, top_k=a["max_nodes"],
                                                include_causal_chains=True, max_chains=10))
    else:
        d = diagram.from_neighbourhood(ws.graph.neighbourhood(node_id=a["node_id"], depth=a["depth"],
                                                              max_nodes=a["max_nodes"]))
    text = diagram.render(d, a["format"])
    return {"view": view, "format": a["format"], "diagram": text, "nodes": len(d.nodes), "edges": len(d.edges)}


register(Tool(
    name="diagram", title="Draw part of the graph", group="diagram",
    description=("Draw a node's neighbourhood (view=neighbourhood, depth hops both ways), its blast radius "
                 "(view=impact) or the paths to a target (view=why) as Mermaid text (or Graphviz DOT). Use to "
                 "show a user the structure around a change; `m1nd graph NODE --format svg` writes SVG."),
    params=(
        Param("node_id", "string", "External id of the node to draw around.", required=True, min_length=1,
              max_length=2000),
        Param("view", "string", "What to draw.", default="neighbourhood", enum=VIEWS),
        Param("target", "string", "Other end of the paths (view=why).", max_length=2000),
        Param("depth", "integer", "Hops from the node.", default=1, minimum=1, maximum=4),
        Param("max_nodes", "integer", "Nodes drawn at most.", default=40, minimum=2, maximum=200),
        Param("direction", "string", "Blast radius direction (view=impact).", default="both",
              enum=("forward", "reverse", "both")),
        Param("format", "string", "mermaid or dot text.", default="mermaid", enum=("mermaid", "dot")),
    ),
    handler=_diagram, counts_query=True,
    read_only=True, output_required=("view", "format", "diagram", "nodes", "edges"),
))
