"""``m1nd memory …``: the knowledge-memory commands (spec memory.md). Adapters only: parse flags, call one
:class:`m1nd.memory.service.MemoryService` method, render text or JSON.

Conventions of the memory group (memory.md §7): ``--json`` prints pretty JSON (2-space indent) on stdout and nothing
else; errors print ``Error: <message>`` on stderr (with ``--json``: ``{"status": "error", "error": <code>,
"message": …}``), nothing on stdout, exit 1; command-line usage errors exit 2; notices and progress go to stderr.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from m1nd.errors import M1ndError

# -- plumbing ---------------------------------------------------------------------------------------------------


def _obj() -> Any:
    return click.get_current_context().find_root().obj


def _agent() -> str | None:
    obj = _obj()
    return getattr(obj, "agent", None) if obj is not None else (os.environ.get("M1ND_CURRENT_AGENT") or None)


def _service(*, apply_schema: bool | None = None) -> Any:
    from m1nd.memory.service import MemoryService, env_truthy

    ctx = click.get_current_context()
    obj = _obj()
    settings = obj.settings
    if apply_schema is None:
        apply_schema = not env_truthy("M1ND_SKIP_SCHEMA")
    from m1nd.memory.semantic import vector_hook_for  # issue 6: embeddings (None when no model is installed)

    hook = vector_hook_for(settings.memory_db, busy_timeout_ms=settings.busy_timeout_ms, url=settings.memory_url)
    svc = MemoryService(settings.memory_store, busy_timeout_ms=settings.busy_timeout_ms, apply_schema=apply_schema,
                        vector_hook=hook)
    ctx.call_on_close(svc.close)
    if hook is not None:
        ctx.call_on_close(hook.close)
    return svc


def out(text: str = "") -> None:
    click.echo(text)


def note(text: str) -> None:
    click.echo(text, err=True)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def fail(err: M1ndError, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"status": "error", "error": err.code, "message": err.message}, ensure_ascii=False),
                   err=True)
    else:
        click.echo(f"Error: {err.message}", err=True)
    raise SystemExit(1)


def handled(f: Callable[..., Any]) -> Callable[..., Any]:
    """Turn service errors into the memory group's error convention (exit 1)."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except M1ndError as e:
            fail(e, bool(kwargs.get("as_json")))
        except BrokenPipeError:
            raise SystemExit(0) from None
    return wrapper


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print pretty JSON on stdout.")(f)


def usage(msg: str) -> None:
    raise click.UsageError(msg)


def exclusive(**named: Any) -> None:
    given = [k for k, v in named.items() if v not in (None, False, ())]
    if len(given) > 1:
        usage(f"{' and '.join(given)} cannot be combined")


def preview(text: str | None, n: int) -> str:
    s = " ".join((text or "").split())
    return s if len(s) <= n else s[: n - 3] + "..."


def read_stdin_or(content: str | None, file: str | None, *, trim_stdin: bool = True) -> str:
    from m1nd.memory.fields import read_content_file

    if content is not None:
        return content
    if file is not None:
        return read_content_file(file)
    data = sys.stdin.read()
    return data.rstrip() if trim_stdin else data


@click.group("memory", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
def memory_group() -> None:
    """Knowledge memory: entries with categories, tags, resonance and visibility (memory.db, shared by every
    workspace). Identity: --agent NAME or M1ND_CURRENT_AGENT."""


def register(cli: click.Group) -> None:
    # The command table (cli.app.COMMANDS) loads m1nd.cli.memory_vectors, which adds embed and auto-anchor (issue 6)
    # to this group and then calls this function: this module never imports that one (no import cycle).
    cli.add_command(memory_group, "memory")


# -- add ---------------------------------------------------------------------------------------------------------

FACT_FORBIDDEN = {"category": "--category", "title": "--title", "anchors": "--anchors",
                  "wake_phrase": "--wake-phrase", "wake_phrases": "--wake-phrases", "wake_order": "--wake-order",
                  "applicability": "--applicability", "project": "--project", "source_type": "--source-type",
                  "entry_type": "--entry-type", "ephemeral": "--ephemeral", "domain": "--domain",
                  "content_type": "--content-type", "visibility": "--visibility", "owner": "--owner",
                  "resonance_type": "--resonance-type"}


@memory_group.command("add")
@click.option("--category", help="Category (m1nd memory categories list). Required unless --type.")
@click.option("-t", "--title", help="Title (1..500 characters). Required unless --type.")
@click.option("--content", help="Inline content.")
@click.option("-f", "--file", "--content-file", "file", help="Read content from a file ('-' = stdin).")
@click.option("--tags", help="Comma-separated tags.")
@click.option("-a", "--applicability", help="Comma-separated applicability contexts.")
@click.option("-p", "--project", help="Source project id.")
@click.option("--source-agent", help="Source agent (default: the acting agent).")
@click.option("--source-type", help="manual (default), ram, cache, agent_session.")
@click.option("--entry-type", help="primary (default), summary, synthesis.")
@click.option("--session-id", help="Session the entry belongs to (enables write-boundary dedup).")
@click.option("--ephemeral", is_flag=True, default=None, help="Mark the entry ephemeral.")
@click.option("-d", "--domain", help="Domain / subdomain path.")
@click.option("--content-type", help="text (default), code, config, data, binary.")
@click.option("--private", is_flag=True, default=None, help="Private to its owner (= --visibility private).")
@click.option("--visibility", help="public or private.")
@click.option("--owner", help="Owner of a private entry (default: the acting agent).")
@click.option("--resonance", type=int, help="Resonance (any integer; > 10 transcendent).")
@click.option("--resonance-type", help="foundational, transformative, relational, operational, ephemeral, session.")
@click.option("--wake-phrase", help="One wake phrase.")
@click.option("--wake-phrases", help="Comma-separated wake phrases.")
@click.option("--wake-order", type=int, help="Wake order (lower = earlier).")
@click.option("--anchors", help="Comma-separated entry ids this entry connects to.")
@click.option("--code-ref", "code_refs", multiple=True, help="Graph id the entry is about (repeatable).")
@click.option("--type", "fact_type", help="Fact type: decision, insight, person, quote, thread_opened, commitment, "
              "thread_closed (routes the category and generates the title).")
@click.option("--session", help="Session of a fact (= --session-id). Requires --type.")
@click.option("--thread-id", help="Thread to close (with --type thread_closed).")
@click.option("--no-auto-anchor", is_flag=True, help="Skip automatic anchoring.")
@click.option("--no-embed", is_flag=True, help="Skip embedding on write.")
@click.option("--allow-duplicate", is_flag=True, default=None, help="Write even if identical this session.")
@json_option
@handled
def add_cmd(as_json: bool, no_auto_anchor: bool, no_embed: bool, **kw: Any) -> None:
    """Add an entry (or a fact with --type)."""
    exclusive(**{"--content": kw["content"], "--file": kw["file"]})
    exclusive(**{"--private": kw["private"], "--visibility": kw["visibility"]})
    fact = kw.pop("fact_type")
    if fact is None:
        for k in ("session", "thread_id"):
            if kw[k] is not None:
                usage(f"--{k.replace('_', '-')} requires --type")
        if not kw["category"]:
            usage("Missing option '--category' (required unless --type is given)")
        if kw["title"] is None:
            usage("Missing option '-t' / '--title' (required unless --type is given)")
    else:
        bad = [flag for k, flag in FACT_FORBIDDEN.items() if kw.get(k) not in (None, ())]
        if bad:
            usage(f"{', '.join(bad)} cannot be used with --type (facts route their own category and title)")
    raw = {k: v for k, v in kw.items() if v not in (None, ())}
    if "code_refs" in raw:
        raw["code_refs"] = list(raw["code_refs"])
    if fact is not None:
        raw["type"] = fact
    svc = _service()
    res = svc.add(raw, agent=_agent(), no_embed=no_embed, no_auto_anchor=no_auto_anchor)
    for n in res.notes:
        note(n)
    js, kind = res.data, res.extra["kind"]
    if kind == "added" or kind == "fact":
        bypass = js.get("dedup") == "bypassed_no_session"
        if as_json:
            emit_json(js)
            return
        if bypass:
            note("  (dedup bypassed: no --session-id provided)")
        if kind == "fact":
            out(f"Added fact: {js['id']}")
            out(f"  Type: {js['fact_type']}")
            out(f"  Category: {js['category']}")
            out(f"  Content: {preview_keep(res.extra['body'], 200)}")
            return
        out(f"Added entry: {js['id']}")
        out(f"  Category: {js['category']}")
        out(f"  Title: {js['title']}")
        out(f"  Visibility: {js['visibility']}")
        if js["owner"]:
            out(f"  Owner: {js['owner']}")
        if js["resonance"]:
            out(f"  Resonance: {js['resonance']}")
        for label, key in (("Resonance Type", "resonance_type"), ("Tags", "tags"), ("Applicability", "applicability"),
                           ("Anchors", "anchors"), ("Wake Phrases", "wake_phrases"), ("Code refs", "code_refs")):
            v = js.get(key)
            if v:
                out(f"  {label}: {', '.join(v) if isinstance(v, list) else v}")
    elif kind == "skipped":
        if as_json:
            emit_json(js)
        else:
            out(f"Already saved as {js['id']} (identical entry this session — nothing to do).")
    else:  # closed
        if as_json:
            emit_json(js)
        else:
            out(f"Closed thread: {js['id']}")


def preview_keep(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


@memory_group.command("add-batch")
@click.option("-f", "--file", "file", help="JSONL file (one JSON object per line); stdin when omitted.")
@click.option("--no-embed", is_flag=True, help="Skip embedding for the whole batch.")
@click.option("--no-auto-anchor", is_flag=True, help="Skip automatic anchoring.")
@json_option
@handled
def add_batch_cmd(file: str | None, no_embed: bool, no_auto_anchor: bool, as_json: bool) -> None:
    """Add many entries from JSONL (partial success: bad lines are reported, the rest is written)."""
    from m1nd.errors import InvalidInputError

    if file is None or file == "-":
        text, base = sys.stdin.read(), Path.cwd()
    else:
        p = Path(file).expanduser()
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InvalidInputError(f"cannot read {file}: {getattr(e, 'strerror', None) or e}") from None
        base = p.absolute().parent
    lines = text.splitlines()
    svc = _service()
    total_lines = sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#"))

    def progress(i: int, total: int) -> None:
        note(f"progress: {i}/{total} lines written")

    res = svc.add_batch(lines, agent=_agent(), base_dir=base, no_embed=no_embed, no_auto_anchor=no_auto_anchor,
                        progress=progress if total_lines >= 2000 else None)
    for n in res["bypassed"]:
        note(f"  line {n}: (dedup bypassed: no session provided)")
    failed = res["failed"]
    if as_json:
        data = {"added": res["added"], "already_saved": res["already_saved"], "failed": failed,
                "embedded": res["embedded"]}
        if "embed_deferred" in res:
            data["embed_deferred"] = res["embed_deferred"]
        emit_json(data)
    else:
        for n, kind, item in sorted(res["events"], key=lambda e: e[0]):
            if kind == "added":
                out(f"  [{n}] Added entry: {item['id']} ({item['title']})")
            elif kind == "fact":
                out(f"  [{n}] Added fact: {item['id']}")
            elif kind == "closed":
                out(f"  [{n}] Closed thread: {item['id']}")
            else:
                out(f"  [{n}] Already saved: {item['id']} ({item['title']}) — identical this session, no action")
    if failed:
        note(f"\nBatch errors ({len(failed)} of {total_lines} entries failed):")
        for f_ in failed:
            note(f"  line {f_['line']}: {f_['error']}")
    n_new = sum(1 for a in res["added"] if a["kind"] in ("added", "fact"))
    if n_new and res["embedded"] < n_new:
        note(f"\n(embed skipped for {n_new - res['embedded']} entries — run `m1nd memory embed --all` to embed)")
    if not as_json:
        out(f"\nBatch complete: {len(res['added'])} added, {len(res['already_saved'])} already saved "
            f"(no action needed), {len(failed)} failed.")
    if failed:
        raise SystemExit(1)


# -- reading -----------------------------------------------------------------------------------------------------


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
    from m1nd.memory.fields import split_list
    from m1nd.memory.service import Filters, default_basis

    exclusive(**{"--mine": kw["mine"], "--include-private": kw["include_private"]})
    if len(kw["exclude_tags"]) > 1:
        usage("--exclude-tags may be given only once (comma-separate several prefixes)")
    tri = {}
    for a, b in (("has_wake_phrase", "missing_wake_phrase"), ("has_anchors", "missing_anchors"),
                 ("has_resonance_type", "missing_resonance_type")):
        if kw[a] and kw[b]:
            usage(f"--{a.replace('_', '-')} and --{b.replace('_', '-')} cannot be combined")
        tri[a] = True if kw[a] else (False if kw[b] else None)
    return Filters(
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
    svc = _service()
    e = svc.show(entry_id, agent=_agent())
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
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
@json_option
@handled
def list_cmd(sort: str, limit: int, as_json: bool, **kw: Any) -> None:
    """List entries (public by default; --include-private / --mine for yours)."""
    f = build_filters(kw)
    res = _service().list_entries(f, agent=_agent(), sort=sort, limit=limit)
    for n in res.notes:
        note(n)
    if as_json:
        emit_json([e.to_json() for e in res.data])
    elif not res.data:
        out("No entries found")
    else:
        out(f"Found {len(res.data)} entries:")
        out()
        render_blocks(res.data)


@memory_group.command("search")
@click.argument("query")
@filter_options
@click.option("--semantic", is_flag=True, help="Search by meaning (needs an embedding model).")
@click.option("--hybrid", is_flag=True, help="Fuse keyword and semantic results.")
@click.option("--activate", is_flag=True, help="Activate the results (reset their decay clock).")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@json_option
@handled
def search_cmd(query: str, semantic: bool, hybrid: bool, activate: bool, limit: int, as_json: bool,
               **kw: Any) -> None:
    """Keyword search (FTS5, bm25-ranked); --semantic / --hybrid when a model is installed."""
    exclusive(**{"--semantic": semantic, "--hybrid": hybrid})
    f = build_filters(kw)
    mode = "semantic" if semantic else ("hybrid" if hybrid else "keyword")
    res = _service().search(query, f, agent=_agent(), limit=limit, activate=activate, mode=mode)
    for n in res.notes:
        note(n)
    if as_json:
        emit_json([e.to_json() for e in res.data])
    elif not res.data:
        out(f"No results for '{query}'")
    else:
        out(f"Found {len(res.data)} results:")
        out()
        render_blocks(res.data)


@memory_group.command("recent")
@click.option("--days", type=int, default=10, show_default=True)
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
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
    from m1nd.memory.service import default_basis

    rows = _service().recent(agent=_agent(), days=days, limit=limit, resonance_type=resonance_type,
                             all_types=all_types, sort=sort, basis=resonance_basis or default_basis("decayed"))
    if as_json:
        emit_json(rows)
        return
    if not rows:
        out("No recent entries found")
    for r in rows:
        state = f" ({r['state']})" if r["state"] else ""
        out(f"[{r['created_at'][:10]}] {r['type']}{state}: {preview(r['content'], 60)} ({r['id']}, "
            f"resonance {r['resonance']})")


# -- updating ----------------------------------------------------------------------------------------------------


@memory_group.command("update")
@click.argument("entry_id")
@click.option("-t", "--title")
@click.option("--content", help="Replace the content.")
@click.option("-f", "--file", "file", help="Replace the content from a file.")
@click.option("--append-content")
@click.option("--append-file")
@click.option("--prepend-content")
@click.option("--prepend-file")
@click.option("--find")
@click.option("--replace")
@click.option("--replace-all", is_flag=True)
@click.option("--nth", type=int)
@click.option("--category")
@click.option("--tags", help="Replace all tags (comma-separated).")
@click.option("--add-tag")
@click.option("--remove-tag")
@click.option("-a", "--applicability", help="Replace applicability (comma-separated).")
@click.option("--content-type")
@click.option("--resonance", type=int)
@click.option("--resonance-type", help="New resonance type ('-' clears).")
@click.option("--anchors", help="Replace all anchors (comma-separated ids).")
@click.option("--add-anchor")
@click.option("--remove-anchor")
@click.option("--wake-phrase")
@click.option("--wake-phrases")
@click.option("--add-wake-phrase")
@click.option("--remove-wake-phrase")
@click.option("--wake-order", help="Number, or '-' to clear.")
@click.option("--code-refs", help="Replace all code refs (comma-separated).")
@click.option("--add-code-ref")
@click.option("--remove-code-ref")
@click.option("--private", is_flag=True, default=None)
@click.option("--visibility")
@click.option("--owner")
@click.option("--session-id")
@click.option("--force", is_flag=True, help="Confirm a dangerous visibility change.")
@click.option("--no-auto-anchor", is_flag=True)
@click.option("--no-embed", is_flag=True)
@json_option
@handled
def update_cmd(entry_id: str, as_json: bool, no_auto_anchor: bool, no_embed: bool, **kw: Any) -> None:
    """Update an entry: content (one mode) and any metadata. The id never changes."""
    from m1nd.memory.fields import read_content_file

    modes = {"--content": kw["content"], "--file": kw["file"], "--append-content": kw["append_content"],
             "--append-file": kw["append_file"], "--prepend-content": kw["prepend_content"],
             "--prepend-file": kw["prepend_file"], "--find": kw["find"]}
    exclusive(**modes)
    if (kw["find"] is None) != (kw["replace"] is None):
        usage("--find and --replace must be given together")
    if (kw["replace_all"] or kw["nth"] is not None) and kw["find"] is None:
        usage("--replace-all and --nth need --find")
    exclusive(**{"--replace-all": kw["replace_all"], "--nth": kw["nth"]})
    exclusive(**{"--private": kw["private"], "--visibility": kw["visibility"]})
    if kw["wake_order"] is not None and kw["wake_order"] != "-":
        try:
            int(kw["wake_order"])
        except ValueError:
            from m1nd.errors import InvalidInputError
            raise InvalidInputError(f"Invalid wake_order value '{kw['wake_order']}' (use number or '-' to clear)") \
                from None
    ch: dict[str, Any] = {
        "title": kw["title"], "category": kw["category"], "tags": kw["tags"], "add_tags": kw["add_tag"],
        "remove_tags": kw["remove_tag"], "applicability": kw["applicability"], "content_type": kw["content_type"],
        "resonance": kw["resonance"], "anchors": kw["anchors"], "add_anchors": kw["add_anchor"],
        "remove_anchors": kw["remove_anchor"], "wake_phrases": kw["wake_phrases"],
        "code_refs": kw["code_refs"], "add_code_refs": kw["add_code_ref"], "remove_code_refs": kw["remove_code_ref"],
        "private": kw["private"], "visibility": kw["visibility"], "owner": kw["owner"],
        "session_id": kw["session_id"], "force": kw["force"], "find": kw["find"], "replace": kw["replace"],
        "replace_all": kw["replace_all"], "nth": kw["nth"],
    }
    if kw["wake_phrase"] is not None:
        ch["wake_phrase"] = kw["wake_phrase"]
    if kw["add_wake_phrase"] is not None:
        ch["add_wake_phrases"] = kw["add_wake_phrase"]
    if kw["remove_wake_phrase"] is not None:
        ch["remove_wake_phrases"] = kw["remove_wake_phrase"]
    if kw["resonance_type"] is not None:
        ch["resonance_type"] = kw["resonance_type"]
    if kw["wake_order"] is not None:
        ch["wake_order"] = kw["wake_order"]
    if kw["content"] is not None:
        ch["content"] = kw["content"]
    elif kw["file"] is not None:
        ch["content"], ch["content_source"] = read_content_file(kw["file"]), "from file"
    elif kw["append_content"] is not None or kw["append_file"] is not None:
        ch["append"] = kw["append_content"] if kw["append_content"] is not None else read_content_file(
            kw["append_file"])
    elif kw["prepend_content"] is not None or kw["prepend_file"] is not None:
        ch["prepend"] = kw["prepend_content"] if kw["prepend_content"] is not None else read_content_file(
            kw["prepend_file"])
    res = _service().update(entry_id, ch, agent=_agent(), no_embed=no_embed, no_auto_anchor=no_auto_anchor)
    if res.get("embed_deferred"):
        note(f"embedding deferred (entry durable, id={res['id']}): {res['embed_deferred']}")
    if as_json:
        emit_json({"id": res["id"], "changes": res["changes"]})
    elif not res["changes"]:
        out("  No changes specified")
    else:
        out(f"Updated entry: {res['id']}")
        for c in res["changes"]:
            out(f"  {c}")


@memory_group.command("edit")
@click.argument("entry_id")
@click.option("--find", "--old", "find", help="Text to find.")
@click.option("--replace", "--new", "replace", help="Replacement text.")
@click.option("--replace-all", is_flag=True)
@click.option("--nth", type=int, help="Replace only the Nth occurrence (1-based).")
@click.option("--no-auto-anchor", is_flag=True)
@click.option("--no-embed", is_flag=True)
@json_option
@handled
def edit_cmd(entry_id: str, find: str | None, replace: str | None, replace_all: bool, nth: int | None,
             no_auto_anchor: bool, no_embed: bool, as_json: bool) -> None:
    """Find and replace in an entry's content."""
    if find is None:
        usage("Missing option '--find' / '--old'")
    if replace is None:
        usage("Missing option '--replace' / '--new'")
    exclusive(**{"--replace-all": replace_all, "--nth": nth})
    res = _service().update(entry_id, {"find": find, "replace": replace, "replace_all": replace_all, "nth": nth},
                            agent=_agent(), operation="edit", no_embed=no_embed, no_auto_anchor=no_auto_anchor)
    if as_json:
        emit_json({"id": res["id"], "replacements": res["replacements"]})
    else:
        out(f"Edited entry: {res['id']}")
        out(f"  {res['replacements']} replacement(s)")


def _append_like(op: str) -> Callable[..., None]:
    @click.argument("entry_id")
    @click.option("--content", help="Text to add (stdin when neither --content nor --file).")
    @click.option("-f", "--file", "--content-file", "file", help="Read the text from a file.")
    @click.option("--no-auto-anchor", is_flag=True)
    @click.option("--no-embed", is_flag=True)
    @json_option
    @handled
    def cmd(entry_id: str, content: str | None, file: str | None, no_auto_anchor: bool, no_embed: bool,
            as_json: bool) -> None:
        exclusive(**{"--content": content, "--file": file})
        text = read_stdin_or(content, file)
        res = _service().update(entry_id, {op: text}, agent=_agent(), operation=op, no_embed=no_embed,
                                no_auto_anchor=no_auto_anchor)
        if as_json:
            emit_json({"id": res["id"], "bytes_added": res["bytes_added"]})
        else:
            out(f"{'Appended to' if op == 'append' else 'Prepended to'} entry: {res['id']}")
            out(f"  {res['bytes_added']} bytes added")
    cmd.__doc__ = f"{op.capitalize()} text to an entry's content (joined with a newline)."
    return cmd


memory_group.command("append")(_append_like("append"))
memory_group.command("prepend")(_append_like("prepend"))


@memory_group.command("restore")
@click.argument("entry_id")
@click.option("--list", "list_", is_flag=True, help="List the backups instead of restoring.")
@click.option("--backup", "backup_id", help="Restore this backup (default: the newest).")
@click.option("--no-auto-anchor", is_flag=True)
@click.option("--no-embed", is_flag=True)
@json_option
@handled
def restore_cmd(entry_id: str, list_: bool, backup_id: str | None, no_auto_anchor: bool, no_embed: bool,
                as_json: bool) -> None:
    """Restore an entry from a backup (works after delete), or list its backups."""
    from m1nd.memory.ids import normalize_entry_id

    svc = _service()
    if list_:
        rows = svc.list_backups(entry_id, agent=_agent())
        if as_json:
            emit_json(rows)
            return
        eid = normalize_entry_id(entry_id)
        if not rows:
            out(f"No backups found for {eid}")
            return
        out(f"Backups for {rows[0]['entry_id']}:")
        for r in rows:
            out(f"  {r['id']} | {r['created_at']} | {r['operation']} | {len(r['body'].encode('utf-8'))} bytes")
        return
    res = svc.restore(entry_id, agent=_agent(), backup_id=backup_id, no_embed=no_embed, no_auto_anchor=no_auto_anchor)
    if res.get("embed_deferred"):
        note(f"embedding deferred (entry durable, id={res['id']}): {res['embed_deferred']}")
    if as_json:
        emit_json(res)
    else:
        out(f"Restored entry: {res['id']}")
        out(f"  from backup: {res['from_backup']}")
        out(f"  backup created: {res['backup_created']}")
        out(f"  original operation: {res['operation']}")


@memory_group.command("delete")
@click.argument("entry_id")
@json_option
@handled
def delete_cmd(entry_id: str, as_json: bool) -> None:
    """Delete an entry (a backup is kept; restore brings it back)."""
    res = _service().delete(entry_id, agent=_agent())
    if as_json:
        emit_json(res)
    else:
        out(f"Deleted entry '{res['id']}'")


# -- relationships and reinforcement -----------------------------------------------------------------------------


@memory_group.group("relationships")
def relationships_group() -> None:
    """Typed links between entries."""


@relationships_group.command("list")
@click.argument("entry_id")
@json_option
@handled
def rel_list_cmd(entry_id: str, as_json: bool) -> None:
    """Relationships of an entry, both directions."""
    eid, rels = _service().relationships(entry_id, agent=_agent())
    if as_json:
        emit_json([{k: v for k, v in r.items() if k != "direction"} for r in rels])
        return
    if not rels:
        out(f"No relationships found for '{eid}'")
        return
    out(f"Relationships for '{eid}':")
    for r in rels:
        if r["direction"] == "out":
            out(f"  {r['id']} -> {r['to_entry_id']} ({r['relationship_type']})")
        else:
            out(f"  {r['id']} <- {r['from_entry_id']} ({r['relationship_type']})")


@relationships_group.command("add")
@click.option("--from", "from_id", required=True, help="Source entry id.")
@click.option("--to", "to_id", required=True, help="Target entry id.")
@click.option("--type", "rel_type", required=True, help="Relationship type (relationship-types list).")
@click.option("--no-reinforce", is_flag=True, help="Do not reinforce the target.")
@json_option
@handled
def rel_add_cmd(from_id: str, to_id: str, rel_type: str, no_reinforce: bool, as_json: bool) -> None:
    """Link two entries; the target gains +1 resonance (cap 10) unless contradicts/supersedes."""
    res = _service().relate(from_id, to_id, rel_type, agent=_agent(), reinforce=not no_reinforce)
    for n in res.notes:
        note(n)
    d = res.data
    if as_json:
        emit_json(d)
    elif d["existing"]:
        out(f"Relationship already exists: {d['id']}")
    else:
        out(f"Added relationship: {d['id']}")
        out(f"  From: {d['from']}")
        out(f"  To: {d['to']}")
        out(f"  Type: {d['type']}")


@relationships_group.command("delete")
@click.argument("rel_id")
@json_option
@handled
def rel_delete_cmd(rel_id: str, as_json: bool) -> None:
    """Delete a relationship by id."""
    res = _service().unrelate(rel_id, agent=_agent())
    if as_json:
        emit_json(res)
    else:
        out(f"Deleted relationship: {res['id']}")


@memory_group.command("reinforce")
@click.argument("entry_id")
@click.option("--amount", type=int, default=1, show_default=True, help="Non-zero, -10..10.")
@click.option("--cap", type=int, default=10, show_default=True, help="1..100.")
@json_option
@handled
def reinforce_cmd(entry_id: str, amount: int, cap: int, as_json: bool) -> None:
    """Raise (or lower) an entry's resonance and reset its decay clock."""
    r = _service().reinforce(entry_id, agent=_agent(), amount=amount, cap=cap)
    if as_json:
        emit_json({k: r[k] for k in ("id", "old_resonance", "new_resonance", "amount_added", "capped",
                                     "last_activated", "activation_count")})
        return
    out(f"Reinforced entry: {r['id']}")
    out(f"  Old resonance: {r['old_resonance']}")
    out(f"  New resonance: {r['new_resonance']}")
    out(f"  Amount added: {r['amount_added']}")
    if r["capped"]:
        out(f"  (Capped at {r['cap']})")
    out(f"  Last activated: {r['last_activated']}")
    out(f"  Activation count: {r['activation_count']}")


# -- seeding, statistics, export ---------------------------------------------------------------------------------


@memory_group.group("seed")
def seed_group() -> None:
    """Import agents or knowledge from files."""


@seed_group.command("agents")
@click.option("-p", "--path", "path", help="Directory of agent *.md files (default $M1ND_HOME/memory/seed/agents).")
@handled
def seed_agents_cmd(path: str | None) -> None:
    """Register agents from markdown files with front matter (name, description, domain)."""
    d = Path(path).expanduser() if path else _obj().settings.home / "memory" / "seed" / "agents"
    res = _service().seed_agents(d)
    for n in res["notes"]:
        note(n)
    if res["seeded"]:
        out(f"Seeded {len(res['seeded'])} agents:")
        for name in res["seeded"]:
            out(f"  {name}")
    else:
        out(f"No agents seeded from {d}")


@seed_group.command("knowledge")
@click.argument("path", required=False)
@click.option("--overwrite", is_flag=True, help="Replace entries whose id already exists.")
@handled
def seed_knowledge_cmd(path: str | None, overwrite: bool) -> None:
    """Import entries from JSONL (entry JSON shape; one transaction per file)."""
    if path:
        files = [Path(path).expanduser()]
    else:
        d = _obj().settings.home / "memory" / "seed" / "knowledge"
        files = sorted(d.glob("*.jsonl")) if d.is_dir() else []
        if not files:
            out(f"No .jsonl files found in {d}")
            return
    svc = _service()
    total, errors = 0, 0
    for f in files:
        try:
            res = svc.seed_knowledge(f, agent=_agent(), overwrite=overwrite,
                                     progress=lambda n: note(f"progress: {n} entries imported"))
        except M1ndError as e:
            if len(files) == 1:
                raise
            note(f"Error: {f}: {e.message}")
            errors += 1
            continue
        for n in res["notes"]:
            note(n)
        if res["skipped"]:
            note(f"  skipped {res['skipped']} existing entries (use --overwrite to replace them)")
        out(f"Imported {res['imported']} entries from {f}")
        total += res["imported"]
    if len(files) > 1:
        out(f"Total: {total}")
    if errors:
        raise SystemExit(1)


@memory_group.command("stats")
@json_option
@handled
def stats_cmd(as_json: bool) -> None:
    """Entry counts per category (visible entries only)."""
    s = _service().stats(agent=_agent())
    if as_json:
        emit_json(s)
        return
    out("Memory Index Statistics")
    out()
    out(f"Total entries: {s['total']}")
    out()
    for c, n in s["categories"].items():
        out(f"  {c:<12} {n}")


@memory_group.command("health")
@json_option
@handled
def health_cmd(as_json: bool) -> None:
    """Embedding and anchor coverage, stale high-resonance entries."""
    h = _service().health(agent=_agent())
    if as_json:
        emit_json(h)
        return
    out("Graph Health")
    out()
    out(f"  Total entries: {h['total']}")
    out(f"  {h['embedded_pct']:3}% embedded")
    out(f"  {h['anchored_pct']:3}% anchored")
    out(f"  {h['stale_high_res_pct']:3}% stale (high-res, >30d)")


@memory_group.command("growth")
@json_option
@handled
def growth_cmd(as_json: bool) -> None:
    """Entries per week over the last 8 weeks (oldest first)."""
    g = _service().growth(agent=_agent())
    if as_json:
        emit_json(g)
        return
    out("Growth (last 8 weeks)")
    for i, n in enumerate(g):
        out(f"  week -{7 - i}: {n}")


@memory_group.command("open-threads")
@json_option
@handled
def open_threads_cmd(as_json: bool) -> None:
    """Open thread entries, most resonant first."""
    rows = _service().open_threads(agent=_agent())
    if as_json:
        emit_json(rows)
        return
    if not rows:
        out("No open threads.")
        return
    out(f"Open threads ({len(rows)})")
    out()
    for r in rows:
        out(f"  [r{r['resonance']}] {r['id']} {r['created_at']}  {preview(r['body'], 80)}")


def slugify(title: str) -> str:
    s = []
    for ch in title.lower():
        if ("a" <= ch <= "z") or ("0" <= ch <= "9"):
            s.append(ch)
        elif ch in " -_":
            s.append("-")
        else:
            s.append("_")
    slug = re.sub(r"-{2,}", "-", "".join(s)).strip("-")
    return slug or "entry"


@memory_group.command("export")
@click.option("-f", "--format", "fmt", default="md", show_default=True, help="md, jsonl or csv.")
@click.option("-o", "--output", help="Directory (md, default ./memory-export) or file (jsonl/csv, default stdout).")
@click.option("--include-embeddings", is_flag=True, help="Include entry vectors in jsonl.")
@handled
def export_cmd(fmt: str, output: str | None, include_embeddings: bool) -> None:
    """Export every visible entry."""
    from m1nd.errors import InvalidInputError

    fmt = "md" if fmt == "markdown" else fmt
    if fmt not in ("md", "jsonl", "csv"):
        raise InvalidInputError(f"Invalid format '{fmt}'. Valid formats: md, jsonl, csv")
    svc = _service()
    entries = svc.export_entries(agent=_agent(), include_embeddings=include_embeddings)
    n = 0
    if fmt == "md":
        root = Path(output or "./memory-export")
        used: set[Path] = set()
        for e in entries:
            d = root / e["category_id"]
            d.mkdir(parents=True, exist_ok=True)
            base = slugify(e["title"])
            p, k = d / f"{base}.md", 0
            while p in used or p.exists():
                k += 1
                p = d / f"{base}-{k}.md"
            used.add(p)
            fm = {"id": e["id"], "title": e["title"], "category": e["category_id"], "tags": e["tags"],
                  "applicability": e["applicability"], "created": e["created_at"], "updated": e["updated_at"],
                  "source_project": e["source_project_id"], "source_agent": e["source_agent_id"],
                  "resonance": e["resonance"], "resonance_type": e["resonance_type"],
                  "wake_phrases": e["wake_phrases"]}
            lines = ["---"] + [f"{k_}: {json.dumps(v, ensure_ascii=False)}" for k_, v in fm.items()] + ["---", "",
                                                                                                          e["body"]]
            p.write_text("\n".join(lines) + ("\n" if not e["body"].endswith("\n") else ""), encoding="utf-8")
            n += 1
            if n % 10000 == 0:
                note(f"progress: {n} entries exported")
        out(f"Exported to directory: {root}")
        return
    fh = open(output, "w", encoding="utf-8", newline="") if output else None  # noqa: SIM115
    stream = fh if fh is not None else sys.stdout
    try:
        if fmt == "jsonl":
            for e in entries:
                stream.write(json.dumps(e, ensure_ascii=False) + "\n")
                n += 1
                if fh is not None and n % 10000 == 0:
                    note(f"progress: {n} entries exported")
        else:
            w = csv.writer(stream if fh is not None else (buf := io.StringIO()), lineterminator="\r\n")
            w.writerow(["id", "category_id", "title", "tags", "applicability", "source_project_id", "created_at",
                        "updated_at"])
            for e in entries:
                w.writerow([e["id"], e["category_id"], e["title"], ";".join(e["tags"]), ";".join(e["applicability"]),
                            e["source_project_id"] or "", e["created_at"], e["updated_at"]])
                n += 1
            if fh is None:
                stream.write(buf.getvalue())
    finally:
        if fh is not None:
            fh.close()
        else:
            stream.flush()
    if output:
        out(f"Exported to {output}")


# -- registries ----------------------------------------------------------------------------------------------------


@memory_group.group("agents")
def agents_group() -> None:
    """Registered agents."""


@agents_group.command("list", help='List registered agents.')
@json_option
@handled
def agents_list_cmd(as_json: bool) -> None:
    rows = _service().registry("agents")
    if as_json:
        emit_json(rows)
        return
    if not rows:
        out("No agents registered")
        return
    out("Registered agents:")
    for r in rows:
        out(f"  {r['id']} - {r['description']}")
        if r["domain"]:
            out(f"    Domain: {r['domain']}")


@agents_group.command("add", help='Register an agent (id, --description, --domain).')
@click.argument("agent_id")
@click.option("-d", "--description")
@click.option("-D", "--domain")
@handled
def agents_add_cmd(agent_id: str, description: str | None, domain: str | None) -> None:
    r = _service().add_agent(agent_id, description, domain)
    out(f"Added agent: {r['id']}")


@agents_group.command("show", help='Show one registered agent.')
@click.argument("agent_id")
@json_option
@handled
def agents_show_cmd(agent_id: str, as_json: bool) -> None:
    r = _service().show_agent(agent_id)
    if as_json:
        emit_json(r)
        return
    out(f"Agent: {r['id']}")
    out(f"Description: {r['description']}")
    out(f"Domain: {r['domain'] or '-'}")
    out(f"Created: {r['created_at']}")
    out(f"Updated: {r['updated_at']}")


@memory_group.group("projects")
def projects_group() -> None:
    """Registered projects."""


@projects_group.command("list", help='List registered projects.')
@json_option
@handled
def projects_list_cmd(as_json: bool) -> None:
    rows = _service().registry("projects")
    if as_json:
        emit_json(rows)
        return
    if not rows:
        out("No projects registered")
        return
    out("Registered projects:")
    for r in rows:
        out(f"  {r['id']} - {r['name']}")
        for label, key in (("Path", "path"), ("Repo", "repo_url"), ("Description", "description")):
            if r[key]:
                out(f"    {label}: {r[key]}")


@projects_group.command("add", help='Register a project.')
@click.option("--id", "pid", required=True)
@click.option("--name", required=True)
@click.option("--path")
@click.option("--repo-url")
@click.option("--description")
@handled
def projects_add_cmd(pid: str, name: str, path: str | None, repo_url: str | None, description: str | None) -> None:
    r = _service().add_project(pid, name, path=path, repo_url=repo_url, description=description)
    out(f"Added project: {r['id']}")


@memory_group.group("categories")
def categories_group() -> None:
    """Entry categories."""


@categories_group.command("list", help='List entry categories.')
@json_option
@handled
def categories_list_cmd(as_json: bool) -> None:
    rows = _service().registry("categories")
    if as_json:
        emit_json(rows)
        return
    out("Categories:")
    for r in rows:
        out(f"  {r['id']} - {r['description']}")


@categories_group.command("add", help='Add an entry category.')
@click.argument("category_id")
@click.argument("description")
@handled
def categories_add_cmd(category_id: str, description: str) -> None:
    r = _service().add_category(category_id, description)
    out(f"Added category: {r['id']}")


@categories_group.command("remove", help='Remove an unused entry category.')
@click.argument("category_id")
@handled
def categories_remove_cmd(category_id: str) -> None:
    r = _service().remove_category(category_id)
    out(f"Deleted category: {r['id']}")


@memory_group.group("applicability")
def applicability_group() -> None:
    """Applicability contexts."""


@applicability_group.command("list", help='List applicability contexts.')
@json_option
@handled
def applicability_list_cmd(as_json: bool) -> None:
    rows = _service().registry("applicability")
    if as_json:
        emit_json(rows)
        return
    out("Applicability types:")
    for r in rows:
        out(f"  {r['id']} - {r['description']}" + (f" (scope: {r['scope']})" if r["scope"] else ""))


@applicability_group.command("add", help='Add an applicability context.')
@click.option("--id", "aid", required=True)
@click.option("--description", required=True)
@click.option("--scope")
@handled
def applicability_add_cmd(aid: str, description: str, scope: str | None) -> None:
    r = _service().add_applicability(aid, description, scope)
    out(f"Added applicability: {r['id']}")


@memory_group.group("tags")
def tags_group() -> None:
    """Tags of visible entries."""


@tags_group.command("list", help='List the tags of visible entries with their counts.')
@click.option("--category")
@json_option
@handled
def tags_list_cmd(category: str | None, as_json: bool) -> None:
    tags = _service().tags(agent=_agent(), category=category)
    if as_json:
        emit_json(tags)
        return
    if not tags:
        out("No tags found")
        return
    out(f"Tags in category '{category}':" if category else "All tags:")
    for t in tags:
        out(f"  {t}")


def _registry_group(name: str, kind: str, title: str) -> None:
    @memory_group.group(name)
    def grp() -> None:
        pass
    grp.help = f"{title} (read-only registry)."

    @grp.command("list")
    @json_option
    @handled
    def list_(as_json: bool) -> None:
        rows = _service().registry(kind)
        if as_json:
            emit_json(rows)
            return
        out(f"{title}:")
        for r in rows:
            line = f"  {r['id']} - {r['description']}"
            if kind == "relationship_types":
                line += " (directional)" if r["directional"] else " (bidirectional)"
            if kind == "content_types" and r["file_extensions"]:
                line += f" ({', '.join(r['file_extensions'])})"
            out(line)
    list_.help = f"List {title.lower()}."


_registry_group("source-types", "source_types", "Source types")
_registry_group("entry-types", "entry_types", "Entry types")
_registry_group("session-types", "session_types", "Session types")
_registry_group("relationship-types", "relationship_types", "Relationship types")
_registry_group("content-types", "content_types", "Content types")


# -- sessions --------------------------------------------------------------------------------------------------------


@memory_group.group("sessions")
def sessions_group() -> None:
    """Work sessions that group entries."""


@sessions_group.command("list", help='List work sessions.')
@click.option("--project")
@json_option
@handled
def sessions_list_cmd(project: str | None, as_json: bool) -> None:
    rows = _service().sessions(agent=_agent(), project=project)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        out("No sessions found")
        return
    for r in rows:
        out(f"  {r['id']} [{r['session_type']}] started {r['started_at']} ended {r['ended_at'] or '-'}")


@sessions_group.command("create", help='Create a work session.')
@click.option("--session-type")
@click.option("--project")
@click.option("--id", "sid")
@json_option
@handled
def sessions_create_cmd(session_type: str | None, project: str | None, sid: str | None, as_json: bool) -> None:
    r = _service().create_session(session_type=session_type, project=project, session_id=sid, agent=_agent())
    if as_json:
        emit_json(r)
    else:
        out(f"Created session: {r['id']}")


@sessions_group.command("close", help='Close a work session (sets its end time).')
@click.option("--id", "sid", required=True)
@json_option
@handled
def sessions_close_cmd(sid: str, as_json: bool) -> None:
    r = _service().close_session(sid)
    if as_json:
        emit_json(r)
    else:
        out(f"Closed session: {r['id']}")


@memory_group.command("for-session")
@click.argument("session_id")
@json_option
@handled
def for_session_cmd(session_id: str, as_json: bool) -> None:
    """Facts recorded in a session."""
    rows = _service().for_session(session_id, agent=_agent())
    if as_json:
        emit_json(rows)
        return
    if not rows:
        out(f"No facts found for session: {session_id}")
        return
    out(f"Facts for session {session_id}:")
    for r in rows:
        out(f"[{r['created_at'][:10]}] {r['type'] or 'unknown'}: {preview(r['content'], 60)} ({r['id']}, "
            f"resonance {r['resonance']})")


@memory_group.command("fact-session")
@click.argument("fact_id")
@json_option
@handled
def fact_session_cmd(fact_id: str, as_json: bool) -> None:
    """The session a fact was recorded in."""
    r = _service().fact_session(fact_id, agent=_agent())
    if as_json:
        emit_json(r)
    elif r["session_id"]:
        out(f"Fact {r['fact_id']} was extracted from session: {r['session_id']}")
    else:
        out(f"No session found for fact: {r['fact_id']}")


# -- wake (issue 7): cascade, token ritual, wake-fetch, wake-log -------------------------------------------------
# Adapters over m1nd.memory.wake / ritual / wakelog. The ritual always prints JSON (errors as JSON on stderr).

_WAKE_SET_FLAGS = {"limit": "--limit", "min_resonance": "--min-resonance", "days": "--days",
                   "no_activate": "--no-activate", "include_excluded": "--include-excluded",
                   "resonance_basis": "--resonance-basis"}


def _ritual_fail(err: M1ndError) -> None:
    payload = {"status": "error", "error": err.code, "message": err.message, **(err.details or {})}
    click.echo(json.dumps(payload, ensure_ascii=False), err=True)
    raise SystemExit(1)


@memory_group.command("wake")
@click.option("-l", "--limit", type=int, default=None, help="Places in the wake set.  [default: 20]")
@click.option("--min-resonance", type=int, default=None,
              help="Every entry at or above this basis value, all as core (--limit ignored).")
@click.option("-d", "--days", type=int, default=None, help="Recent layer window in days.  [default: 7]")
@click.option("--no-activate", is_flag=True, default=None, help="Do not add to the activation counts.")
@click.option("--include-excluded", is_flag=True, default=None,
              help="Include entries tagged archive or wake-exclude.")
@click.option("--resonance-basis", type=click.Choice(["raw", "decayed"]), default=None,
              help="Value thresholds and ordering use.  [default: raw]")
@click.option("--begin", is_flag=True, help="Start the token ritual (prints JSON with the first prompt and token).")
@click.option("--wake", "wake_n", type=int, default=None, help="Wake number recorded on every guess (--begin).")
@click.option("--model", default=None, help="Model id recorded on every guess (--begin).")
@click.option("--force-wake", is_flag=True, default=None, help="Begin under a wake number that already has guesses.")
@click.option("--respond", default=None, help="Your one guess for the prompted chunk (≤ 2000 characters).")
@click.option("--bloom-id", default=None, help="The prompted bloom id (with --respond).")
@click.option("--session", default=None, help="The token of the last ritual answer (with --respond).")
@json_option
def wake_cmd(limit: int | None, min_resonance: int | None, days: int | None, no_activate: bool | None,
             include_excluded: bool | None, resonance_basis: str | None, begin: bool, wake_n: int | None,
             model: str | None, force_wake: bool | None, respond: str | None, bloom_id: str | None,
             session: str | None, as_json: bool) -> None:
    """Wake up with the identity cascade (core / recent / bridges), or walk the token ritual
    (--begin, then --respond GUESS --bloom-id ID --session TOKEN per chunk)."""
    values = {"limit": limit, "min_resonance": min_resonance, "days": days, "no_activate": no_activate,
              "include_excluded": include_excluded, "resonance_basis": resonance_basis}
    given = {flag for k, flag in _WAKE_SET_FLAGS.items() if values[k] is not None}
    ritual_only = {"--wake": wake_n, "--model": model, "--force-wake": force_wake}
    trio = {"--respond": respond, "--bloom-id": bloom_id, "--session": session}
    if any(v is not None for v in trio.values()):
        missing = [k for k, v in trio.items() if v is None]
        if missing:
            usage(f"--respond, --bloom-id and --session go together (missing {', '.join(missing)})")
        extra = sorted(given | {k for k, v in ritual_only.items() if v is not None} | ({"--begin"} if begin else set()))
        if extra:
            usage(f"--respond takes no wake-set flags ({', '.join(extra)})")
    elif not begin and any(v is not None for v in ritual_only.values()):
        usage("--wake, --model and --force-wake need --begin")
    from m1nd.memory import ritual, wake

    cascade_kw = {"limit": 20 if limit is None else limit, "min_resonance": min_resonance,
                  "days": 7 if days is None else days, "include_excluded": bool(include_excluded),
                  "basis": resonance_basis}
    agent = _agent()
    try:
        if respond is not None:
            emit_json(ritual.respond(_service(), agent, guess=respond, bloom_id=bloom_id, token=session))
            return
        if begin:
            wake.need_agent(agent)  # before the store is opened
            emit_json(ritual.begin(_service(), agent, wake=wake_n, model=model, force_wake=bool(force_wake),
                                   activate=not no_activate, **cascade_kw))
            return
    except M1ndError as e:
        _ritual_fail(e)
    try:
        wake.need_agent(agent)
        data = wake.cascade(_service(), agent, activate=not no_activate, **cascade_kw)
    except M1ndError as e:
        fail(e, as_json)
    if as_json:
        emit_json(data)
    else:
        for line in wake.render_cascade(data):
            out(line)


@memory_group.command("wake-fetch")
@click.option("--days", type=int, default=15, show_default=True)
@click.option("--limit", type=int, default=100, show_default=True)
@click.option("--exclude-tags", multiple=True, help="Comma-separated tag prefixes to drop (given once).")
@click.option("--resonance-basis", type=click.Choice(["raw", "decayed"]), default=None,
              help="[default: decayed]")
@json_option
@handled
def wake_fetch_cmd(days: int, limit: int, exclude_tags: tuple[str, ...], resonance_basis: str | None,
                   as_json: bool) -> None:
    """Recent resonant facts (raw resonance ≥ 3) as a <facts> block for a wake presentation."""
    if len(exclude_tags) > 1:
        usage("--exclude-tags may be given only once (comma-separated prefixes)")
    from m1nd.memory import wake

    prefixes = [p for p in (exclude_tags[0].split(",") if exclude_tags else []) if p.strip()]
    data = wake.fetch(_service(), _agent(), days=days, limit=limit, exclude_tags=prefixes, basis=resonance_basis)
    if as_json:
        emit_json(data)
    else:
        for line in wake.render_facts(data):
            out(line)


@memory_group.group("wake-log")
def wake_log_group() -> None:
    """Score your ritual guess log and read it back. The readers are terminal-only: their numbers must never reach
    the context of the model that made the guesses."""


@wake_log_group.command("score")
def wake_log_score_cmd() -> None:
    """Score every pending guess of yours; stdout is exactly one JSON line {"status","rows","skipped"}."""
    from m1nd.memory import wakelog

    agent = _agent()
    try:
        wakelog.need_agent(agent)  # before the store is opened
        data, notes = wakelog.score(_service(), agent)
    except M1ndError as e:
        fail(e, False)
    for n in notes:
        note(n)
    click.echo(json.dumps(data, separators=(",", ":")))


def _terminal_guard(cmd: str, out_path: str | None) -> None:
    """Refuse before anything is opened: no terminal and no --out, or an unsafe --out."""
    from m1nd.memory import wakelog

    if out_path is None:
        if not sys.stdout.isatty():
            fail(M1ndError(wakelog.TERMINAL_ONLY.format(cmd=cmd), code="invalid_argument"), False)
        return
    try:
        wakelog.check_out_path(out_path)
    except M1ndError as e:
        fail(e, False)


def _wake_log_emit(out_path: str | None, data: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> None:
    from m1nd.memory import wakelog

    if out_path is None:
        click.echo(render(data), nl=False)
        return
    wakelog.write_out(out_path, data, render)
    out(out_path)


def _notice_help() -> str:
    from m1nd.memory.waketext import NOTICE

    return NOTICE


@wake_log_group.command("report", help="One ritual: bucket counts per phrase source, Axis A and Axis B medians. "
                        "Terminal-only (or --out FILE; JSON when it ends in .json).\n\n" + _notice_help())
@click.option("--wake", "wake_n", type=int, default=None, help="Wake to report (default: newest with scored rows).")
@click.option("--out", "out_path", default=None, help="Write here instead and print only the path.")
@handled
def wake_log_report_cmd(wake_n: int | None, out_path: str | None) -> None:
    _terminal_guard("report", out_path)
    from m1nd.memory import wakelog

    wakelog.need_agent(_agent())  # before the store is opened
    _wake_log_emit(out_path, wakelog.report(_service(), _agent(), wake_n), wakelog.render_report)


@wake_log_group.command("bloom")
@click.argument("entry_id")
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--out", "out_path", default=None, help="Write here instead and print only the path.")
@handled
def wake_log_bloom_cmd(entry_id: str, limit: int, out_path: str | None) -> None:
    """One entry across rituals, most recent first. Terminal-only (or --out FILE)."""
    _terminal_guard("bloom", out_path)
    from m1nd.memory import wakelog

    wakelog.need_agent(_agent())  # before the store is opened
    _wake_log_emit(out_path, wakelog.bloom_history(_service(), _agent(), entry_id, limit), wakelog.render_rows)


@wake_log_group.command("wake")
@click.argument("wake_n", type=int)
@click.option("--out", "out_path", default=None, help="Write here instead and print only the path.")
@handled
def wake_log_wake_cmd(wake_n: int, out_path: str | None) -> None:
    """Every guess of one ritual in sequence order. Terminal-only (or --out FILE)."""
    _terminal_guard("wake", out_path)
    from m1nd.memory import wakelog

    wakelog.need_agent(_agent())  # before the store is opened
    _wake_log_emit(out_path, wakelog.wake_rows(_service(), _agent(), wake_n), wakelog.render_rows)
