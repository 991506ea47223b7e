"""Wake tools (spec memory.md §12, §14; mcp.md §7.1): the cascade, the token ritual and wake-fetch over MCP, as thin
adapters onto :mod:`m1nd.memory.wake` and :mod:`m1nd.memory.ritual` through :mod:`m1nd.tools.memory_ops` (which the
``m1nd memory wake`` commands use too).

The acting agent is ``agent_id``; the ritual tools refuse another agent than the one that began the ritual
(``wrong_agent``). ``wake-log`` is deliberately not a tool: its scores must never reach a model's context.
"""

from __future__ import annotations

from typing import Any

from m1nd.defaults import WAKE_DAYS, WAKE_FETCH_DAYS, WAKE_FETCH_LIMIT, WAKE_LIMIT
from m1nd.tools.registry import Param, Tool, register

BASIS = ("raw", "decayed")

WAKE_PARAMS = (
    Param("limit", "integer", "Places in the wake set.", default=WAKE_LIMIT, minimum=1, maximum=200),
    Param("min_resonance", "integer", "Every entry at or above this value, all as core (limit ignored)."),
    Param("days", "integer", "Recent-layer window in days.", default=WAKE_DAYS, minimum=1, maximum=365),
    Param("include_excluded", "boolean", "Include entries tagged archive or wake-exclude.", default=False),
    Param("resonance_basis", "string", "raw or decayed resonance for thresholds and ordering.", default="raw",
          enum=BASIS),
    Param("activate", "boolean", "Add one to the activation count of every chosen entry.", default=True),
)


def _cascade_kw(a: dict[str, Any]) -> dict[str, Any]:
    return {"limit": a["limit"], "min_resonance": a.get("min_resonance"), "days": a["days"],
            "include_excluded": a["include_excluded"], "basis": a["resonance_basis"], "activate": a["activate"]}


def _wake(ws: Any, a: dict[str, Any]) -> Any:
    from m1nd.tools.memory_ops import wake_cascade

    return wake_cascade(ws, a["agent_id"], **_cascade_kw(a))


register(Tool(
    name="wake", title="Wake up (identity cascade)", group="wake",
    description=("Load your identity memories: core entries (resonance >= 8), then recent ones (last `days`), then "
                 "entries anchored to them, up to `limit`; your private entries included, entries tagged archive or "
                 "wake-exclude left out (counted in excluded). Call at the start of a session; wake_begin for the "
                 "guess-then-read ritual; memory_show for one entry."),
    params=WAKE_PARAMS, handler=_wake, output_required=("layers", "excluded", "total"),
    shrinkable=("layers.bridges", "layers.recent", "layers.core"),
))


def _wake_begin(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.tools.memory_ops import ritual_begin

    return ritual_begin(ws, a["agent_id"], wake=a.get("wake"), model=a.get("model"), force_wake=a["force_wake"],
                 **_cascade_kw(a))


register(Tool(
    name="wake_begin", title="Begin the wake ritual", group="wake",
    description=("Start the token ritual over your wake set: returns the first prompt (a title only) and a session "
                 "token. For each prompt make ONE guess from the title alone, then call wake_respond with the guess, "
                 "the prompt's id as bloom_id and the token; it shows the chunk and the next prompt. wake (integer) "
                 "and model are recorded on your guesses."),
    params=(*WAKE_PARAMS,
            Param("wake", "integer", "Wake number recorded on every guess.", minimum=1),
            Param("model", "string", "Model id recorded on every guess.", min_length=1, max_length=200),
            Param("force_wake", "boolean", "Begin under a wake number that already has guesses.", default=False)),
    handler=_wake_begin, output_required=("status", "session", "prompt", "progress"),
))


def _wake_respond(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.tools.memory_ops import ritual_respond

    return ritual_respond(ws, a["agent_id"], guess=a["guess"], bloom_id=a["bloom_id"], token=a["session"])


register(Tool(
    name="wake_respond", title="Answer a wake prompt", group="wake",
    description=("Submit your one guess (<= 2000 characters) for the prompted chunk with its bloom_id and the token "
                 "from the last ritual answer; returns the chunk (bloom.content), a new token and the next prompt, "
                 "and a summary after the last one. A lost answer: call again with the same token (replayed: true). "
                 "Raise max_output_chars to read long chunks whole."),
    params=(Param("guess", "string", "Your guess, made from the title alone.", required=True, max_length=100_000),
            Param("bloom_id", "string", "The id of the prompted entry.", required=True, min_length=1,
                  max_length=200),
            Param("session", "string", "The token from the last wake_begin / wake_respond answer.", required=True,
                  min_length=1, max_length=300)),
    handler=_wake_respond, output_required=("status", "session", "progress"),
))


def _wake_fetch(ws: Any, a: dict[str, Any]) -> Any:
    from m1nd.tools.memory_ops import wake_fetch

    return wake_fetch(ws, a["agent_id"], days=a["days"], limit=a["limit"],
                      exclude_tags=list(a.get("exclude_tags") or []), basis=a["resonance_basis"])


register(Tool(
    name="wake_fetch", title="Recent resonant facts", group="wake",
    description=("Facts created in the last `days` with resonance >= 3 whose resonance has not decayed away, "
                 "strongest first, as {facts: [{id, date, label, resonance, content}]}; exclude_tags drops tag "
                 "prefixes (e.g. project/). Use to refresh what happened lately; wake for identity memories."),
    params=(Param("days", "integer", "Look-back window in days.", default=WAKE_FETCH_DAYS, minimum=1,
                  maximum=365),
            Param("limit", "integer", "Maximum facts.", default=WAKE_FETCH_LIMIT, minimum=1, maximum=500),
            Param("exclude_tags", "string[]", "Drop entries with a tag starting with any of these prefixes.",
                  max_items=50, max_length=64),
            Param("resonance_basis", "string", "raw or decayed resonance for the floor and ordering.",
                  default="decayed", enum=BASIS)),
    handler=_wake_fetch, output_required=("facts",), read_only=True, shrinkable=("facts",),
))
