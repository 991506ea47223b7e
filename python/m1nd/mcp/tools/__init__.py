"""Tool groups; importing this package registers every tool in ``m1nd.mcp.registry.TOOLS``."""

from m1nd.mcp.tools import graph  # noqa: F401

try:  # the memory group is built in parallel; the graph tools must not depend on it
    from m1nd.mcp.tools import memory  # noqa: F401
except ImportError:  # pragma: no cover
    pass
