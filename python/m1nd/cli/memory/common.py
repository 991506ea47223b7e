"""What every ``m1nd memory`` command shares: the ``memory`` group itself, the acting agent, the memory
service of the command (the workspace's, closed with the command), and the group's output and error conventions
(memory.md §7). The commands reach the memory through the workspace and :mod:`m1nd.tools.memory_ops`.

``--json`` prints pretty JSON (2-space indent) on stdout and nothing else; errors print ``Error: <message>``
on stderr (with ``--json``: ``{"status": "error", "error": <code>, "message": …}``), nothing on stdout, exit
1; command-line usage errors exit 2; notices and progress go to stderr.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from m1nd.errors import M1ndError


def root_obj() -> Any:
    """The root command's context object (:class:`m1nd.cli.app.CliContext`: settings, acting agent)."""
    return click.get_current_context().find_root().obj


def acting_agent() -> str | None:
    obj = root_obj()
    return getattr(obj, "agent", None) if obj is not None else (os.environ.get("M1ND_CURRENT_AGENT") or None)


def open_service(*, apply_schema: bool | None = None) -> Any:
    """The memory service of this command: the workspace's (composed there with its embedding hook when a model is
    installed), closed when the command ends. ``apply_schema=False``: pending migrations are left to the caller."""
    ws = memory_workspace()
    return ws.memory_unmigrated() if apply_schema is False else ws.memory


def memory_workspace() -> Any:
    """The command's :class:`m1nd.workspace.Workspace`, closed when the command ends (nothing is opened until a
    service is used: the memory operations check the acting agent first)."""
    ctx = click.get_current_context()
    ws = root_obj().workspace
    if not ctx.meta.get("m1nd.memory.close"):
        ctx.meta["m1nd.memory.close"] = True
        ctx.call_on_close(ws.close)
    return ws


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
    from m1nd.tools.memory_ops import read_content_file

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
