"""``m1nd memory add`` and ``add-batch``: one entry (or a fact) from flags, many from JSONL."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from m1nd.cli.memory.common import (acting_agent, emit_json, exclusive, handled, json_option, memory_group,
                                    note, open_service, out, usage)
from m1nd.tools.memory_ops import embed_deferred_note


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
    res = open_service().add(raw, agent=acting_agent(), no_embed=no_embed, no_auto_anchor=no_auto_anchor)
    if res.kind == "skipped":  # an identical entry of the session (m1nd.memory.results.AlreadySaved)
        if as_json:
            emit_json(res.to_dict())
        else:
            out(f"Already saved as {res.id} (identical entry this session — nothing to do).")
        return
    if res.kind == "closed":  # ThreadClosed
        if as_json:
            emit_json(res.to_dict())
        else:
            out(f"Closed thread: {res.id}")
        return
    if res.embed_deferred:
        note(embed_deferred_note(res.id, res.embed_deferred))
    if as_json:
        emit_json(res.to_dict())
        return
    if res.dedup == "bypassed_no_session":
        note("  (dedup bypassed: no --session-id provided)")
    if res.fact:
        out(f"Added fact: {res.id}")
        out(f"  Type: {res.fact_type}")
        out(f"  Category: {res.category}")
        out(f"  Content: {preview_keep(res.body, 200)}")
        return
    out(f"Added entry: {res.id}")
    out(f"  Category: {res.category}")
    out(f"  Title: {res.title}")
    out(f"  Visibility: {res.visibility}")
    if res.owner:
        out(f"  Owner: {res.owner}")
    if res.resonance:
        out(f"  Resonance: {res.resonance}")
    for label, v in (("Resonance Type", res.resonance_type), ("Tags", res.tags),
                     ("Applicability", res.applicability), ("Anchors", res.anchors),
                     ("Wake Phrases", res.wake_phrases), ("Code refs", res.code_refs)):
        if v:
            out(f"  {label}: {', '.join(v) if isinstance(v, list) else v}")


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
    svc = open_service()
    total_lines = sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#"))

    def progress(i: int, total: int) -> None:
        note(f"progress: {i}/{total} lines written")

    res = svc.add_batch(lines, agent=acting_agent(), base_dir=base, no_embed=no_embed,
                        no_auto_anchor=no_auto_anchor,
                        progress=progress if total_lines >= 2000 else None)
    for n in res.bypassed:
        note(f"  line {n}: (dedup bypassed: no session provided)")
    if as_json:
        emit_json(res.to_dict())
    else:
        for item in res.events:
            if item.kind == "added":
                out(f"  [{item.line}] Added entry: {item.id} ({item.title})")
            elif item.kind == "fact":
                out(f"  [{item.line}] Added fact: {item.id}")
            elif item.kind == "closed":
                out(f"  [{item.line}] Closed thread: {item.id}")
            else:
                out(f"  [{item.line}] Already saved: {item.id} ({item.title}) — identical this session, no action")
    if res.failed:
        note(f"\nBatch errors ({len(res.failed)} of {total_lines} entries failed):")
        for f_ in res.failed:
            note(f"  line {f_.line}: {f_.error}")
    n_new = sum(1 for a in res.added if a.kind in ("added", "fact"))
    if n_new and res.embedded < n_new:
        note(f"\n(embed skipped for {n_new - res.embedded} entries — run `m1nd memory embed --all` to embed)")
    if not as_json:
        out(f"\nBatch complete: {len(res.added)} added, {len(res.already_saved)} already saved "
            f"(no action needed), {len(res.failed)} failed.")
    if res.failed:
        raise SystemExit(1)
