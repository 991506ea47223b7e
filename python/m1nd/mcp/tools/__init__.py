"""Tool groups; importing this package registers every tool in ``m1nd.mcp.registry.TOOLS``."""

import importlib

# One module per group. Optional groups are skipped while they do not exist yet.
for _group in ("graph", "analysis", "learning", "trails", "perspectives", "memory", "wake", "diagram", "trace"):
    try:
        importlib.import_module(f"m1nd.mcp.tools.{_group}")
    except ModuleNotFoundError as _e:
        if _e.name != f"m1nd.mcp.tools.{_group}":
            raise
