"""Learning and trail commands: ``m1nd learn``, ``m1nd drift``, ``m1nd trail list|show|resume|merge|archive``,
``m1nd weights stats|reset`` (spec mcp.md §10, learning.md §12).

``learn``, ``drift``, ``trail list|resume|merge`` are tool shortcuts (same validation, shaping and errors as
``m1nd call``); ``trail show|archive`` and ``weights`` call the services directly. A CLI process holds no server
state: ``learn`` recomputes its seeds, and boosts injected by ``trail resume`` end with the process.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

import click

from m1nd.cli.app import CliContext
from m1nd.cli.graph import make_shortcut
from m1nd.errors import M1ndError


def _obj() -> CliContext:
    return click.get_current_context().find_root().obj


def _print_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False))


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- text renderers (mcp.md §10) ---------------------------------------------------------------------------------
def render_learn(r: dict[str, Any]) -> list[str]:
    out = [(f"Adjusted {r['edges_adjusted']} edges on {r['nodes_affected']} nodes (rate {r['plasticity_delta']}, "
            f"seeds {r['seed_source']})")]
    if r.get("hint"):
        out.append(f"hint: {r['hint']}")
    return out


def render_drift(r: dict[str, Any]) -> list[str]:
    b = r["baseline"]
    out = [(f"Since the {b['kind']} baseline of {_iso(b['created_ms'])}: nodes {r['node_count_delta']:+d}, "
            f"edges {r['edge_count_delta']:+d}")]
    for d in r.get("top_weight_drifts", []):
        out.append(f"{d['delta']:+.3f}  {d['edge']}")
    return out


def render_trail_list(r: dict[str, Any]) -> list[str]:
    if not r["trails"]:
        return ["No trails"]
    return [f"{t['trail_id']}  {t['status']:<8} {t['label']}  ({t['node_count']} nodes)" for t in r["trails"]]


def render_resume(r: dict[str, Any]) -> list[str]:
    return [(f"Resumed {r['trail_id']}: {r['nodes_reactivated']} nodes reactivated, "
             f"{len(r['hypotheses_downgraded'])} hypotheses downgraded, {r['generations_behind']} generations behind")]


def render_merge(r: dict[str, Any]) -> list[str]:
    return [(f"Merged into {r['merged_trail_id']}: {r['nodes_merged']} nodes, {r['hypotheses_merged']} hypotheses, "
             f"{len(r['conflicts'])} conflicts, {len(r['connections_discovered'])} connections")]


def render_show(t: dict[str, Any]) -> list[str]:
    out = [f"{t['trail_id']}  {t['status']}  {t['label']}", t["summary"]]
    for title, items in (("Hypotheses:", t["hypotheses"]), ("Conclusions:", t["conclusions"])):
        if items:
            out.append(title)
            out += [f"  [{x['confidence']:.2f}] {x['statement']}" for x in items]
    if t["open_questions"]:
        out.append("Open questions:")
        out += [f"  {q}" for q in t["open_questions"]]
    n = len({v["node_external_id"] for v in t["visited_nodes"]} | set(t["activation_boosts"])
            | {x for h in t["hypotheses"] for x in (*h.get("supporting_nodes", []), *h.get("contradicting_nodes", []))}
            | {x for c in t["conclusions"] for x in c.get("supporting_nodes", [])})
    out.append(f"Nodes: {n}")
    return out


def render_stats(r: dict[str, Any]) -> list[str]:
    out = [f"edges: {r['edges_total']}", f"strengthened: {r['strengthened']}", f"weakened: {r['weakened']}",
           f"mean |w - w0|: {r['mean_abs_change']:.6f}", f"weights generation: {r['weights_generation']}"]
    out += [f"{d['delta']:+.3f}  {d['edge']}" for d in r["top"]]
    return out


# -- service-backed commands ---------------------------------------------------------------------------------
def _with_workspace(fn: Any, *, as_json: bool = False, plain_errors: bool = False) -> Any:
    obj = _obj()
    try:
        return fn(obj.workspace)
    except M1ndError as e:
        if as_json:
            click.echo(json.dumps({"error": e.to_dict()}, indent=2, ensure_ascii=False), err=True)
        elif plain_errors:
            click.echo(f"Error: {e.message.removesuffix('; call trail_list')}", err=True)
        else:
            click.echo(f"Error ({e.code}): {e.message} Recover: {e.recover}", err=True)
        sys.exit(1)
    finally:
        if "workspace" in obj.__dict__:
            obj.workspace.close()


@click.command("show")
@click.argument("trail_id")
@click.option("--json", "json_out", is_flag=True, help="Print the stored trail as JSON.")
def trail_show(trail_id: str, json_out: bool) -> None:
    """Show one stored trail in full (trails are shared by every agent)."""
    t = _with_workspace(lambda ws: ws.trail_show(trail_id), as_json=json_out, plain_errors=True).to_dict()
    if json_out:
        _print_json(t)
    else:
        for line in render_show(t):
            click.echo(line)


@click.command("archive")
@click.argument("trail_id")
def trail_archive(trail_id: str) -> None:
    """Mark a trail archived (it stays listed with --filter-status archived)."""
    _with_workspace(lambda ws: ws.trail_archive(trail_id), plain_errors=True)
    click.echo(f"Archived trail {trail_id}")


@click.command("stats")
@click.option("--json", "json_out", is_flag=True, help="Print the statistics as JSON.")
def weights_stats(json_out: bool) -> None:
    """Counts of learned edges (w above / below w0), mean |w - w0| and the largest changes."""
    r = _with_workspace(lambda ws: ws.weight_stats(), as_json=json_out).to_dict()
    if json_out:
        _print_json(r)
    else:
        for line in render_stats(r):
            click.echo(line)


@click.command("reset")
@click.option("--yes", is_flag=True, help="Apply the reset (without it, only print what would change).")
@click.option("--relation", default=None, help="Only edges of this relation (e.g. calls).")
@click.option("--node", default=None, help="Only edges touching this external id.")
def weights_reset(yes: bool, relation: str | None, node: str | None) -> None:
    """Reset learned weights to their base weights w0 (all edges, or those selected by --relation / --node)."""
    r = _with_workspace(lambda ws: ws.weights_reset(relation=relation, node=node, apply=yes))
    scope = " and ".join(x for x in (f"relation {relation}" if relation else "", f"node {node}" if node else "") if x)
    scope = f" ({scope})" if scope else ""
    if yes:
        click.echo(f"Reset {r.edges_selected} learned edges to w0{scope}; weights generation "
                   f"{r.weights_generation}")
    else:
        click.echo(f"Would reset {r.edges_selected} learned edges to w0{scope} (mean |w - w0| "
                   f"{r.mean_abs_change:.4f}); pass --yes to apply")


@click.command("migrate")
@click.option("--to", "to", required=True, metavar="TARGET",
              help="postgresql://user[:password]@host[:port]/db (the workspace's project there), or local (this "
                   "workspace's graph.db).")
@click.option("--replace", is_flag=True, help="Overwrite a target that already holds trails or learned weights.")
@click.option("--json", "json_out", is_flag=True, help="Print the result as JSON.")
def learning_migrate(to: str, replace: bool, json_out: bool) -> None:
    """Copy this workspace's trails, learn log and learned weights from the store in use (M1ND_MEMORY_URL /
    --memory-url, else graph.db) to TARGET, in one transaction on the target with row counts verified; the
    source is left as it was. The knowledge memory moves with `m1nd memory migrate`."""
    r = _with_workspace(lambda ws: ws.learning_migrate(to, replace=replace), as_json=json_out)
    if json_out:
        _print_json(r.to_dict())
        return
    t = r.tables
    skipped = f", {r.learned_weights_skipped} for edges this graph lacks skipped" if r.learned_weights_skipped \
        else ""
    click.echo(f"Copied {t['trails']} trails, {t['learn_log']} learn events and {r.learned_weights_applied} "
               f"learned weights{skipped} to {r.target} (row counts verified).")


def register(cli: click.Group) -> None:
    cli.add_command(make_shortcut(
        "learn", ("query", "feedback", "node_ids"), lambda r, a: render_learn(r),
        "Feedback on QUERY's results: FEEDBACK is correct, wrong or partial; NODE_ID... the nodes concerned."))
    cli.add_command(make_shortcut(
        "drift", (), lambda r, a: render_drift(r),
        "What changed since a baseline (default: the previous server start): nodes and learned weights."))

    @click.group("trail")
    def trail() -> None:
        """Saved investigations (shared by every agent): list, show, resume, merge, archive."""

    trail.add_command(make_shortcut("trail_list", (), lambda r, a: render_trail_list(r),
                                    "List saved trails, newest first.", command_name="list"))
    trail.add_command(trail_show)
    trail.add_command(make_shortcut(
        "trail_resume", ("trail_id",), lambda r, a: render_resume(r),
        "Resume TRAIL_ID (status, hypothesis downgrades; boosts last only for this process).",
        command_name="resume"))
    trail.add_command(make_shortcut("trail_merge", ("trail_ids",), lambda r, a: render_merge(r),
                                    "Merge two or more trails into a new one.", command_name="merge"))
    trail.add_command(trail_archive)
    cli.add_command(trail)

    @click.group("weights")
    def weights() -> None:
        """Learned edge weights: statistics and reset."""

    weights.add_command(weights_stats)
    weights.add_command(weights_reset)
    cli.add_command(weights)

    @click.group("learning")
    def learning() -> None:
        """Trails and learned weights as a whole: move them between graph.db and a team server."""

    learning.add_command(learning_migrate)
    cli.add_command(learning)
