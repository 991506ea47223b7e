"""Root command group, global options and error handling shared by every command."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from functools import cached_property

import click

from m1nd import __version__
from m1nd.config import Settings, load_settings
from m1nd.errors import M1ndError

GLOBAL_OPTIONS = ("--home", "--workspace", "--agent", "--memory-url")


@dataclass
class CliContext:
    """What every command receives in ``ctx.obj``: settings, the acting agent, and a lazy workspace."""

    home: str | None = None
    workspace_path: str | None = None
    agent_flag: str | None = None
    memory_url: str | None = None
    extra: dict = field(default_factory=dict)

    @cached_property
    def settings(self) -> Settings:
        return load_settings(home=self.home, workspace=self.workspace_path, memory_url_flag=self.memory_url)

    @property
    def agent(self) -> str | None:
        """``--agent`` > ``M1ND_CURRENT_AGENT`` (empty = unset); None when neither is set."""
        return self.agent_flag or os.environ.get("M1ND_CURRENT_AGENT") or None

    @cached_property
    def workspace(self):
        from m1nd.workspace import Workspace

        return Workspace(self.settings, transport="cli")


def split_global_options(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """Pull ``--home/--workspace/--agent/--memory-url`` out of argv wherever they stand (before or after the
    command word)."""
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


# Each top-level command, the ``m1nd.cli`` module whose ``register(cli)`` adds it, and the first sentence of its
# help. ``m1nd --help``, ``--version`` and shell completion read this table instead of importing the command
# modules (they build their commands from the tool registry, which imports numpy and the services): a command's
# module is imported only when that command runs or shows its own help. tests/test_cli_lazy.py checks the table
# against what the modules register; a command missing from it still works (every module is then loaded).
COMMANDS: dict[str, tuple[str, str]] = {
    "activate": ("graph", "Rank the code most related to QUERY (words, identifiers, a path or an external id)."),
    "why": ("graph", "Explain how SOURCE and TARGET (external ids) connect: strongest simple paths."),
    "impact": ("graph", "Blast radius of changing NODE_ID: what it reaches forward and what depends on it."),
    "health": ("graph", "Graph, store, embedder and git health."),
    "ingest": ("graph", "Parse the repository at PATH into the code graph (incremental; progress on stderr)."),
    "graph": ("graph", "Draw the neighbourhood of NODE_ID (an external id): the nodes within --depth hops and the "
                       "edges among them."),
    "trace": ("graph", "Rank the code suspected by an error output or stack trace read from FILE (default: stdin): "
                       "frames are mapped to nodes by file and line, then suspicion spreads over the graph."),
    "tools": ("graph", "List the tools (of a profile) with their descriptions."),
    "call": ("graph", "Run TOOL in-process with ARGUMENTS (JSON text, or @file.json); prints structuredContent "
                      "as JSON."),
    "watch": ("watch", "Re-ingest changed files of the ingested roots as they change (debounced batches) until "
                       "Ctrl-C."),
    "serve": ("serve", "Run the MCP server (stdio by default; stdout then carries protocol messages only)."),
    "learn": ("learning", "Feedback on QUERY's results: FEEDBACK is correct, wrong or partial; NODE_ID... the "
                          "nodes concerned."),
    "drift": ("learning", "What changed since a baseline (default: the previous server start): nodes and learned "
                          "weights."),
    "trail": ("learning", "Saved investigations (shared by every agent): list, show, resume, merge, archive."),
    "weights": ("learning", "Learned edge weights: statistics and reset."),
    "learning": ("learning", "Trails and learned weights as a whole: move them between graph.db and a team server."),
    "memory": ("memory", "Knowledge memory: entries with categories, tags, resonance and visibility "
                         "(memory.db, shared by every workspace)."),
    "token": ("tokens", "Bearer tokens for `m1nd serve --http` beyond loopback: each acts as one agent; stored "
                        "hashed."),
    "eval": ("evaluation", "Measure how well activate finds the files a change needed, on this repository's own "
                           "git history."),
}
COMMAND_MODULES = ("graph", "serve", "watch", "learning", "memory", "evaluation", "tokens")


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command itself is needed (see ``COMMANDS``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: set[str] = set()

    def _load(self, module_name: str) -> None:
        if module_name in self._loaded:
            return
        import importlib

        self._loaded.add(module_name)
        try:
            module = importlib.import_module(f"m1nd.cli.{module_name}")
        except ModuleNotFoundError as e:  # an optional module that does not exist yet
            if e.name != f"m1nd.cli.{module_name}":
                raise
            return
        module.register(self)

    def load_all(self) -> None:
        for module_name in COMMAND_MODULES:
            self._load(module_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            if cmd_name in COMMANDS:
                self._load(COMMANDS[cmd_name][0])
            if cmd_name not in self.commands:
                self.load_all()
        return self.commands.get(cmd_name)

    def _short_help(self, name: str, limit: int) -> str:
        if name in self.commands or name not in COMMANDS:
            cmd = self.get_command(click.get_current_context(), name)
            return cmd.get_short_help_str(limit) if cmd is not None else ""
        return click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        with formatter.section("Commands"):
            formatter.write_dl([(n, self._short_help(n, limit)) for n in names])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list:
        from click.shell_completion import CompletionItem

        items = [CompletionItem(n, help=self._short_help(n, 45)) for n in self.list_commands(ctx)
                 if n.startswith(incomplete)]
        # the group's own options (--help, --version) when the word starts with a dash
        items.extend(click.Command.shell_complete(self, ctx, incomplete))
        return items


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="m1nd")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """m1nd: a shared, durable memory of code and knowledge for coding agents.

    Global options (before or after the command word): --home DIR (state directory, default ~/.m1nd or
    $M1ND_HOME), --workspace PATH (project root; default: git top-level of the current directory),
    --agent NAME (acting agent; default $M1ND_CURRENT_AGENT), --memory-url postgresql://… (the knowledge
    memory on a PostgreSQL server shared by a team; default $M1ND_MEMORY_URL, else memory.db in the home).
    """
    if ctx.obj is None:
        ctx.obj = CliContext()


def _register_commands() -> None:
    """Import every command module now (documentation checks walk the whole tree)."""
    cli.load_all()


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
                     agent_flag=found.get("--agent"), memory_url=found.get("--memory-url"))
    if rest[:1] == ["serve"] and not {"-h", "--help"} & set(rest):
        _preload_for_serve(obj)
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
