"""Pictures of graph results (issue 15 item 7): a neighbourhood, a blast radius (``impact``) or the paths of ``why``
as Mermaid or Graphviz DOT text, and SVG through Graphviz's ``dot`` program when it is installed.

Results are first turned into one small :class:`Diagram` (nodes, edges, the node to emphasise), so each output
format is written once. This module is the only one that runs Graphviz.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

from m1nd.errors import InvalidInputError, M1ndError

FORMATS = ("mermaid", "dot", "svg")
DOT_TIMEOUT_S = 60


@dataclass
class Diagram:
    title: str
    center: str | None = None
    nodes: dict[str, dict[str, str]] = field(default_factory=dict)  # external id -> {label, kind, path}
    edges: list[tuple[str, str, str, bool]] = field(default_factory=list)  # (source, target, label, dashed)

    def node(self, node_id: str, label: str | None = None, kind: str | None = None, path: str | None = None) -> None:
        known = self.nodes.setdefault(node_id, {"label": label or _short(node_id), "kind": kind or "",
                                                "path": path or ""})
        if kind and not known["kind"]:
            known["kind"] = kind

    def edge(self, source: str, target: str, label: str, dashed: bool = False) -> None:
        if (source, target, label, dashed) not in self.edges:
            self.edges.append((source, target, label, dashed))


def _short(node_id: str) -> str:
    return node_id.rsplit("::", 1)[-1] or node_id


# -- results -> diagram ---------------------------------------------------------------------------------------------
def from_neighbourhood(r: dict[str, Any]) -> Diagram:
    d = Diagram(title=f"neighbourhood of {r['center']} (depth {r['depth']})", center=r["center"])
    for n in r["nodes"]:
        d.node(n["node_id"], n["label"], n["kind"], n.get("source_path"))
    for e in r["edges"]:
        d.edge(e["source"], e["target"], e["relation"])
    return d


def from_impact(r: dict[str, Any]) -> Diagram:
    """The source, what it reaches, and the causal chains as edges; an entry no chain explains hangs off the source
    by a dashed edge (forward: the source uses it; reverse: it depends on the source)."""
    d = Diagram(title=f"blast radius of {r['source']} ({r['direction']})", center=r["source"])
    d.node(r["source"], r.get("source_label"))
    explained: set[str] = set()
    for c in r.get("causal_chains", []):
        for a, b, rel, la, lb in zip(c["path"], c["path"][1:], c["relations"], c["labels"], c["labels"][1:]):
            d.node(a, la)
            d.node(b, lb)
            d.edge(a, b, rel)
            explained.add(b)
    for b in r["blast_radius"]:
        d.node(b["node_id"], b["label"], b["kind"])
        if b["node_id"] in explained:
            continue
        label = f"{b.get('via_relation') or 'reaches'} · {b['hop_distance']} hop{'s' if b['hop_distance'] != 1 else ''}"
        if b["direction"] == "forward":
            d.edge(r["source"], b["node_id"], label, dashed=True)
        else:
            d.edge(b["node_id"], r["source"], label, dashed=True)
    return d


def from_why(r: dict[str, Any]) -> Diagram:
    d = Diagram(title=f"why {r['source']} -> {r['target']}", center=r["source"])
    d.node(r["source"])
    d.node(r["target"])
    for p in r["paths"]:
        for a, b, rel, la, lb in zip(p["nodes"], p["nodes"][1:], p["relations"], p["labels"], p["labels"][1:]):
            d.node(a, la)
            d.node(b, lb)
            d.edge(a, b, rel)
    return d


# -- diagram -> text ------------------------------------------------------------------------------------------------
def _ids(d: Diagram) -> dict[str, str]:
    return {node_id: f"n{i}" for i, node_id in enumerate(d.nodes)}


def _mermaid_text(text: str) -> str:
    # Inside a quoted Mermaid label only '"' needs care; entity codes are Mermaid's escape.
    return text.replace('"', "#quot;").replace("\n", " ")


def to_mermaid(d: Diagram) -> str:
    ids = _ids(d)
    lines = ["---", f"title: {_mermaid_text(d.title)}", "---", "flowchart LR"]
    for node_id, n in d.nodes.items():
        sub = " · ".join(x for x in (n["kind"], n["path"]) if x)
        label = _mermaid_text(n["label"]) + (f"<br/><small>{_mermaid_text(sub)}</small>" if sub else "")
        lines.append(f'    {ids[node_id]}["{label}"]')
    for a, b, rel, dashed in d.edges:
        arrow = "-.->" if dashed else "-->"
        lines.append(f'    {ids[a]} {arrow}|"{_mermaid_text(rel)}"| {ids[b]}')
    if d.center in ids:
        lines.append(f"    style {ids[d.center]} stroke-width:3px")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def to_dot(d: Diagram) -> str:
    ids = _ids(d)
    lines = ["digraph m1nd {", f'    label="{_dot_text(d.title)}";', "    labelloc=t;", "    rankdir=LR;",
             '    node [shape=box, style="rounded", fontname="Helvetica", fontsize=11];',
             '    edge [fontname="Helvetica", fontsize=9];']
    for node_id, n in d.nodes.items():
        sub = " · ".join(x for x in (n["kind"], n["path"]) if x)
        label = _dot_text(n["label"]) + (f"\\n{_dot_text(sub)}" if sub else "")
        extra = ", penwidth=3" if node_id == d.center else ""
        lines.append(f'    {ids[node_id]} [label="{label}", tooltip="{_dot_text(node_id)}"{extra}];')
    for a, b, rel, dashed in d.edges:
        style = ", style=dashed" if dashed else ""
        lines.append(f'    {ids[a]} -> {ids[b]} [label="{_dot_text(rel)}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz() -> str | None:
    """Path of Graphviz's ``dot`` program, or None (Debian/Ubuntu: apt install graphviz)."""
    return shutil.which("dot")


def to_svg(d: Diagram) -> str:
    return dot_to_svg(to_dot(d))


def dot_to_svg(dot: str) -> str:
    exe = graphviz()
    if exe is None:
        raise InvalidInputError("SVG needs Graphviz's `dot` program, which is not installed",
                                recover="install Graphviz (Debian/Ubuntu: apt install graphviz), or use "
                                        "--format mermaid or --format dot", code="graphviz_missing")
    try:
        out = subprocess.run([exe, "-Tsvg"], input=dot.encode("utf-8"), capture_output=True,
                             timeout=DOT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise M1ndError(f"Graphviz failed to run: {e}", recover="check the Graphviz installation, or use "
                                                                "--format mermaid") from None
    if out.returncode != 0:
        raise M1ndError(f"Graphviz could not render the diagram: {out.stderr.decode('utf-8', 'replace').strip()}",
                        recover="use --format dot to inspect the input, or --format mermaid")
    return out.stdout.decode("utf-8")


def render(d: Diagram, fmt: str) -> str:
    if fmt == "mermaid":
        return to_mermaid(d)
    if fmt == "dot":
        return to_dot(d)
    if fmt == "svg":
        return to_svg(d)
    raise InvalidInputError(f"unknown diagram format {fmt!r}; formats: {', '.join(FORMATS)}")


VIEWS = ("neighbourhood", "impact", "why")


def draw(graph: Any, node_id: str, *, view: str = "neighbourhood", target: str | None = None, depth: int = 1,
         max_nodes: int = 40, direction: str = "both", fmt: str = "mermaid") -> dict[str, Any]:
    """The ``diagram`` tool's answer: one view around ``node_id`` drawn from the graph service's query (``graph``:
    :class:`m1nd.codegraph.service.CodeGraph`) as ``fmt`` text."""
    if view == "why":
        if not target:
            raise InvalidInputError("view 'why' needs argument 'target' (the other end of the paths)",
                                    details={"argument": "target"})
        d = from_why(graph.why(source=node_id, target=target, max_hops=depth + 3, max_paths=5, path_budget=10000,
                               min_strength=0.0001).to_dict())
    elif view == "impact":
        d = from_impact(graph.impact(node_id=node_id, direction=direction, max_hops=depth, min_signal=0.01,
                                     top_k=max_nodes, include_causal_chains=True, max_chains=10).to_dict())
    else:
        d = from_neighbourhood(graph.neighbourhood(node_id=node_id, depth=depth, max_nodes=max_nodes))
    return {"view": view, "format": fmt, "diagram": render(d, fmt), "nodes": len(d.nodes), "edges": len(d.edges)}
