"""Typed results of the knowledge memory's relationship, reinforcement and deletion calls: what ``relate``,
``relationships``, ``unrelate``, ``reinforce`` and ``delete`` answer, for both faces (the ``memory_*`` tools send
:meth:`to_dict`, the ``m1nd memory`` commands print it with ``--json`` or read the fields for their text).

Entries themselves are :class:`m1nd.store.memory_contract.Entry`; the other memory answers (update plans, restores,
sessions, statistics, registries) are still JSON objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Deleted", "Reinforcement", "Related", "Relationship"]


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
