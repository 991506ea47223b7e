"""``m1nd memory seed`` (agents and knowledge from files) and ``export`` (md, jsonl or csv)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import click

from m1nd.cli.memory.common import acting_agent, handled, memory_group, note, open_service, out, root_obj
from m1nd.errors import M1ndError


@memory_group.group("seed")
def seed_group() -> None:
    """Import agents or knowledge from files."""


@seed_group.command("agents")
@click.option("-p", "--path", "path", help="Directory of agent *.md files (default $M1ND_HOME/memory/seed/agents).")
@handled
def seed_agents_cmd(path: str | None) -> None:
    """Register agents from markdown files with front matter (name, description, domain)."""
    d = Path(path).expanduser() if path else root_obj().settings.home / "memory" / "seed" / "agents"
    res = open_service().seed_agents(d)
    for n in res.notes:
        note(n)
    if res.seeded:
        out(f"Seeded {len(res.seeded)} agents:")
        for name in res.seeded:
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
        d = root_obj().settings.home / "memory" / "seed" / "knowledge"
        files = sorted(d.glob("*.jsonl")) if d.is_dir() else []
        if not files:
            out(f"No .jsonl files found in {d}")
            return
    svc = open_service()
    total, errors = 0, 0
    for f in files:
        try:
            res = svc.seed_knowledge(f, agent=acting_agent(), overwrite=overwrite,
                                     progress=lambda n: note(f"progress: {n} entries imported"))
        except M1ndError as e:
            if len(files) == 1:
                raise
            note(f"Error: {f}: {e.message}")
            errors += 1
            continue
        for n in res.notes:
            note(n)
        if res.skipped:
            note(f"  skipped {res.skipped} existing entries (use --overwrite to replace them)")
        out(f"Imported {res.imported} entries from {f}")
        total += res.imported
    if len(files) > 1:
        out(f"Total: {total}")
    if errors:
        raise SystemExit(1)


@memory_group.command("export")
@click.option("-f", "--format", "fmt", default="md", show_default=True, help="md, jsonl or csv.")
@click.option("-o", "--output", help="Directory (md, default ./memory-export) or file (jsonl/csv, default stdout).")
@click.option("--include-embeddings", is_flag=True, help="Include entry vectors in jsonl.")
@handled
def export_cmd(fmt: str, output: str | None, include_embeddings: bool) -> None:
    """Export every visible entry."""
    from m1nd.errors import InvalidInputError
    from m1nd.tools.memory_ops import FORMATS, write_csv, write_jsonl, write_markdown

    fmt = "md" if fmt == "markdown" else fmt
    if fmt not in FORMATS:
        raise InvalidInputError(f"Invalid format '{fmt}'. Valid formats: md, jsonl, csv")
    entries = open_service().export_entries(agent=acting_agent(), include_embeddings=include_embeddings)

    def progress(n: int) -> None:
        note(f"progress: {n} entries exported")

    if fmt == "md":
        root = Path(output or "./memory-export")
        write_markdown(entries, root, progress)
        out(f"Exported to directory: {root}")
        return
    fh = open(output, "w", encoding="utf-8", newline="") if output else None  # noqa: SIM115
    try:
        if fmt == "jsonl":
            # progress only into a file: on stdout the lines are the output
            write_jsonl(entries, fh if fh is not None else sys.stdout, progress if fh is not None else None)
        elif fh is not None:
            write_csv(entries, fh)
        else:
            buf = io.StringIO()
            write_csv(entries, buf)
            sys.stdout.write(buf.getvalue())
    finally:
        if fh is not None:
            fh.close()
        else:
            sys.stdout.flush()
    if output:
        out(f"Exported to {output}")
