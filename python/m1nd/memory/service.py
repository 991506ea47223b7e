"""The knowledge memory service: every ``m1nd memory`` command and ``memory_*`` tool goes through here.

Layering: adapters (``m1nd.cli.memory``, ``m1nd.tools.memory``) parse their input, call one method, and render
what it returns (entries and the dataclasses of :mod:`m1nd.memory.results`, whose ``to_dict()`` is the wire object
where one exists); they decide nothing. :class:`MemoryService` is the one public face; each command
family lives in its own module and is mixed in here:

==========================  ==========================================================================================
:mod:`m1nd.memory.core`     store, connections, one transaction per command, id resolution under visibility
:mod:`m1nd.memory.adding`   add, add-batch (vectors prepared before the transaction, stored inside it)
:mod:`m1nd.memory.search`   show, list, search (keyword, semantic, hybrid), recent
:mod:`m1nd.memory.update_plan`  the update planner (pure: new values and change lines)
:mod:`m1nd.memory.updating`     update with backup and optimistic concurrency
:mod:`m1nd.memory.snapshots`    entries from their JSON shape (restore, seed)
:mod:`m1nd.memory.backups`  backups, restore, delete
:mod:`m1nd.memory.relations`    relationships and reinforcement
:mod:`m1nd.memory.stats`    stats, health, growth, open threads
:mod:`m1nd.memory.registries`   registries, agents, projects, categories, applicability, tags
:mod:`m1nd.memory.sessions` sessions, the facts of a session
:mod:`m1nd.memory.transfer` export, seed knowledge, seed agents
==========================  ==========================================================================================

All SQL lives in the store's repositories (``m1nd.store.memory_*``, contract in
:mod:`m1nd.store.memory_contract`); the services receive them per transaction.

Hooks for later issues
----------------------
``vector_hook`` is the embedding/anchoring plug-in of issue 6. When set, it is an object with

* ``prepare(texts: list[str]) -> list[Any]`` — model inference, called **before** the write transaction;
* ``store(tx, rowid, payload, *, auto_anchor: bool) -> None`` — called inside the transaction to store vectors,
  chunks and anchors; ``payload`` is what ``prepare`` returned for that text;
* ``model_id`` (str | None) — the active model, used by ``health``;
* ``search(query, *, candidates) -> list[tuple[int, float]]`` — entry rowids with scores, for semantic search.

When ``prepare`` raises, the entry is still written without vectors and the result says ``embed_deferred``.
The wake cascade, ritual and guess log (issue 7: :mod:`m1nd.memory.wake`, :mod:`m1nd.memory.ritual`,
:mod:`m1nd.memory.wakelog`) open transactions through the service and use their own repositories of the same
unit of work (``tx.wake``, ``tx.ritual``, ``tx.guesses``).
"""

from __future__ import annotations

from m1nd.memory.adding import Adding
from m1nd.memory.backups import Backups
from m1nd.memory.core import default_basis, env_truthy
from m1nd.memory.registries import Registries
from m1nd.memory.relations import Relations
from m1nd.memory.search import Reading
from m1nd.memory.sessions import Sessions
from m1nd.memory.stats import Stats
from m1nd.memory.transfer import Transfer, front_matter, normalise_import
from m1nd.memory.update_plan import edited_list, find_replace
from m1nd.memory.updating import Updating
from m1nd.store.memory_contract import Filters

__all__ = ["Filters", "MemoryService", "default_basis", "edited_list", "env_truthy", "find_replace",
           "front_matter", "normalise_import"]


class MemoryService(Adding, Reading, Updating, Backups, Relations, Stats, Registries, Sessions, Transfer):
    """The knowledge memory over one ``memory.db`` file (one APSW connection per thread)."""
