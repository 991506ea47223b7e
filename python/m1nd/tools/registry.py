"""Tool declarations: one place that defines each tool's parameters, schemas and handler.

``inputSchema``/``outputSchema`` are generated from :class:`Param` lists (spec mcp.md §6), and
:func:`validate_arguments` enforces exactly what the schema says, with messages that name the argument, the allowed
range and, for unknown keys, the nearest valid name. The MCP server, ``m1nd call`` and the CLI shortcuts all go
through :func:`call_tool`, so a tool behaves identically on every surface; nothing here knows about a transport.
"""

from __future__ import annotations

import difflib
import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from m1nd.errors import InvalidInputError, M1ndError

log = logging.getLogger(__name__)

AGENT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$"
_AGENT_RE = re.compile(AGENT_ID_PATTERN)


def check_agent(agent: str, source: str = "--agent") -> str:
    if not _AGENT_RE.match(agent):
        raise InvalidInputError(f"agent name {agent!r} (from {source}) must match {AGENT_ID_PATTERN}",
                                recover="use letters, digits and . _ : @ - (at most 64 characters)")
    return agent
_MISSING: Any = object()
# Every integer ends up in SQLite or a NumPy int64 somewhere; larger ones are refused at the boundary instead of
# overflowing deep inside a tool as an internal error.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# A lone surrogate (JSON "\\udXXX" without its pair) is not Unicode text: it cannot be stored or encoded.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
               "object": "object", "string[]": "array", "object[]": "array", "integer[]": "array"}


@dataclass(frozen=True)
class Param:
    """One tool parameter. ``type`` is one of string, integer, number, boolean, object, string[], object[]."""

    name: str
    type: str
    description: str = ""
    required: bool = False
    default: Any = _MISSING
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    enum: tuple[str, ...] | None = None
    pattern: str | None = None
    nullable: bool = False
    unique_items: bool = False

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": _JSON_TYPES[self.type]}
        if self.nullable:
            s["type"] = [s["type"], "null"]
        if self.description:
            s["description"] = self.description
        if self.type.endswith("[]"):
            item: dict[str, Any] = {"type": _JSON_TYPES[self.type[:-2]]}
            if self.enum:
                item = {"enum": list(self.enum)}
            if self.max_length is not None:
                item["maxLength"] = self.max_length
            if self.pattern:
                item["pattern"] = self.pattern
            s["items"] = item
            if self.min_items is not None:
                s["minItems"] = self.min_items
            if self.max_items is not None:
                s["maxItems"] = self.max_items
            if self.unique_items:
                s["uniqueItems"] = True
        else:
            if self.enum:
                s["enum"] = list(self.enum)
            if self.minimum is not None:
                s["minimum"] = self.minimum
            if self.maximum is not None:
                s["maximum"] = self.maximum
            if self.min_length is not None:
                s["minLength"] = self.min_length
            if self.max_length is not None:
                s["maxLength"] = self.max_length
            if self.pattern:
                s["pattern"] = self.pattern
        if self.default is not _MISSING:
            s["default"] = self.default
        return s


COMMON_PARAMS = (
    # Optional (issue 15): absent, the connection's agent acts (server --agent, else client name @ session).
    Param("agent_id", "string", "Acting agent; default: this connection's.", pattern=AGENT_ID_PATTERN),
    Param("max_output_chars", "integer", "Cap on the response's characters.", default=8000,
          minimum=500, maximum=100000),
)

# A handler answers with the service's typed result (a dataclass with ``to_dict()``, the wire object in wire order),
# or with the wire dict itself when the tool composes its answer from several calls.
Handler = Callable[[Any, dict[str, Any]], Any]
# (the handler's answer, validated arguments) -> the agent-facing next step, or None (m1nd.tools.hints)
Hinter = Callable[[Any, dict[str, Any]], str | None]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    group: str
    params: tuple[Param, ...]
    handler: Handler
    output_required: tuple[str, ...] = ()
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    # Lists that shaping may shorten (best first); everything else is never dropped.
    shrinkable: tuple[str, ...] = ()
    # Parameter names that cannot be combined, e.g. (("content", "append"),) -> at most one of each group.
    exclusive: tuple[tuple[str, ...], ...] = ()
    # A query on the code graph: counted per agent before the handler runs (health's counters, and the periodic
    # flush of learned weights every 50 queries), so handlers only forward their arguments.
    counts_query: bool = False
    # The tool layer times every call of a timed tool and puts ``elapsed_ms`` in its result (services never time
    # themselves): at the end, or before the first of ``elapsed_before`` present (where the key has always been).
    timed: bool = False
    elapsed_before: tuple[str, ...] = ()
    # The agent-facing hint of a result (services write none): placed last, or before the first of ``hint_before``.
    hint: Hinter | None = None
    hint_before: tuple[str, ...] = ()
    all_params: tuple[Param, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "all_params", (COMMON_PARAMS[0], *self.params, COMMON_PARAMS[1]))

    def param(self, name: str) -> Param | None:
        return next((p for p in self.all_params if p.name == name), None)

    def input_schema(self, only: tuple[str, ...] | None = None) -> dict[str, Any]:
        """The JSON schema of the arguments; ``only`` lists a subset of the optional parameters (a small profile),
        the others remaining accepted."""
        shown = [p for p in self.all_params
                 if only is None or p.required or p.name in only or p in COMMON_PARAMS]
        schema: dict[str, Any] = {"type": "object"}
        if only is None:  # a subset leaves the unlisted parameters allowed (JSON Schema's default)
            schema["additionalProperties"] = False
        required = [p.name for p in shown if p.required]
        if required:
            schema["required"] = required
        schema["properties"] = {p.name: p.schema() for p in shown}
        return schema

    def output_schema(self) -> dict[str, Any]:
        # additionalProperties is left at JSON Schema's default (true): results may carry extra fields.
        return {"type": "object", "required": [*self.output_required, "response_chars"]}

    def listing(self, only: tuple[str, ...] | None = None) -> dict[str, Any]:
        # Hints are listed only where they differ from the protocol's defaults (readOnly false, destructive true,
        # idempotent false, openWorld true): every character here costs context in every host turn.
        hints: dict[str, Any] = {"readOnlyHint": True} if self.read_only else {"destructiveHint": self.destructive}
        if self.idempotent:
            hints["idempotentHint"] = True
        hints["openWorldHint"] = False
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.input_schema(only), "outputSchema": self.output_schema(), "annotations": hints}


TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    if tool.name in TOOLS:
        raise RuntimeError(f"tool {tool.name!r} registered twice")
    if len(tool.description) > 600:
        raise RuntimeError(f"tool {tool.name!r}: description over 600 characters")
    TOOLS[tool.name] = tool
    return tool


def load_all() -> dict[str, Tool]:
    """Import every tool group (:data:`m1nd.tools.GROUPS`) so that all tools are registered."""
    import importlib

    from m1nd.tools import GROUPS

    for group in GROUPS:
        importlib.import_module(f"m1nd.tools.{group}")  # import side effect: registration
    return TOOLS


def closest(name: str, options: list[str], n: int = 1) -> list[str]:
    return difflib.get_close_matches(name, options, n=n, cutoff=0.5)


def unknown_tool_message(name: str) -> str:
    hint = closest(name, sorted(load_all()))
    did = f" (did you mean '{hint[0]}'? call tools/list)" if hint else " (call tools/list)"
    return f"unknown tool '{name}'{did}"


# -- validation -----------------------------------------------------------------------------------------------
def _describe_range(p: Param) -> str:
    kind = {"integer": "an integer", "number": "a number"}.get(p.type, p.type)
    if p.minimum is not None and p.maximum is not None:
        return f"{kind} between {_fmt(p.minimum)} and {_fmt(p.maximum)}"
    if p.minimum is not None:
        return f"{kind} ≥ {_fmt(p.minimum)}"
    if p.maximum is not None:
        return f"{kind} ≤ {_fmt(p.maximum)}"
    return kind


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _check_value(p: Param, v: Any) -> Any:
    def bad(expect: str) -> InvalidInputError:
        return InvalidInputError(f"argument '{p.name}' must be {expect} (got {_short(v)})",
                                 details={"argument": p.name})

    if v is None and p.nullable:
        return None
    t = p.type
    if t == "string":
        if not isinstance(v, str):
            raise bad("a string")
        if p.min_length is not None and len(v) < p.min_length:
            raise bad(f"a string of at least {p.min_length} characters" if p.min_length > 1 else "a non-empty string")
        if p.max_length is not None and len(v) > p.max_length:
            raise InvalidInputError(f"argument '{p.name}' is too long: {len(v)} characters (at most {p.max_length})",
                                    details={"argument": p.name})
        if p.enum and v not in p.enum:
            raise bad("one of " + ", ".join(p.enum))
        if p.pattern and not re.match(p.pattern, v):
            raise bad(f"a string matching {p.pattern}")
        return v
    if t == "boolean":
        if not isinstance(v, bool):
            raise bad("true or false")
        return v
    if t in ("integer", "number"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise bad(_describe_range(p))
        if t == "integer":
            if isinstance(v, float):
                if not v.is_integer():
                    raise bad(_describe_range(p))
                v = int(v)
            if not INT64_MIN <= v <= INT64_MAX:
                raise bad(f"{_describe_range(p)} within 64 bits")
        elif not math.isfinite(v):
            raise bad(_describe_range(p))
        if (p.minimum is not None and v < p.minimum) or (p.maximum is not None and v > p.maximum):
            raise bad(_describe_range(p))
        return v
    if t == "object":
        if not isinstance(v, dict):
            raise bad("an object")
        return v
    if t.endswith("[]"):
        if not isinstance(v, list):
            raise bad(f"an array of {t[:-2]}s")
        if p.min_items is not None and len(v) < p.min_items:
            raise bad(f"an array with at least {p.min_items} item{'s' if p.min_items != 1 else ''}")
        if p.max_items is not None and len(v) > p.max_items:
            raise InvalidInputError(f"argument '{p.name}' has {len(v)} items (at most {p.max_items})",
                                    details={"argument": p.name})
        item_type = t[:-2]
        for i, x in enumerate(v):
            ok = {"string": isinstance(x, str), "object": isinstance(x, dict),
                  "integer": isinstance(x, int) and not isinstance(x, bool)}[item_type]
            if not ok:
                raise InvalidInputError(f"argument '{p.name}' item {i} must be a {item_type} (got {_short(x)})",
                                        details={"argument": p.name})
            if p.enum and x not in p.enum:
                raise InvalidInputError(f"argument '{p.name}' item {i} must be one of {', '.join(p.enum)} "
                                        f"(got {_short(x)})", details={"argument": p.name})
            if item_type == "string" and p.max_length is not None and len(x) > p.max_length:
                raise InvalidInputError(f"argument '{p.name}' item {i} is too long (at most {p.max_length} "
                                        f"characters)", details={"argument": p.name})
        if p.unique_items and len({repr(x) for x in v}) != len(v):
            raise bad("an array without repeated items")
        return v
    raise RuntimeError(f"unknown parameter type {t}")  # a declaration bug, not user input


def check_wire_values(args: dict[str, Any]) -> None:
    """Range- and encoding-check every value (keys too) at any depth: integers must fit in 64 bits and strings must
    be valid Unicode. One walk for every tool, before any declaration-specific check."""
    stack: list[tuple[str, Any]] = [(k, v) for k, v in args.items()]
    while stack:
        where, v = stack.pop()
        name = where.split(".", 1)[0].split("[", 1)[0]
        if isinstance(v, str):
            m = _SURROGATE_RE.search(v)
            if m:
                raise InvalidInputError(
                    f"argument '{where}' is not valid Unicode: lone surrogate \\u{ord(m.group()):04x} at character "
                    f"{m.start()}", recover="send text as valid UTF-8 (surrogate pairs must be complete)",
                    details={"argument": name})
        elif isinstance(v, int) and not isinstance(v, bool):
            if not INT64_MIN <= v <= INT64_MAX:
                raise InvalidInputError(
                    f"argument '{where}' is out of range: integers must be between -2^63 and 2^63-1 "
                    f"(got {len(str(abs(v)))} digits)", recover="pass a smaller number",
                    details={"argument": name})
        elif isinstance(v, dict):
            for k, x in v.items():
                if _SURROGATE_RE.search(k):
                    raise InvalidInputError(f"argument '{where}' has a key that is not valid Unicode (lone "
                                            "surrogate)", recover="send keys as valid UTF-8",
                                            details={"argument": name})
                stack.append((f"{where}.{k}", x))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))


def validate_arguments(tool: Tool, args: Any) -> dict[str, Any]:
    """Check ``args`` against the declaration; return a new dict with defaults filled in."""
    if not isinstance(args, dict):
        raise InvalidInputError("arguments must be a JSON object")
    for key in args:
        if _SURROGATE_RE.search(key):
            raise InvalidInputError("an argument name is not valid Unicode (lone surrogate)",
                                    recover="send argument names as valid UTF-8")
    check_wire_values(args)
    names = [p.name for p in tool.all_params]
    for key in args:
        if key not in names:
            hint = closest(key, names)
            did = f" (did you mean '{hint[0]}'?)" if hint else f"; valid arguments: {', '.join(names)}"
            raise InvalidInputError(f"unknown argument '{key}'{did}", details={"argument": key})
    out: dict[str, Any] = {}
    for p in tool.all_params:
        if p.name in args:
            out[p.name] = _check_value(p, args[p.name])
        elif p.required:
            kind = _describe_range(p) if p.type in ("integer", "number") else p.type
            raise InvalidInputError(f"missing required argument '{p.name}' ({kind})", details={"argument": p.name})
        elif p.default is not _MISSING:
            out[p.name] = p.default
    for group in tool.exclusive:
        given = [g for g in group if args.get(g) is not None]
        if len(given) > 1:
            raise InvalidInputError(f"arguments {', '.join(repr(g) for g in given)} cannot be combined; pass one")
    return out


# -- calling --------------------------------------------------------------------------------------------------
@dataclass
class ToolResult:
    structured: dict[str, Any]
    is_error: bool

    def text(self) -> str:
        import json

        if self.is_error:
            e = self.structured["error"]
            return f"Error ({e['code']}): {e['message']} Recover: {e['recover']}"
        return json.dumps(self.structured, separators=(",", ":"), ensure_ascii=False)


def error_result(err: M1ndError) -> ToolResult:
    return ToolResult({"error": err.to_dict()}, True)


def call_tool(context: Any, name: str, args: dict[str, Any], *, default_agent: str | None = None) -> ToolResult:
    """Validate, run and shape one tool call. Never raises for tool-level failures.

    ``default_agent`` acts when the arguments carry no ``agent_id`` (the connection's agent, issue 15)."""
    from m1nd.tools.shaping import place, shape

    tool = load_all().get(name)
    if tool is None:
        return error_result(InvalidInputError(unknown_tool_message(name)))
    started = time.perf_counter()
    try:
        if isinstance(args, dict) and "agent_id" not in args:
            if default_agent is None:
                raise InvalidInputError("missing argument 'agent_id' (string): this caller has no default agent",
                                        recover="pass agent_id, or start the server with --agent NAME",
                                        details={"argument": "agent_id"})
            args = {**args, "agent_id": default_agent}
        clean = validate_arguments(tool, args)
        if tool.counts_query:
            context.count_query(clean["agent_id"])
        answer = tool.handler(context, clean)
        result = answer.to_dict() if hasattr(answer, "to_dict") else answer
        if tool.hint is not None:
            text = tool.hint(answer, clean)
            if text is not None:
                result = place(result, "hint", text, tool.hint_before)
        if tool.timed:
            result = place(result, "elapsed_ms", round((time.perf_counter() - started) * 1000, 3),
                           tool.elapsed_before)
        return ToolResult(shape(tool, result, clean["max_output_chars"]), False)
    except M1ndError as e:
        return error_result(e)
    except Exception as e:
        log.exception("tool %s failed", name)
        err = M1ndError(f"internal error ({type(e).__name__}): {e}; details were logged to stderr; retry or report")
        return error_result(err)
