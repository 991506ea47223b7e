"""The ``diagram`` tool (issue 15 item 7): Mermaid text of a neighbourhood, a blast radius or the paths between two
nodes, for hosts that render Mermaid in chat. A thin adapter onto :mod:`m1nd.diagram`."""

from __future__ import annotations

from typing import Any

from m1nd.diagram import VIEWS
from m1nd.tools.registry import Param, Tool, register


def _diagram(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd import diagram

    return diagram.draw(ws.graph, a["node_id"], view=a["view"], target=a.get("target"), depth=a["depth"],
                        max_nodes=a["max_nodes"], direction=a["direction"], fmt=a["format"])


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
