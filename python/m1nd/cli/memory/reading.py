"""``m1nd memory show``, ``list``, ``search``, ``recent``, and the filter flags list and search share."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from m1nd.cli.memory.common import (acting_agent, emit_json, exclusive, handled, json_option, memory_group,
                                    note, open_service, out, preview, usage)
from m1nd.defaults import LIST_LIMIT, RECENT_DAYS, RECENT_LIMIT, SEARCH_LIMIT
from m1nd.tools.memory_ops import hidden_hint, search_notes


def filter_options(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option("-c", "--category", help="Comma-separated categories."),
        click.option("--mine", is_flag=True, help="Only your own private entries."),
        click.option("--include-private", is_flag=True, help="Add your own private entries."),
        click.option("--min-resonance", type=float, help="Minimum resonance (basis value)."),
        click.option("--max-resonance", type=float, help="Maximum resonance (basis value)."),
        click.option("--resonance-basis", type=click.Choice(["raw", "decayed"]),
                     help="Which value resonance bounds and ordering use (default decayed)."),
        click.option("--has-wake-phrase", is_flag=True, help="Only entries with a wake phrase."),
        click.option("--missing-wake-phrase", is_flag=True, help="Only entries without a wake phrase."),
        click.option("--has-anchors", is_flag=True, help="Only entries with anchors."),
        click.option("--missing-anchors", is_flag=True, help="Only entries without anchors."),
        click.option("--has-resonance-type", is_flag=True, help="Only entries with a resonance type."),
        click.option("--missing-resonance-type", is_flag=True, help="Only entries without a resonance type."),
        click.option("--tags", help="Comma-separated tags (any matches)."),
        click.option("--exclude-tags", multiple=True, help="Comma-separated tag prefixes to drop (pass once)."),
        click.option("--code-ref", help="Only entries about this graph id."),
        click.option("-p", "--project", help="Only entries of this project."),
        click.option("--session-id", help="Only entries of this session."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def build_filters(kw: dict[str, Any]) -> Any:
    from m1nd.tools.memory_ops import default_basis, filters, split_list

    exclusive(**{"--mine": kw["mine"], "--include-private": kw["include_private"]})
    if len(kw["exclude_tags"]) > 1:
        usage("--exclude-tags may be given only once (comma-separate several prefixes)")
    tri = {}
    for a, b in (("has_wake_phrase", "missing_wake_phrase"), ("has_anchors", "missing_anchors"),
                 ("has_resonance_type", "missing_resonance_type")):
        if kw[a] and kw[b]:
            usage(f"--{a.replace('_', '-')} and --{b.replace('_', '-')} cannot be combined")
        tri[a] = True if kw[a] else (False if kw[b] else None)
    return filters(
        categories=split_list(kw["category"]),
        visibility="mine" if kw["mine"] else ("include" if kw["include_private"] else "public"),
        min_resonance=kw["min_resonance"], max_resonance=kw["max_resonance"],
        basis=kw["resonance_basis"] or default_basis("decayed"),
        has_wake_phrase=tri["has_wake_phrase"], has_anchors=tri["has_anchors"],
        has_resonance_type=tri["has_resonance_type"], tags=split_list(kw["tags"]),
        exclude_tags=[p for p in (kw["exclude_tags"][0].split(",") if kw["exclude_tags"] else []) if p.strip()],
        code_ref=kw["code_ref"], project=kw["project"], session_id=kw["session_id"])


def render_blocks(entries: list[Any]) -> None:
    for e in entries:
        out(f"  {e.id} [{e['category_id']}]")
        out(f"  {e['title']}")
        out(f"  {preview(e['summary'] or e['body'], 80)}")
        if e["tags"]:
            out(f"  Tags: {', '.join(e['tags'])}")
        out()


@memory_group.command("show")
@click.argument("entry_id")
@click.option("--content-only", is_flag=True, help="Print only the body.")
@click.option("--max-bytes", type=int, default=28000, show_default=True,
              help="Larger output is written to a file under $TMPDIR instead.")
@json_option
@handled
def show_cmd(entry_id: str, content_only: bool, max_bytes: int, as_json: bool) -> None:
    """Show one entry (activates it)."""
    svc = open_service()
    e = svc.show(entry_id, agent=acting_agent())
    if as_json:
        emit_json(e.to_json())
        return
    if content_only:
        text = e["body"].rstrip("\n")
    else:
        title = e["title"] + (f" ({e['fact_state']})" if e["fact_state"] else "")
        lines = [f"ID:       {e.id}", f"Category: {e['category_id']}", f"Title:    {title}",
                 f"Resonance: {e['resonance']} (effective {e['effective_resonance']:.2f})"]
        if e["resonance_type"]:
            lines.append(f"Resonance Type: {e['resonance_type']}")
        if e["wake_phrases"]:
            lines.append(f"Wake Phrases: {', '.join(e['wake_phrases'])}")
        if e["tags"]:
            lines.append(f"Tags:     {', '.join(e['tags'])}")
        if e["applicability"]:
            lines.append(f"Applicability: {', '.join(e['applicability'])}")
        if e["anchors"]:
            lines.append(f"Anchors:  {', '.join(e['anchors'])}")
        if e["code_refs"]:
            lines.append(f"Code refs: {', '.join(e['code_refs'])}")
        if e["visibility"] == "private":
            lines.append("Visibility: private")
            lines.append(f"Owner:    {e['owner']}")
        if e["session_id"]:
            lines.append(f"Session:  {e['session_id']}")
        lines.append(f"Created:  {e['created_at']}")
        lines.append(f"Updated:  {e['updated_at']}")
        lines.append("")
        lines.append(e["body"])
        text = "\n".join(lines)
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        path = Path(os.environ.get("TMPDIR") or tempfile.gettempdir()) / f"m1nd-memory-{e.id}.md"
        path.write_text(text, encoding="utf-8")
        out(f"Memory {e.id} is {size} bytes ({text.count(chr(10)) + 1} lines).")
        out(f"Content written to: {path}")
        out("Read the file to see full content.")
        return
    if content_only:
        click.echo(text, nl=False)
    else:
        out(text)


@memory_group.command("list")
@filter_options
@click.option("--sort", type=click.Choice(["updated", "created", "resonance", "id"]), default="updated",
              show_default=True)
@click.option("--limit", type=click.IntRange(min=1), default=LIST_LIMIT, show_default=True)
@json_option
@handled
def list_cmd(sort: str, limit: int, as_json: bool, **kw: Any) -> None:
    """List entries (public by default; --include-private / --mine for yours)."""
    f = build_filters(kw)
    res = open_service().list_entries(f, agent=acting_agent(), sort=sort, limit=limit)
    if res.hidden_private:
        note(hidden_hint(res.hidden_private))
    if as_json:
        emit_json([e.to_json() for e in res.entries])
    elif not res.entries:
        out("No entries found")
    else:
        out(f"Found {len(res.entries)} entries:")
        out()
        render_blocks(res.entries)


@memory_group.command("search")
@click.argument("query")
@filter_options
@click.option("--semantic", is_flag=True, help="Search by meaning (needs an embedding model).")
@click.option("--hybrid", is_flag=True, help="Fuse keyword and semantic results.")
@click.option("--activate", is_flag=True, help="Activate the results (reset their decay clock).")
@click.option("--limit", type=click.IntRange(min=1), default=SEARCH_LIMIT, show_default=True)
@json_option
@handled
def search_cmd(query: str, semantic: bool, hybrid: bool, activate: bool, limit: int, as_json: bool,
               **kw: Any) -> None:
    """Keyword search (FTS5, bm25-ranked); --semantic / --hybrid when a model is installed."""
    exclusive(**{"--semantic": semantic, "--hybrid": hybrid})
    f = build_filters(kw)
    mode = "semantic" if semantic else ("hybrid" if hybrid else "keyword")
    res = open_service().search(query, f, agent=acting_agent(), limit=limit, activate=activate, mode=mode)
    for n in search_notes(res):
        note(n)
    if as_json:
        emit_json([e.to_json() for e in res.entries])
    elif not res.entries:
        out(f"No results for '{query}'")
    else:
        out(f"Found {len(res.entries)} results:")
        out()
        render_blocks(res.entries)


@memory_group.command("recent")
@click.option("--days", type=int, default=RECENT_DAYS, show_default=True)
@click.option("--limit", type=click.IntRange(min=1), default=RECENT_LIMIT, show_default=True)
@click.option("--resonance-type", help="Only this resonance type (default: ephemeral unless --all-types).")
@click.option("--all-types", is_flag=True, help="Every resonance type.")
@click.option("--sort", type=click.Choice(["chronological", "resonance"]), default="chronological",
              show_default=True)
@click.option("--resonance-basis", type=click.Choice(["raw", "decayed"]))
@json_option
@handled
def recent_cmd(days: int, limit: int, resonance_type: str | None, all_types: bool, sort: str,
               resonance_basis: str | None, as_json: bool) -> None:
    """Recent (ephemeral by default) entries, decayed."""
    from m1nd.tools.memory_ops import default_basis

    rows = open_service().recent(agent=acting_agent(), days=days, limit=limit, resonance_type=resonance_type,
                             all_types=all_types, sort=sort, basis=resonance_basis or default_basis("decayed"))
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        out("No recent entries found")
    for r in rows:
        state = f" ({r.state})" if r.state else ""
        out(f"[{r.created_at[:10]}] {r.type}{state}: {preview(r.content, 60)} ({r.id}, "
            f"resonance {r.resonance})")
