"""Root command group, global options and error handling shared by every command."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from functools import cached_property

import click

from m1nd.config import Settings, load_settings
from m1nd.errors import M1ndError

GLOBAL_OPTIONS = ("--home", "--workspace", "--agent")


@dataclass
class CliContext:
    """What every command receives in ``ctx.obj``: settings, the acting agent, and a lazy workspace."""

    home: str | None = None
    workspace_path: str | None = None
    agent_flag: str | None = None
    extra: dict = field(default_factory=dict)

    @cached_property
    def settings(self) -> Settings:
        return load_settings(home=self.home, workspace=self.workspace_path)

    @property
    def agent(self) -> str | None:
        """``--agent`` > ``M1ND_CURRENT_AGENT`` (empty = unset); None when neither is set."""
        return self.agent_flag or os.environ.get("M1ND_CURRENT_AGENT") or None

    @cached_property
    def workspace(self):
        from m1nd.workspace import Workspace

        return Workspace(self.settings, transport="cli")


def split_global_options(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """Pull ``--home/--workspace/--agent`` out of argv wherever they stand (before or after the command word)."""
    found: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            rest.extend(argv[i:])
            break
        name, eq, value = tok.partition("=")
        if name in GLOBAL_OPTIONS:
            if eq:
                found[name] = value
            elif i + 1 < len(argv):
                found[name] = argv[i + 1]
                i += 1
            else:
                raise click.UsageError(f"option {name} needs a value")
            i += 1
            continue
        rest.append(tok)
        i += 1
    return found, rest


def fail(err: M1ndError, *, as_json: bool = False) -> None:
    """Print a tool/service error the CLI way and exit 1."""
    import json

    if as_json:
        click.echo(json.dumps({"error": err.to_dict()}, indent=2, ensure_ascii=False), err=True)
    else:
        click.echo(f"Error ({err.code}): {err.message} Recover: {err.recover}", err=True)
    sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="m1nd", prog_name="m1nd")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """m1nd: a shared, durable memory of code and knowledge for coding agents.

    Global options (before or after the command word): --home DIR (state directory, default ~/.m1nd or
    $M1ND_HOME), --workspace PATH (project root; default: git top-level of the current directory),
    --agent NAME (acting agent; default $M1ND_CURRENT_AGENT).
    """
    if ctx.obj is None:
        ctx.obj = CliContext()


def _register_commands() -> None:
    """Each command module exposes ``register(cli)``. Optional ones are skipped while they do not exist yet."""
    import importlib

    for name in ("graph", "serve", "learning", "memory", "evaluation"):
        try:
            module = importlib.import_module(f"m1nd.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"m1nd.cli.{name}":
                raise
            continue
        module.register(cli)


def _preload_for_serve(obj: CliContext) -> None:
    """Start loading the embedding model before the command modules are imported (issue 13 item 5: start-up)."""
    try:
        from m1nd.workspace import preload_embedder

        preload_embedder(obj.settings)
    except M1ndError:
        pass  # the server reports a bad home or workspace itself


def run(argv: list[str] | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("M1ND_LOG_LEVEL", "WARNING").upper(),
                        format="%(levelname)s %(name)s: %(message)s")
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        found, rest = split_global_options(args)
    except click.UsageError as e:
        click.echo(f"Error: {e.message}", err=True)
        return 2
    obj = CliContext(home=found.get("--home"), workspace_path=found.get("--workspace"),
                     agent_flag=found.get("--agent"))
    if rest[:1] == ["serve"] and not {"-h", "--help"} & set(rest):
        _preload_for_serve(obj)
    _register_commands()
    try:
        cli.main(args=rest, prog_name="m1nd", obj=obj, standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except M1ndError as e:
        click.echo(f"Error ({e.code}): {e.message} Recover: {e.recover}", err=True)
        return 1
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    except BrokenPipeError:
        return 0
    return 0
