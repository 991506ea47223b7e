"""The ``m1nd`` command line: adapters over the tool layer (:mod:`m1nd.tools`) and the services (the only user of
click). It never imports :mod:`m1nd.mcp`, except that ``m1nd serve`` starts the MCP face (``cli.serve``).

``m1nd.cli.app`` holds the root group and global options; ``graph`` the graph/lifecycle commands (which run tools
exactly as ``m1nd call`` does); ``memory`` the ``m1nd memory`` group.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    from m1nd.cli.app import run

    return run(argv)
