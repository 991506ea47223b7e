"""``m1nd memory wake`` (the identity cascade and the token ritual) and ``wake-fetch``: adapters over
:mod:`m1nd.memory.wake` and :mod:`m1nd.memory.ritual`. The ritual always prints JSON (errors as JSON on
stderr)."""

from __future__ import annotations

import json

import click

from m1nd.cli.memory.common import (acting_agent, emit_json, fail, handled, json_option, memory_group,
                                    memory_workspace, out, usage)
from m1nd.defaults import WAKE_DAYS, WAKE_FETCH_DAYS, WAKE_FETCH_LIMIT, WAKE_LIMIT
from m1nd.errors import M1ndError


_WAKE_SET_FLAGS = {"limit": "--limit", "min_resonance": "--min-resonance", "days": "--days",
                   "no_activate": "--no-activate", "include_excluded": "--include-excluded",
                   "resonance_basis": "--resonance-basis"}


def _ritual_fail(err: M1ndError) -> None:
    payload = {"status": "error", "error": err.code, "message": err.message, **(err.details or {})}
    click.echo(json.dumps(payload, ensure_ascii=False), err=True)
    raise SystemExit(1)


@memory_group.command("wake")
@click.option("-l", "--limit", type=int, default=None, help=f"Places in the wake set.  [default: {WAKE_LIMIT}]")
@click.option("--min-resonance", type=int, default=None,
              help="Every entry at or above this basis value, all as core (--limit ignored).")
@click.option("-d", "--days", type=int, default=None, help=f"Recent layer window in days.  [default: {WAKE_DAYS}]")
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
    from m1nd.tools.memory_ops import render_cascade, ritual_begin, ritual_respond, wake_cascade

    cascade_kw = {"limit": WAKE_LIMIT if limit is None else limit, "min_resonance": min_resonance,
                  "days": WAKE_DAYS if days is None else days, "include_excluded": bool(include_excluded),
                  "basis": resonance_basis}
    agent = acting_agent()
    try:
        if respond is not None:
            emit_json(ritual_respond(memory_workspace(), agent, guess=respond, bloom_id=bloom_id, token=session))
            return
        if begin:
            emit_json(ritual_begin(memory_workspace(), agent, wake=wake_n, model=model,  # checks the agent first
                                   force_wake=bool(force_wake), activate=not no_activate, **cascade_kw))
            return
    except M1ndError as e:
        _ritual_fail(e)
    try:
        data = wake_cascade(memory_workspace(), agent, activate=not no_activate, **cascade_kw).to_dict()
    except M1ndError as e:
        fail(e, as_json)
    if as_json:
        emit_json(data)
    else:
        for line in render_cascade(data):
            out(line)


@memory_group.command("wake-fetch")
@click.option("--days", type=int, default=WAKE_FETCH_DAYS, show_default=True)
@click.option("--limit", type=int, default=WAKE_FETCH_LIMIT, show_default=True)
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
    from m1nd.tools.memory_ops import render_facts, wake_fetch

    prefixes = [p for p in (exclude_tags[0].split(",") if exclude_tags else []) if p.strip()]
    data = wake_fetch(memory_workspace(), acting_agent(), days=days, limit=limit, exclude_tags=prefixes,
                      basis=resonance_basis).to_dict()
    if as_json:
        emit_json(data)
    else:
        for line in render_facts(data):
            out(line)
