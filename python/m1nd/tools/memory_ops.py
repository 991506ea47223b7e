"""The memory operations both faces stand on beyond single service calls, and the memory vocabulary the command line
parses its options with (issue 16 item 1).

The ``m1nd memory`` commands reach the knowledge memory through the workspace (:attr:`m1nd.workspace.Workspace.memory`,
composed there with its embedding hook) and through this module, never by importing :mod:`m1nd.memory` themselves:
the wake cascade and wake-fetch, the token ritual, the wake-log, the copy to another store, and the export formats.
The MCP wake tools (:mod:`m1nd.tools.wake`) call the same functions. Each takes the workspace and checks the acting
agent before the memory store is opened (an unset identity must not create ``memory.db``).

The vocabulary (list splitting, ``--file`` reading, entry ids, filters, the resonance basis, the rendering of wake
data as text) is the memory package's own; it is named here so that the command line has one door to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# light modules only at the top: ``m1nd memory --help`` imports this module (for the wake-log notice)
from m1nd.memory.export_files import FORMATS, write_csv, write_jsonl, write_markdown
from m1nd.memory.fields import read_content_file, split_list
from m1nd.memory.ids import normalize_entry_id
from m1nd.memory.waketext import NOTICE

__all__ = ["FORMATS", "NOTICE", "check_out_path", "default_basis", "embed_deferred_note", "filters", "hidden_hint",
           "migrate_to", "no_model_error", "normalize_entry_id", "read_content_file", "render_cascade", "render_facts",
           "render_report", "render_rows", "ritual_begin", "ritual_respond", "search_notes", "split_list",
           "terminal_only", "wake_cascade", "wake_fetch", "wake_log", "wake_log_need_agent", "write_csv", "write_jsonl",
           "write_markdown", "write_out"]


# -- writing: what a write whose embedding failed says ---------------------------------------------------------------
def embed_deferred_note(entry_id: str, why: str) -> str:
    """The note of an add or update whose vectors could not be computed (``embed_deferred``): the entry is written;
    the ``memory_add`` tool lists it in ``notes``, the commands print it on stderr."""
    return f"embedding deferred (entry durable, id={entry_id}): {why}"


# -- reading: filters and the resonance basis ------------------------------------------------------------------------
def hidden_hint(n: int) -> str:
    """The note of a public-only list or search that left out ``n`` of the caller's own private entries."""
    word, verb = ("entry", "is") if n == 1 else ("entries", "are")
    return f"note: {n} private {word} of yours matched but {verb} hidden; use --include-private to see them"


def search_notes(hits: Any) -> list[str]:
    """The notes of a search (:class:`m1nd.memory.results.SearchHits`), in the order the commands print them: what
    ran differently, the hidden private entries, the results marked as used."""
    notes = list(hits.notes)
    if hits.hidden_private:
        notes.append(hidden_hint(hits.hidden_private))
    if hits.activated:
        notes.append(f"Activated {hits.activated} result(s)")
    return notes


def filters(**fields: Any) -> Any:
    """A :class:`m1nd.store.memory_contract.Filters` (what list, search and export select by)."""
    from m1nd.store.memory_contract import Filters

    return Filters(**fields)


def default_basis(command_default: str) -> str:
    """The resonance basis of a command: ``M1ND_RESONANCE_BASIS`` when set to raw or decayed, else its default."""
    from m1nd.memory.core import default_basis as basis

    return basis(command_default)


# -- wake and the ritual (memory.md §12) ----------------------------------------------------------------------------
def wake_cascade(ws: Any, agent: str | None, **options: Any) -> Any:
    """The identity cascade of ``agent`` (``options``: limit, min_resonance, days, activate, include_excluded,
    basis)."""
    from m1nd.memory import wake

    wake.need_agent(agent)
    return wake.cascade(ws.memory, agent, **options)


def wake_fetch(ws: Any, agent: str | None, **options: Any) -> Any:
    """Recent resonant facts for a wake presentation (``options``: days, limit, exclude_tags, basis)."""
    from m1nd.memory import wake

    return wake.fetch(ws.memory, agent, **options)


def ritual_begin(ws: Any, agent: str | None, **options: Any) -> dict[str, Any]:
    """Begin the guess-then-read ritual (``options``: wake, model, force_wake and the cascade's options)."""
    from m1nd.memory import ritual, wake

    wake.need_agent(agent)
    return ritual.begin(ws.memory, agent, **options)


def ritual_respond(ws: Any, agent: str | None, *, guess: str, bloom_id: str, token: str) -> dict[str, Any]:
    """One answer of the ritual: the chunk guessed at and the next prompt."""
    from m1nd.memory import ritual

    return ritual.respond(ws.memory, agent, guess=guess, bloom_id=bloom_id, token=token)


def render_cascade(data: dict[str, Any]) -> list[str]:
    """The cascade as the text ``m1nd memory wake`` prints."""
    from m1nd.memory import wake

    return wake.render_cascade(data)


def render_facts(data: dict[str, Any]) -> list[str]:
    """Wake-fetch's facts as a ``<facts>`` block."""
    from m1nd.memory import wake

    return wake.render_facts(data)


# -- wake-log (terminal only: its scores never reach a model's context, so there is no tool) -------------------------
def wake_log_need_agent(agent: str | None) -> str:
    from m1nd.memory import wakelog

    return wakelog.need_agent(agent)


def terminal_only(cmd: str) -> str:
    """The refusal of a wake-log reader whose stdout is not a terminal."""
    from m1nd.memory import wakelog

    return wakelog.TERMINAL_ONLY.format(cmd=cmd)


def check_out_path(path: str) -> None:
    """Refuse an unsafe ``--out`` path (before anything is opened)."""
    from m1nd.memory import wakelog

    wakelog.check_out_path(path)


def write_out(path: str, data: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> None:
    from m1nd.memory import wakelog

    wakelog.write_out(path, data, render)


def render_report(data: dict[str, Any]) -> str:
    from m1nd.memory import wakelog

    return wakelog.render_report(data)


def render_rows(data: dict[str, Any]) -> str:
    from m1nd.memory import wakelog

    return wakelog.render_rows(data)


def wake_log(ws: Any, view: str, agent: str | None, **options: Any) -> Any:
    """``view``: ``score`` (score the new guesses: ``(data, notes)``), ``report`` (``wake``), ``history``
    (``bloom_id``, ``limit``) or ``rows`` (``wake``)."""
    from m1nd.memory import wakelog

    wakelog.need_agent(agent)
    if view == "score":
        return wakelog.score(ws.memory, agent)
    if view == "report":
        return wakelog.report(ws.memory, agent, options.get("wake"))
    if view == "history":
        return wakelog.bloom_history(ws.memory, agent, options["bloom_id"], options.get("limit", 20))
    return wakelog.wake_rows(ws.memory, agent, options["wake"])


# -- moving the memory -----------------------------------------------------------------------------------------------
def migrate_to(ws: Any, to: str, **options: Any) -> Any:
    """Copy the workspace's memory to the store ``to`` (``options``: replace, progress, on_start): a
    :class:`m1nd.memory.results.Migrated`."""
    from m1nd.memory.migration import migrate_to as copy

    return copy(ws.memory, to, **options)


def no_model_error() -> Exception:
    """The error of a vector command when no embedding model is installed."""
    from m1nd.memory.embeddings import NO_MODEL_ERROR, EmbedderUnavailableError

    return EmbedderUnavailableError(NO_MODEL_ERROR)
