"""``m1nd memory embed`` and ``m1nd memory auto-anchor`` (spec memory.md §11): adapters over
:class:`m1nd.memory.semantic.MemoryVectors`.

Progress goes to stderr with rate and ETA (a one-line bar rewritten in place on a terminal, a plain line every 10 s
otherwise); results to stdout.
"""

from __future__ import annotations

from typing import Any

import click

from m1nd.cli.memory.common import acting_agent, handled, memory_group, note, open_service, out


def vector_hook_or_fail(svc: Any) -> Any:
    from m1nd.tools.memory_ops import no_model_error

    hook = svc.vector_hook
    if hook is None:
        raise no_model_error()
    return hook


class _Progress:
    """``Embedding i/total (pct) rate/s, elapsed, ETA`` on stderr (issue 13 item 4, :mod:`m1nd.progress`): on a
    terminal one line rewritten in place with a bar and the entry in hand; otherwise a plain line at the first entry,
    every 10 s and at the end — never one line per entry."""

    def __init__(self) -> None:
        from m1nd.progress import RateProgress

        self.bar = RateProgress("Embedding")

    def __call__(self, i: int, total: int, title: str) -> None:
        self.bar.update(i, total, title)

    def close(self) -> None:
        self.bar.close()


@memory_group.command("embed")
@click.argument("entry_id", required=False)
@click.option("-a", "--all", "all_", is_flag=True, help="Embed every entry whose vector is missing or stale.")
@click.option("--long-only", type=click.IntRange(min=0), default=None,
              help="Only entries whose embedding text has more than N tokens.")
@click.option("--force", is_flag=True, help="Re-embed even when the vector is current.")
@handled
def embed_cmd(entry_id: str | None, all_: bool, long_only: int | None, force: bool) -> None:
    """Generate embeddings for one entry or all of them (long entries are chunked: 400 tokens, stride 300)."""
    if entry_id is None and not all_:
        raise click.UsageError("Entry ID required (use --all to embed all entries)")
    svc = open_service()
    hook = vector_hook_or_fail(svc)
    agent = acting_agent()
    if all_:
        bar = _Progress()
        try:
            res = hook.embed(svc, agent=agent, all_=True, long_only=long_only, force=force,
                             on_found=lambda n: out(f"Found {n} entries to embed"), progress=bar)
        finally:
            bar.close()
        if res["skipped_below_threshold"]:
            out(f"Embedded {res['embedded']} entries ({res['skipped_below_threshold']} skipped below threshold)")
        else:
            out(f"All {res['embedded']} entries embedded!")
        if res.get("store_current") is False:
            note("note: some entries (other agents' private entries) still lack vectors of the current model")
        return
    res = hook.embed(svc, agent=agent, entry_id=entry_id, long_only=long_only, force=True,
                     on_start_entry=lambda title: out(f"Generating embedding for '{title}'..."))
    out(f"Embedding generated and saved for: {res.get('id', entry_id)}")


@memory_group.command("auto-anchor")
@click.argument("entry_id", required=False)
@click.option("--threshold", type=float, default=0.75, show_default=True,
              help="Lowest cosine similarity of an anchor (the band ends at 0.95, the near-duplicate ceiling).")
@click.option("--max-anchors", type=click.IntRange(min=1), default=5, show_default=True,
              help="At most this many anchors per entry (the best by similarity).")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--detailed", is_flag=True, help="Show similarities.")
@click.option("--fill", is_flag=True, help="Only entries that have no anchor yet.")
@handled
def auto_anchor_cmd(entry_id: str | None, threshold: float, max_anchors: int, dry_run: bool, detailed: bool,
                    fill: bool) -> None:
    """Anchor entries to their nearest neighbours by meaning and prune anchors that left the band."""
    svc = open_service()
    hook = vector_hook_or_fail(svc)

    def show(rep: Any) -> None:
        out(f"Processing {rep.id} \"{rep.title}\"...")
        if rep.pruned:
            out(f"  Pruning {len(rep.pruned)} stale anchor(s)")
            for aid, s in rep.pruned:
                out(f"  x {aid}" + (f" ({s:.2f})" if detailed else ""))
        for aid, title, s in rep.added:
            out(f"  → {aid} \"{title}\"" + (f" ({s:.2f})" if detailed else ""))
        if dry_run:
            out(f"[DRY RUN] Would add {len(rep.added)} anchors and prune {len(rep.pruned)} stale anchors on "
                f"{rep.id}")
        else:
            out(f"Added {len(rep.added)} anchors, pruned {len(rep.pruned)} stale")

    res = hook.auto_anchor(svc, agent=acting_agent(), entry_id=entry_id, threshold=threshold,
                           max_anchors=max_anchors, dry_run=dry_run, fill=fill, on_entry=show,
                           on_start=None if entry_id else lambda n: out(f"Processing {n} entries..."))
    if dry_run:
        out("\n[DRY RUN] Complete. No changes written.")
    else:
        out(f"\n✓ Added {res['added']} total anchors, pruned {res['pruned']} stale across {res['entries']} entries")
