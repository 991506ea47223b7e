"""``m1nd serve``: run the MCP server over stdio (default) or streamable HTTP on a loopback address."""

from __future__ import annotations

import sys

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
def serve_cmd(use_http: bool, host: str, port: int, workers: int) -> None:
    """Run the MCP server (stdio by default; stdout then carries protocol messages only).

    Stops on EOF (stdio), SIGTERM or SIGINT after flushing learned weights.
    """
    obj = click.get_current_context().find_root().obj
    if use_http:
        from m1nd.mcp.http import serve_http

        code = serve_http(obj.settings, host=host, port=port, workers=workers)
    else:
        from m1nd.mcp.server import serve_stdio

        code = serve_stdio(obj.settings)
    sys.exit(code)


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
