"""``m1nd memory wake-log``: scoring the ritual's guess log and reading it back, terminal-only (its numbers
must never reach the context of the model that made the guesses); an adapter over
:mod:`m1nd.memory.wakelog` through :mod:`m1nd.tools.memory_ops`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from m1nd.cli.memory.common import acting_agent, fail, handled, memory_group, memory_workspace, note, out
from m1nd.errors import M1ndError


@memory_group.group("wake-log")
def wake_log_group() -> None:
    """Score your ritual guess log and read it back. The readers are terminal-only: their numbers must never reach
    the context of the model that made the guesses."""


@wake_log_group.command("score")
def wake_log_score_cmd() -> None:
    """Score every pending guess of yours; stdout is exactly one JSON line {"status","rows","skipped"}."""
    from m1nd.tools.memory_ops import wake_log

    agent = acting_agent()
    try:
        data, notes = wake_log(memory_workspace(), "score", agent)  # checks the agent before the store is opened
    except M1ndError as e:
        fail(e, False)
    for n in notes:
        note(n)
    click.echo(json.dumps(data, separators=(",", ":")))


def _terminal_guard(cmd: str, out_path: str | None) -> None:
    """Refuse before anything is opened: no terminal and no --out, or an unsafe --out."""
    from m1nd.tools.memory_ops import check_out_path, terminal_only

    if out_path is None:
        if not sys.stdout.isatty():
            fail(M1ndError(terminal_only(cmd), code="invalid_argument"), False)
        return
    try:
        check_out_path(out_path)
    except M1ndError as e:
        fail(e, False)


def _wake_log_emit(out_path: str | None, data: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> None:
    from m1nd.tools.memory_ops import write_out

    if out_path is None:
        click.echo(render(data), nl=False)
        return
    write_out(out_path, data, render)
    out(out_path)


def _notice_help() -> str:
    from m1nd.tools.memory_ops import NOTICE

    return NOTICE


@wake_log_group.command("report", help="One ritual: bucket counts per phrase source, Axis A and Axis B medians. "
                        "Terminal-only (or --out FILE; JSON when it ends in .json).\n\n" + _notice_help())
@click.option("--wake", "wake_n", type=int, default=None, help="Wake to report (default: newest with scored rows).")
@click.option("--out", "out_path", default=None, help="Write here instead and print only the path.")
@handled
def wake_log_report_cmd(wake_n: int | None, out_path: str | None) -> None:
    _terminal_guard("report", out_path)
    from m1nd.tools.memory_ops import render_report, wake_log

    _wake_log_emit(out_path, wake_log(memory_workspace(), "report", acting_agent(), wake=wake_n), render_report)


@wake_log_group.command("bloom")
@click.argument("entry_id")
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--out", "out_path", default=None, help="Write here instead and print only the path.")
@handled
def wake_log_bloom_cmd(entry_id: str, limit: int, out_path: str | None) -> None:
    """One entry across rituals, most recent first. Terminal-only (or --out FILE)."""
    _terminal_guard("bloom", out_path)
    from m1nd.tools.memory_ops import render_rows, wake_log

    history = wake_log(memory_workspace(), "history", acting_agent(), bloom_id=entry_id, limit=limit)
    _wake_log_emit(out_path, history, render_rows)


@wake_log_group.command("wake")
@click.argument("wake_n", type=int)
@click.option("--out", "out_path", default=None, help="Write here instead and print only the path.")
@handled
def wake_log_wake_cmd(wake_n: int, out_path: str | None) -> None:
    """Every guess of one ritual in sequence order. Terminal-only (or --out FILE)."""
    _terminal_guard("wake", out_path)
    from m1nd.tools.memory_ops import render_rows, wake_log

    _wake_log_emit(out_path, wake_log(memory_workspace(), "rows", acting_agent(), wake=wake_n), render_rows)
