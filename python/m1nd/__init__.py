"""m1nd: a local engine that gives coding agents a shared, durable memory of their code and of what they learned.

Public surface (imported lazily so ``import m1nd`` and ``m1nd --help`` stay fast):

- :class:`m1nd.workspace.Workspace` — the composition root (graph + memory services for one home/workspace), with
  the typed API (``ws.activate(...) -> ActivationResult``; the result types are in :mod:`m1nd.api`);
- :func:`m1nd.tools.registry.call_tool` — run any tool in-process exactly as the MCP server does;
- :mod:`m1nd.errors` — the exception family.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["Workspace", "__version__", "call_tool"]


def __getattr__(name: str) -> Any:
    if name == "Workspace":
        from m1nd.workspace import Workspace

        return Workspace
    if name == "call_tool":
        from m1nd.tools.registry import call_tool

        return call_tool
    raise AttributeError(f"module 'm1nd' has no attribute {name!r}")
