"""Graph and lifecycle commands. Each shortcut runs its tool exactly as ``m1nd call`` does (same validation,
shaping and errors); this module only maps flags to arguments and renders text."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from m1nd.cli.app import CliContext


def _obj() -> CliContext:
    return click.get_current_context().find_root().obj


def _agent() -> str:
    return _obj().agent or "cli"


def run_tool(name: str, args: dict[str, Any], *, as_json: bool) -> dict[str, Any]:
    """Run one tool in-process; on error print it the CLI way and exit 1."""
    from m1nd.tools.registry import call_tool

    obj = _obj()
    args = {"agent_id": _agent(), **args}
    try:
        res = call_tool(obj.workspace, name, args)
    finally:
        if "workspace" in obj.__dict__:
            obj.workspace.close()
    if res.is_error:
        if as_json:
            click.echo(json.dumps(res.structured, indent=2, ensure_ascii=False), err=True)
        else:
            click.echo(res.text(), err=True)
        sys.exit(1)
    return res.structured


def _print_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False))


# -- text renderers (spec mcp.md §10) -----------------------------------------------------------------------------
def render_activate(r: dict[str, Any]) -> list[str]:
    lines = []
    if r["seeds"]:
        lines.append("Seeds: " + ", ".join(s["label"] for s in r["seeds"]))
    if not r["activated"]:
        lines.append(r.get("hint", "no result"))
    if r.get("files"):
        for k, f in enumerate(r["files"], 1):
            lines.append(f"{k:>2}. {f['score']:.3f}  {f['source_path']}")
            for nd in f["nodes"]:
                lines.append(f"      {nd['activation']:.3f}  {nd['kind']:<9} {nd['label']} "
                             f"(lines {nd['line_start']}-{nd['line_end']})")
        return lines
    for k, a in enumerate(r["activated"], 1):
        lines.append(f"{k:>2}. {a['activation']:.3f}  {a['kind']:<9} {a['node_id']}")
    return lines


def render_why(r: dict[str, Any], max_hops: int) -> list[str]:
    if not r["paths"]:
        return [f"No path within {max_hops} hops", r.get("hint", "")]
    out = []
    for i, p in enumerate(r["paths"], 1):
        chain = p["labels"][0]
        for rel, lab in zip(p["relations"], p["labels"][1:]):
            chain += f" -{rel}-> {lab}"
        out.append(f"{i}. strength {p['cumulative_strength']:.4f}, {p['hops']} hops: {chain}")
    return out


def render_impact(r: dict[str, Any]) -> list[str]:
    out = [f"{b['signal_strength']:.3f}  hop {b['hop_distance']}  {b['direction']:<7} {b['node_id']}"
           for b in r["blast_radius"]]
    out.append(f"{r['total_reached']} nodes, {r['files_affected']} files, {len(r['tests_affected'])} tests affected")
    return out


def render_health(r: dict[str, Any]) -> list[str]:
    e = r["embedder"]
    out = [f"status: {r['status']}", f"nodes: {r['node_count']}", f"edges: {r['edge_count']}",
           f"graph generation: {r['graph_generation']}", f"weights generation: {r['weights_generation']}",
           f"embedder: {e.get('model_id') or 'none'} (available: {'yes' if e.get('available') else 'no'})"]
    if r.get("core"):
        c = r["core"]
        out.append(f"core: {c['abi']}, {'bounds-checked' if c['boundscheck'] else 'unchecked'} "
                   f"{c['build_type'] or 'default'} build, {c['compiler']}")
    out += list(r.get("warnings", []))
    if r.get("hint"):
        out.append(f"hint: {r['hint']}")
    return out


def render_ingest(r: dict[str, Any]) -> list[str]:
    out = [(f"Ingested {r['root']}: {r['files_parsed']} parsed, {r['files_reused']} reused, {r['files_removed']} "
            f"removed; {r['nodes']['total']} nodes, {r['edges']['total']} edges; generation {r['graph_generation']}")]
    for f in r.get("files_cut") or []:
        out.append(f"  partly extracted: {f['path']}: {f['cut']}")
    return out


# -- generic flag mapping --------------------------------------------------------------------------------------
def _option_for(p: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    flag = "--" + p.name.replace("_", "-")
    help_text = p.description or None
    if p.type == "boolean":
        return click.option(f"{flag}/--no-{p.name.replace('_', '-')}", p.name, default=None, help=help_text)
    if p.type == "integer":
        return click.option(flag, p.name, type=int, default=None, help=help_text)
    if p.type == "number":
        return click.option(flag, p.name, type=float, default=None, help=help_text)
    if p.type.endswith("[]"):
        return click.option(flag, p.name, default=None, help=(help_text or "") + " (comma-separated)")
    if p.type == "object":
        return click.option(flag, p.name, default=None, help=(help_text or "") + " (JSON)")
    return click.option(flag, p.name, default=None, help=help_text)


def _collect(tool: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for p in tool.all_params:
        if p.name == "agent_id":
            continue
        v = kwargs.get(p.name)
        if v is None:
            continue
        if p.type.endswith("[]") and isinstance(v, str):
            v = [x.strip() for x in v.split(",") if x.strip()]
        elif p.type.endswith("[]") and isinstance(v, tuple):
            v = list(v)
        elif p.type == "object":
            try:
                v = json.loads(v)
            except json.JSONDecodeError as e:
                raise click.BadParameter(f"not valid JSON: {e}", param_hint=f"--{p.name.replace('_', '-')}") from e
        args[p.name] = v
    return args


def write_picture(text: str, out: str | None) -> None:
    """A diagram to stdout, or to ``--out FILE``."""
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise click.BadParameter(f"cannot write {out}: {e.strerror}", param_hint="--out") from e
    click.echo(f"wrote {out}", err=True)


def make_shortcut(tool_name: str, positionals: tuple[str, ...], render: Callable[[dict[str, Any], dict[str, Any]],
                  list[str]], help_text: str, command_name: str | None = None,
                  picture: str | None = None) -> click.Command:
    """``picture``: the :mod:`m1nd.diagram` function turning the result into a diagram (adds --format/--out)."""
    from m1nd.tools.registry import load_all

    tool = load_all()[tool_name]

    def callback(**kwargs: Any) -> None:
        as_json = kwargs.pop("json_out")
        fmt = kwargs.pop("picture_format", None)
        out = kwargs.pop("picture_out", None)
        args = _collect(tool, kwargs)
        result = run_tool(tool_name, args, as_json=as_json)
        if fmt is not None:
            from m1nd import diagram

            write_picture(diagram.render(getattr(diagram, picture)(result), fmt), out)
            return
        if as_json:
            _print_json(result)
        else:
            for line in render(result, args):
                click.echo(line)

    params: list[click.Parameter] = []
    for name in positionals:
        p = tool.param(name)
        nargs = -1 if p is not None and p.type.endswith("[]") else 1
        params.append(click.Argument([name], nargs=nargs, required=True))
    cmd = click.Command(command_name or tool_name, callback=callback, help=help_text, params=params)
    for p in tool.all_params:
        if p.name in positionals or p.name == "agent_id":
            continue
        _option_for(p)(cmd)
    click.option("--json", "json_out", is_flag=True, help="Print the tool's structured result as JSON.")(cmd)
    if picture is not None:
        click.option("--out", "picture_out", metavar="FILE", help="Write the diagram to FILE (with --format).")(cmd)
        click.option("--format", "picture_format", type=click.Choice(["mermaid", "dot", "svg"]),
                     help="Draw the result as a diagram instead (svg needs Graphviz's dot).")(cmd)
    return cmd


def register(cli: click.Group) -> None:
    cli.add_command(make_shortcut(
        "activate", ("query",), lambda r, a: render_activate(r),
        "Rank the code most related to QUERY (words, identifiers, a path or an external id)."))
    cli.add_command(make_shortcut(
        "why", ("source", "target"), lambda r, a: render_why(r, a.get("max_hops", 6)),
        "Explain how SOURCE and TARGET (external ids) connect: strongest simple paths.", picture="from_why"))
    cli.add_command(make_shortcut(
        "impact", ("node_id",), lambda r, a: render_impact(r),
        "Blast radius of changing NODE_ID: what it reaches forward and what depends on it.",
        picture="from_impact"))
    cli.add_command(graph_cmd)
    cli.add_command(trace_cmd)
    cli.add_command(make_shortcut(
        "health", (), lambda r, a: render_health(r), "Graph, store, embedder and git health."))
    cli.add_command(ingest_cmd)
    cli.add_command(tools_cmd)
    cli.add_command(call_cmd)


@click.command("graph")
@click.argument("node_id")
@click.option("--depth", type=click.IntRange(1, 4), default=1, show_default=True, help="Hops from NODE_ID.")
@click.option("--max-nodes", type=click.IntRange(2, 200), default=40, show_default=True, help="Nodes drawn at most.")
@click.option("--format", "fmt", type=click.Choice(["mermaid", "dot", "svg"]), default="mermaid", show_default=True,
              help="Mermaid or Graphviz DOT text, or SVG (needs Graphviz's dot).")
@click.option("--out", metavar="FILE", help="Write the diagram to FILE instead of stdout.")
def graph_cmd(node_id: str, depth: int, max_nodes: int, fmt: str, out: str | None) -> None:
    """Draw the neighbourhood of NODE_ID (an external id): the nodes within --depth hops and the edges among them."""
    result = run_tool("diagram", {"node_id": node_id, "depth": depth, "max_nodes": max_nodes,
                                  "format": "mermaid" if fmt == "mermaid" else "dot", "max_output_chars": 100000},
                      as_json=False)
    text = result["diagram"]
    if fmt == "svg":
        from m1nd.diagram import dot_to_svg

        text = dot_to_svg(text)
    write_picture(text, out)


def render_trace(r: dict[str, Any]) -> list[str]:
    out = [f"{len(r['mapped'])} of {r['frames_total']} frames mapped"]
    if r.get("hint"):
        out.append(r["hint"])
    for k, s in enumerate(r["suspects"], 1):
        mark = "frame" if s["in_trace"] else f"+{s['hops_from_trace']} hop"
        out.append(f"{k:>2}. {s['score']:.3f}  {mark:<7} {s['kind']:<6} {s['node_id']} "
                   f"(lines {s['line_start']}-{s['line_end']})")
    if r["unmapped"]:
        out.append("Not mapped:")
        out += [f"  {f['path'] or f['text']}:{f['line'] or '?'}  ({f['reason']})" for f in r["unmapped"]]
    return out


@click.command("trace")
@click.argument("source", required=False, default="-", metavar="[FILE]")
@click.option("--top-k", type=click.IntRange(1, 100), default=10, show_default=True, help="Suspects returned.")
@click.option("--max-hops", type=click.IntRange(0, 6), default=3, show_default=True,
              help="How far suspicion spreads from the frames.")
@click.option("--json", "as_json", is_flag=True, help="Print the tool's structured result as JSON.")
def trace_cmd(source: str, top_k: int, max_hops: int, as_json: bool) -> None:
    """Rank the code suspected by an error output or stack trace read from FILE (default: stdin): frames are mapped
    to nodes by file and line, then suspicion spreads over the graph."""
    try:
        if source == "-":
            text = click.get_text_stream("stdin").read()
        else:
            with open(source, encoding="utf-8", errors="replace") as f:
                text = f.read()
    except OSError as e:
        raise click.BadParameter(f"cannot read {source}: {e.strerror}", param_hint="FILE") from e
    if not text.strip():
        raise click.BadParameter("the trace is empty: pass a file or pipe the error output in", param_hint="FILE")
    r = run_tool("trace", {"trace": text, "top_k": top_k, "max_hops": max_hops, "max_output_chars": 100000},
                 as_json=as_json)
    if as_json:
        _print_json(r)
    else:
        for line in render_trace(r):
            click.echo(line)


@click.command("ingest")
@click.argument("path")
@click.option("--merge", is_flag=True, help="Add PATH as a secondary root instead of replacing the graph.")
@click.option("--namespace", default=None, help="Id prefix of a secondary root (with --merge).")
@click.option("--full", is_flag=True, help="Re-extract every file (ignore the incremental cache).")
@click.option("--exclude", multiple=True, help="gitignore-style pattern to skip (repeatable).")
@click.option("--embed", type=click.Choice(["background", "sync", "skip"]), default=None,
              help="Code-node embeddings: sync waits for them here; background (default) leaves them to the server.")
@click.option("--json", "json_out", is_flag=True, help="Print the ingest report as JSON.")
def ingest_cmd(path: str, merge: bool, namespace: str | None, full: bool, exclude: tuple[str, ...],
               embed: str | None, json_out: bool) -> None:
    """Parse the repository at PATH into the code graph (incremental; progress on stderr).

    Without --workspace (or $M1ND_WORKSPACE), a replacing ingest stores the graph in the workspace of PATH itself
    (its git top-level, else PATH), so that commands run later from inside that repository find it.
    """
    import os
    from pathlib import Path

    os.environ.setdefault("M1ND_PROGRESS", "1")
    obj = _obj()
    if not merge and obj.workspace_path is None and not os.environ.get("M1ND_WORKSPACE"):
        target = Path(path).expanduser()
        if target.is_dir():
            from m1nd.config import git_toplevel

            obj.workspace_path = str(git_toplevel(target.absolute()) or target.absolute())
    args: dict[str, Any] = {"path": path}
    if merge:
        args["mode"] = "merge"
    if namespace:
        args["namespace"] = namespace
    if full:
        args["incremental"] = False
    if exclude:
        args["exclude"] = list(exclude)
    if embed:
        args["embed"] = embed
    r = run_tool("ingest", args, as_json=json_out)
    if json_out:
        _print_json(r)
    else:
        for line in render_ingest(r):
            click.echo(line)
        for w in r.get("warnings", [])[:10]:
            click.echo(f"warning: {w}", err=True)


@click.command("tools")
@click.option("--json", "json_out", is_flag=True, help="Print the tools/list entries as JSON.")
@click.option("--profile", default="all", show_default=True, metavar="PROFILE",
              help="List what `m1nd serve --tools PROFILE` offers: core, graph, memory, perspectives or all.")
def tools_cmd(json_out: bool, profile: str) -> None:
    """List the tools (of a profile) with their descriptions."""
    from m1nd.tools.profiles import check_profile, listed_params, profile_tools
    from m1nd.tools.registry import load_all

    tools = load_all()
    profile = check_profile(profile, "--profile")
    names = profile_tools(profile, tools)
    if json_out:
        _print_json([tools[n].listing(listed_params(profile, n)) for n in names])
        return
    for n in names:
        click.echo(f"{n:<22} {tools[n].description}")


@click.command("call")
@click.argument("tool")
@click.argument("arguments", required=False, default="{}")
def call_cmd(tool: str, arguments: str) -> None:
    """Run TOOL in-process with ARGUMENTS (JSON text, or @file.json); prints structuredContent as JSON."""
    if arguments.startswith("@"):
        try:
            with open(arguments[1:], encoding="utf-8") as f:
                arguments = f.read()
        except OSError as e:
            raise click.BadParameter(f"cannot read {arguments[1:]}: {e.strerror}", param_hint="ARGUMENTS") from e
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError as e:
        raise click.BadParameter(f"not valid JSON: {e}", param_hint="ARGUMENTS") from e
    if not isinstance(args, dict):
        raise click.BadParameter("must be a JSON object", param_hint="ARGUMENTS")
    from m1nd.tools.registry import TOOLS, load_all, unknown_tool_message

    load_all()
    if tool not in TOOLS:
        click.echo(f"Error (invalid_argument): {unknown_tool_message(tool)}", err=True)
        sys.exit(1)
    r = run_tool(tool, args, as_json=True)
    _print_json(r)
