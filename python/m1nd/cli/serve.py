"""``m1nd serve``: run the MCP server over stdio (default) or streamable HTTP (loopback, or beyond with tokens and
TLS)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import click


@click.command("serve")
@click.option("--http", "use_http", is_flag=True,
              help="Serve streamable HTTP on http://HOST:PORT/mcp (many agents share one runtime) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind with --http. Loopback (127.0.0.1, ::1) needs nothing more; any other address "
                   "(0.0.0.0 for every interface) requires bearer tokens and --tls-cert/--tls-key (or "
                   "--allow-plain-http behind a TLS proxy).")
@click.option("--port", type=click.IntRange(0, 65535), default=7341, show_default=True,
              help="TCP port with --http (0 picks a free port; the address is printed on stderr).")
@click.option("--workers", type=click.IntRange(1, 256), default=8, show_default=True,
              help="Tool calls run concurrently with --http.")
@click.option("--tools", "profile", metavar="PROFILE",
              help="Tools offered: core (default, 12 tools), graph, memory, perspectives or all. "
                   "Default: $M1ND_TOOLS, else 'tools' in the config file, else core.")
@click.option("--tls-cert", type=click.Path(dir_okay=False), default=None,
              help="PEM certificate chain: serve https:// (with --tls-key unless the file holds the key too).")
@click.option("--tls-key", type=click.Path(dir_okay=False), default=None, help="PEM private key of --tls-cert.")
@click.option("--auth", is_flag=True,
              help="Require bearer tokens ('m1nd token create AGENT') on loopback too, e.g. behind a local proxy.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="A DNS name clients use to reach the server (accepted in Host and Origin); repeatable.")
@click.option("--allow-plain-http", is_flag=True,
              help="Serve plain HTTP beyond loopback: only behind a TLS-terminating proxy on a private network.")
@click.option("--watch/--no-watch", "watch", default=None,
              help="Re-ingest changed files of the ingested roots as they change, so answers follow edits. "
                   "Default: on over stdio, off with --http; $M1ND_WATCH=0/1 also sets it.")
def serve_cmd(use_http: bool, host: str, port: int, workers: int, profile: str | None, tls_cert: str | None,
              tls_key: str | None, auth: bool, allow_hosts: tuple[str, ...], allow_plain_http: bool,
              watch: bool | None) -> None:
    """Run the MCP server (stdio by default; stdout then carries protocol messages only).

    Calls without agent_id act as --agent NAME when given (also $M1ND_CURRENT_AGENT or 'agent' in the config
    file), else as the client's name and session (e.g. cursor@3fa2c91b). Stops on EOF (stdio), SIGTERM or SIGINT
    after flushing learned weights.
    """
    from m1nd.config import setting
    from m1nd.errors import M1ndError
    from m1nd.tools.profiles import DEFAULT_PROFILE, check_profile
    from m1nd.tools.registry import check_agent

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
    http_only = [f for f, v in (("--tls-cert", tls_cert), ("--tls-key", tls_key), ("--auth", auth),
                                ("--allow-host", allow_hosts), ("--allow-plain-http", allow_plain_http)) if v]
    if http_only and not use_http:
        click.echo(f"Error (invalid_argument): {', '.join(http_only)} only apply with --http. Recover: add --http "
                   "or drop them", err=True)
        sys.exit(2)
    if watch is None:
        env = os.environ.get("M1ND_WATCH", "").strip().lower()
        watch = (env not in ("0", "false", "no", "off")) if env else not use_http
    obj.settings = replace(obj.settings, watch=watch)
    if use_http:
        from m1nd.mcp.http import serve_http

        code = serve_http(obj.settings, host=host, port=port, workers=workers, profile=profile, agent=agent,
                          tls_cert=tls_cert, tls_key=tls_key, auth=auth, allow_hosts=allow_hosts,
                          allow_plain_http=allow_plain_http)
    else:
        from m1nd.mcp.stdio import serve_stdio

        code = serve_stdio(obj.settings, profile=profile, agent=agent)
    from m1nd.process_exit import exit_process

    exit_process(code)  # everything is flushed and closed: no interpreter finalisation under native threads


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
