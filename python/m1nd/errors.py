"""One exception family for the whole package.

Every error carries a stable machine ``code`` (the codes of spec/mcp.md §3), a human ``message`` that names the
problem, and a ``recover`` hint that says what to do next. Each class also inherits the closest built-in so
callers that only know Python's exceptions still catch them (``NotFoundError`` is a ``KeyError``...).
Adapters (CLI, MCP) turn these into exit codes / ``isError`` results; they never invent messages of their own.
"""

from __future__ import annotations

from typing import Any


class M1ndError(Exception):
    """Base of every error m1nd raises on purpose."""

    code = "internal"
    default_recover = "retry, or report the problem with the message above"

    def __init__(self, message: str, *, recover: str | None = None, details: dict[str, Any] | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.recover = recover or self.default_recover
        self.details = details or {}
        if code is not None:
            self.code = code

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return self.message

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "recover": self.recover, "details": self.details}


class InvalidInputError(M1ndError, ValueError):
    code = "invalid_argument"
    default_recover = "fix the argument and call again"


class NotFoundError(M1ndError, KeyError):
    code = "not_found"
    default_recover = "list what exists first, then retry with a valid id"


class UnknownNodeError(NotFoundError):
    code = "unknown_node"
    default_recover = "use one of the suggested ids, or run activate with words to find ids"


class GraphEmptyError(M1ndError, LookupError):
    code = "graph_empty"
    default_recover = "call ingest with path=<repo root> first"


def graph_empty_error(workspace: Any) -> GraphEmptyError:
    """The graph of ``workspace`` has no nodes: say which workspace was checked and how to choose another (a host
    that starts the server outside the repository gets an empty workspace)."""
    return GraphEmptyError(
        f"the graph of workspace {workspace} is empty",
        recover=(f"call ingest with path=<repo root> (path={workspace} ingests this workspace); to serve another "
                 "workspace, start m1nd serve inside the repository or with --workspace PATH, or use a client that "
                 "announces MCP roots"),
        details={"workspace": str(workspace)})


class GraphTooLargeError(M1ndError, ValueError):
    code = "graph_too_large"
    default_recover = "exclude vendored or generated directories"


class BusyError(M1ndError, TimeoutError):
    code = "busy"
    default_recover = "retry when the other operation finishes"


class StoreError(M1ndError, OSError):
    code = "internal"
    default_recover = "check that the M1ND_HOME directory is writable and not on a full disk"


class RefusedError(M1ndError, PermissionError):
    """An operation refused by policy (path_denied, wrong_agent, ...); the code is passed explicitly."""

    code = "refused"
    default_recover = "see the message for what is allowed"


class LimitReachedError(M1ndError, OverflowError):
    code = "limit_reached"
    default_recover = "close or narrow something, then retry"
