"""What every ``m1nd memory`` command shares: the ``memory`` group itself, the acting agent, the memory
service of the command (closed with the command), and the group's output and error conventions (memory.md §7).

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
    """The memory service of this command (with its vector hook when an embedding model is installed), closed
    when the command ends."""
    from m1nd.memory.service import MemoryService, env_truthy

    ctx = click.get_current_context()
    obj = root_obj()
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
