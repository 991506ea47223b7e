"""Typed results of the knowledge memory's calls, for both faces: the ``memory_*`` tools send :meth:`to_dict`
(wrapped in the tool's own envelope where it has one), the ``m1nd memory`` commands print it with ``--json`` or read
the fields for their text. Each ``to_dict`` writes the keys in the order the wire has always had.

- adding: :class:`Added` (an entry or a fact written), :class:`AlreadySaved` (an identical entry of the session is
  there), :class:`ThreadClosed` (``AddResult`` is one of the three); a batch answers :class:`BatchAdded` with its
  :class:`BatchItem` and :class:`BatchFailure` lines;
- seeding and copying: :class:`Seeded` (knowledge from JSONL), :class:`AgentsSeeded` (agents from front matter),
  :class:`Migrated` (the whole memory copied to another store);
- reading: :class:`EntryList` (``list_entries``) and :class:`SearchHits` (``search``), whose entries are
  :class:`m1nd.store.memory_contract.Entry`;
- links, reinforcement, deletion: :class:`Related`, :class:`Relationship`, :class:`Deleted`, :class:`Reinforcement`;
- changes: :class:`Updated` (the applied change plan), :class:`Backup`, :class:`Restored`;
- sessions: :class:`Session`, :class:`SessionClosed`, :class:`SessionFact`, :class:`FactSession`;
- figures: :class:`MemoryStats`, :class:`MemoryHealth`, :class:`OpenThread`, :class:`RecentFact` (``growth`` is a
  plain ``list[int]``, one count per week);
The registries' values (``RegistryValue``, ``Agent``, ``Project``, …) are in :mod:`m1nd.memory.registry_results`;
entries themselves are :class:`m1nd.store.memory_contract.Entry`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from m1nd.store.memory_contract import Entry

__all__ = ["AddResult", "Added", "AgentsSeeded", "AlreadySaved", "Backup", "BatchAdded", "BatchFailure", "BatchItem",
           "Deleted", "EntryList", "FactSession", "MemoryHealth", "MemoryStats", "Migrated", "OpenThread", "RecentFact",
           "Reinforcement", "Related", "Relationship", "Restored", "SearchHits", "Seeded", "Session", "SessionClosed",
           "SessionFact", "ThreadClosed", "Updated"]


# -- adding ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Added:
    """The answer of ``add`` for an entry or a fact written: its stored fields (``body`` is not on the wire: the
    command line previews a fact's), ``dedup`` (``bypassed_no_session`` when no session was given, so nothing was
    checked for duplicates), ``fact_type`` for a fact, and ``embed_deferred``: why no vector was computed (the entry
    is durable; ``m1nd memory embed`` catches up)."""

    id: str
    category: str
    title: str
    visibility: str
    owner: str | None
    resonance: int
    resonance_type: str | None
    tags: list[str]
    applicability: list[str]
    anchors: list[str]
    wake_phrases: list[str]
    code_refs: list[str]
    session_id: str | None
    body: str = ""
    dedup: str | None = None
    fact: bool = False
    fact_type: str | None = None
    embed_deferred: str | None = None

    @property
    def kind(self) -> str:
        """``fact`` or ``added`` (the batch's line kinds)."""
        return "fact" if self.fact else "added"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "category": self.category, "title": self.title, "visibility": self.visibility,
            "owner": self.owner, "resonance": self.resonance, "resonance_type": self.resonance_type,
            "tags": list(self.tags), "applicability": list(self.applicability), "anchors": list(self.anchors),
            "wake_phrases": list(self.wake_phrases), "code_refs": list(self.code_refs), "session_id": self.session_id}
        if self.dedup:
            out["dedup"] = self.dedup
        if self.fact:
            out["fact_type"] = self.fact_type
        if self.embed_deferred:
            out["embed_deferred"] = self.embed_deferred
        return out


@dataclass(frozen=True)
class AlreadySaved:
    """The answer of ``add`` when an identical entry the caller can see is already in the session: nothing was
    written; ``id`` and ``title`` are the existing entry's."""

    id: str
    title: str
    kind: ClassVar[str] = "skipped"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "skipped": True, "duplicate_of": self.id, "status": "already_persisted",
                "note": "identical entry exists this session; no write needed"}


@dataclass(frozen=True)
class ThreadClosed:
    """The answer of ``add`` for a ``thread_closed`` fact: the thread entry that was closed."""

    id: str
    kind: ClassVar[str] = "closed"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "closed": True}


# What one add answers.
AddResult = Added | AlreadySaved | ThreadClosed


@dataclass(frozen=True)
class BatchItem:
    """One line of a batch that was written (``kind``: added, fact or closed) or already saved (``skipped``);
    ``line`` numbers the input (1-based physical lines of a file, 0-based items of a list); ``title`` is None for a
    closed thread."""

    line: int
    id: str
    title: str | None
    kind: str

    def to_dict(self) -> dict[str, Any]:
        """The wire object (an already-saved line says no kind: it sits in its own list)."""
        out: dict[str, Any] = {"line": self.line, "id": self.id, "title": self.title}
        if self.kind != "skipped":
            out["kind"] = self.kind
        return out


@dataclass(frozen=True)
class BatchFailure:
    """A line of a batch that was not written, and why."""

    line: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "error": self.error}


@dataclass(frozen=True)
class BatchAdded:
    """The answer of ``add_batch`` (partial success): the lines written and already saved (input order), the failed
    ones (by line), how many entries got vectors, the lines written without a session (``bypassed``: no dedup check;
    not on the wire) and ``embed_deferred``: why none got vectors (the entries are durable)."""

    added: list[BatchItem]
    already_saved: list[BatchItem]
    failed: list[BatchFailure]
    embedded: int
    bypassed: list[int] = field(default_factory=list)
    embed_deferred: str | None = None

    @property
    def events(self) -> list[BatchItem]:
        """The written and already-saved lines together, in input order."""
        return sorted(self.added + self.already_saved, key=lambda i: i.line)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"added": [i.to_dict() for i in self.added],
                               "already_saved": [i.to_dict() for i in self.already_saved],
                               "failed": [f.to_dict() for f in self.failed], "embedded": self.embedded}
        if self.embed_deferred:
            out["embed_deferred"] = self.embed_deferred
        return out


# -- seeding -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seeded:
    """The answer of ``seed_knowledge`` for one file: entries imported, entries skipped (their id exists; overwrite
    replaces them) and notes on what the import adjusted (registry values it created, dedup exemptions, anchors it
    dropped), in the order they happened."""

    imported: int
    skipped: int
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AgentsSeeded:
    """The answer of ``seed_agents``: the agents registered (file order) and the files skipped, with why."""

    seeded: list[str]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Migrated:
    """The answer of ``migrate_to``: the two stores (described without secrets), the rows copied per table and the
    entries among them; the copy is verified (row counts) before it commits, or nothing is written."""

    source: str
    target: str
    tables: dict[str, int]
    entries: int
    verified: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"status": "ok", "from": self.source, "to": self.target, "tables": dict(self.tables),
                "entries": self.entries, "verified": self.verified}


# -- reading -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryList:
    """The answer of ``list_entries``: the entries in the asked order, ``total`` (the whole selection's count when
    asked for, else the entries' number) and ``hidden_private``: how many of the caller's own private entries a
    public-only list left out (the commands say so; the tool does not)."""

    entries: list[Entry]
    total: int
    hidden_private: int = 0


@dataclass(frozen=True)
class SearchHits:
    """The answer of ``search``: the entries best first (``extra["score"]`` set), the ``mode`` that ran (keyword when
    no model could serve a semantic or hybrid search), ``notes`` on what ran differently from what was asked (no
    model, any-word matching), ``hidden_private`` as in :class:`EntryList`, and how many results were ``activated``
    (marked as used)."""

    entries: list[Entry]
    mode: str
    notes: list[str] = field(default_factory=list)
    hidden_private: int = 0
    activated: int = 0


# -- links, reinforcement, deletion ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Relationship:
    """A typed link between two entries, seen from one of them (``direction``: ``out`` from it, ``in`` to it)."""

    id: str
    from_entry_id: str
    to_entry_id: str
    relationship_type: str
    created_at: str
    direction: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "from_entry_id": self.from_entry_id, "to_entry_id": self.to_entry_id,
                "relationship_type": self.relationship_type, "created_at": self.created_at,
                "direction": self.direction}


@dataclass(frozen=True)
class Related:
    """The answer of ``relate``: the link (``existing`` when it was already there, then nothing changed) and whether
    the target's resonance went up."""

    id: str
    from_id: str
    to_id: str
    type: str
    reinforced: bool
    existing: bool

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.from_id, "to": self.to_id, "type": self.type,
                "reinforced": self.reinforced, "existing": self.existing}


@dataclass(frozen=True)
class Deleted:
    """The answer of ``unrelate`` (a relationship id) and ``delete`` (an entry id)."""

    id: str
    deleted: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"deleted": self.deleted, "id": self.id}


@dataclass(frozen=True)
class Reinforcement:
    """The answer of ``reinforce``: the resonance before and after (``capped`` when the ceiling ``cap`` stopped it)
    and the reset decay clock."""

    id: str
    old_resonance: int
    new_resonance: int
    amount_added: int
    capped: bool
    cap: int
    last_activated: str
    activation_count: int

    def to_dict(self) -> dict[str, Any]:
        """The wire object (the ceiling is the caller's own argument, so it is not repeated)."""
        return {"id": self.id, "old_resonance": self.old_resonance, "new_resonance": self.new_resonance,
                "amount_added": self.amount_added, "capped": self.capped, "last_activated": self.last_activated,
                "activation_count": self.activation_count}


# -- changes -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Updated:
    """The answer of ``update`` (and the command line's ``edit``, ``append``, ``prepend``): the change lines of the
    applied plan (empty when the values were already those), the find/replace count and the bytes an append or
    prepend added; ``embed_deferred`` says why the new text was not embedded (the change itself is durable)."""

    id: str
    changes: list[str]
    replacements: int = 0
    bytes_added: int = 0
    embed_deferred: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "changes": list(self.changes), "replacements": self.replacements,
                               "bytes_added": self.bytes_added}
        if self.embed_deferred:
            out["embed_deferred"] = self.embed_deferred
        return out


@dataclass(frozen=True)
class Backup:
    """One snapshot of an entry, kept before a change or a delete (newest first in ``list_backups``)."""

    id: str
    entry_id: str
    title: str | None
    body: str
    operation: str
    source_agent: str | None
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "entry_id": self.entry_id, "title": self.title, "body": self.body,
                "operation": self.operation, "source_agent": self.source_agent, "created_at": self.created_at}


@dataclass(frozen=True)
class Restored:
    """The answer of ``restore``: which backup came back (``recreated`` when the entry had been deleted)."""

    id: str
    from_backup: str
    backup_created: str
    operation: str
    recreated: bool
    embed_deferred: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"restored": True, "id": self.id, "from_backup": self.from_backup,
                               "backup_created": self.backup_created, "operation": self.operation,
                               "recreated": self.recreated}
        if self.embed_deferred:
            out["embed_deferred"] = self.embed_deferred
        return out


# -- sessions ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """A work session (``ended_at`` None while it is open)."""

    id: str
    session_type: str
    project: str | None
    started_at: str
    ended_at: str | None
    created_by: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "session_type": self.session_type, "project": self.project,
                "started_at": self.started_at, "ended_at": self.ended_at, "created_by": self.created_by}


@dataclass(frozen=True)
class SessionClosed:
    """The answer of ``close_session`` (``ended_at``: the first close's time when it was already closed)."""

    id: str
    ended_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "closed": True, "ended_at": self.ended_at}


@dataclass(frozen=True)
class SessionFact:
    """A fact recorded in a session (``type`` None for an entry that is not a fact)."""

    id: str
    type: str | None
    content: str
    created_at: str
    resonance: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "content": self.content, "created_at": self.created_at,
                "resonance": self.resonance}


@dataclass(frozen=True)
class FactSession:
    """The session a fact was recorded in (None when there is none, or the fact is not visible)."""

    fact_id: str
    session_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"fact_id": self.fact_id, "session_id": self.session_id}


# -- figures -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryStats:
    """Counts of the visible entries: in all, per category, and the caller's own private ones."""

    total: int
    categories: dict[str, int]
    private_own: int

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "categories": dict(self.categories), "private_own": self.private_own}


@dataclass(frozen=True)
class MemoryHealth:
    """Embedding and anchor coverage of the visible entries, and the stale high-resonance ones (counts and
    rounded percentages); ``stale_vectors``: entries embedded by another model than ``model_id``."""

    total: int
    embedded: int
    anchored: int
    stale_high_res: int
    embedded_pct: int
    anchored_pct: int
    stale_high_res_pct: int
    model_id: str | None
    stale_vectors: int

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "embedded": self.embedded, "anchored": self.anchored,
                "stale_high_res": self.stale_high_res, "embedded_pct": self.embedded_pct,
                "anchored_pct": self.anchored_pct, "stale_high_res_pct": self.stale_high_res_pct,
                "model_id": self.model_id, "stale_vectors": self.stale_vectors}


@dataclass(frozen=True)
class OpenThread:
    """A thread entry not closed yet (an open question or a commitment)."""

    id: str
    body: str
    state: str
    created_at: str
    resonance: int
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "body": self.body, "state": self.state, "created_at": self.created_at,
                "resonance": self.resonance, "tags": list(self.tags)}


@dataclass(frozen=True)
class RecentFact:
    """A recently created entry still resonant (``type``: its fact type, else its category)."""

    id: str
    type: str
    category: str
    content: str
    created_at: str
    resonance: int
    effective_resonance: float
    state: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "category": self.category, "content": self.content,
                "created_at": self.created_at, "resonance": self.resonance,
                "effective_resonance": self.effective_resonance, "state": self.state}
