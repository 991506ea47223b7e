"""``m1nd serve``: run the MCP server over stdio (default) or streamable HTTP on a loopback address."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import click


@click.command("serve")
@click.option("--http", "use_http", is_flag=True,
              help="Serve streamable HTTP on http://HOST:PORT/mcp (many agents share one runtime) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Loopback address to bind with --http (127.0.0.1 or ::1; others are refused).")
@click.option("--port", type=click.IntRange(0, 65535), default=7341, show_default=True,
              help="TCP port with --http (0 picks a free port; the address is printed on stderr).")
@click.option("--workers", type=click.IntRange(1, 256), default=8, show_default=True,
              help="Tool calls run concurrently with --http.")
@click.option("--tools", "profile", metavar="PROFILE",
              help="Tools offered: core (default, 12 tools), graph, memory, perspectives or all. "
                   "Default: $M1ND_TOOLS, else 'tools' in the config file, else core.")
@click.option("--watch/--no-watch", "watch", default=None,
              help="Re-ingest changed files of the ingested roots as they change, so answers follow edits. "
                   "Default: on over stdio, off with --http; $M1ND_WATCH=0/1 also sets it.")
def serve_cmd(use_http: bool, host: str, port: int, workers: int, profile: str | None, watch: bool | None) -> None:
    """Run the MCP server (stdio by default; stdout then carries protocol messages only).

    Calls without agent_id act as --agent NAME when given (also $M1ND_CURRENT_AGENT or 'agent' in the config
    file), else as the client's name and session (e.g. cursor@3fa2c91b). Stops on EOF (stdio), SIGTERM or SIGINT
    after flushing learned weights.
    """
    from m1nd.config import setting
    from m1nd.errors import M1ndError
    from m1nd.mcp.profiles import DEFAULT_PROFILE, check_profile
    from m1nd.mcp.registry import check_agent

    obj = click.get_current_context().find_root().obj
    home = obj.settings.home
    try:
        raw, source = setting("tools", profile, "M1ND_TOOLS", home, DEFAULT_PROFILE)
        profile = check_profile(raw or DEFAULT_PROFILE, source)
        agent, source = setting("agent", obj.agent_flag, "M1ND_CURRENT_AGENT", home)
        if agent is not None:
            check_agent(agent, source)
    except M1ndError as e:
        click.echo(f"Error ({e.code}): {e.message} Recover: {e.recover}", err=True)
        sys.exit(2)
    if watch is None:
        env = os.environ.get("M1ND_WATCH", "").strip().lower()
        watch = (env not in ("0", "false", "no", "off")) if env else not use_http
    obj.settings = replace(obj.settings, watch=watch)
    if use_http:
        from m1nd.mcp.http import serve_http

        code = serve_http(obj.settings, host=host, port=port, workers=workers, profile=profile, agent=agent)
    else:
        from m1nd.mcp.server import serve_stdio

        code = serve_stdio(obj.settings, profile=profile, agent=agent)
    sys.exit(code)


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
