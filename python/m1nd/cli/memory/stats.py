"""``m1nd memory stats``, ``health``, ``growth`` and ``open-threads``: read-only figures of the visible
entries."""

from __future__ import annotations



from m1nd.cli.memory.common import (acting_agent, emit_json, handled, json_option, memory_group, open_service,
                                    out, preview)


@memory_group.command("stats")
@json_option
@handled
def stats_cmd(as_json: bool) -> None:
    """Entry counts per category (visible entries only)."""
    s = open_service().stats(agent=acting_agent())
    if as_json:
        emit_json(s.to_dict())
        return
    out("Memory Index Statistics")
    out()
    out(f"Total entries: {s.total}")
    out()
    for c, n in s.categories.items():
        out(f"  {c:<12} {n}")


@memory_group.command("health")
@json_option
@handled
def health_cmd(as_json: bool) -> None:
    """Embedding and anchor coverage, stale high-resonance entries."""
    h = open_service().health(agent=acting_agent())
    if as_json:
        emit_json(h.to_dict())
        return
    out("Graph Health")
    out()
    out(f"  Total entries: {h.total}")
    out(f"  {h.embedded_pct:3}% embedded")
    out(f"  {h.anchored_pct:3}% anchored")
    out(f"  {h.stale_high_res_pct:3}% stale (high-res, >30d)")


@memory_group.command("growth")
@json_option
@handled
def growth_cmd(as_json: bool) -> None:
    """Entries per week over the last 8 weeks (oldest first)."""
    g = open_service().growth(agent=acting_agent())
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
    rows = open_service().open_threads(agent=acting_agent())
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        out("No open threads.")
        return
    out(f"Open threads ({len(rows)})")
    out()
    for r in rows:
        out(f"  [r{r.resonance}] {r.id} {r.created_at}  {preview(r.body, 80)}")
