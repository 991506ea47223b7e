"""Typed results of the knowledge memory's registries (the values an entry's fields are checked against): a plain
registry's :class:`RegistryValue` (categories, source, entry and session types), :class:`Agent`,
:class:`Applicability`, :class:`Project`, :class:`RelationshipType`, :class:`ContentType`, :class:`FactType`,
:class:`ResonanceType` (``tags`` are plain strings), and :class:`Registered` for an added value. As in
:mod:`m1nd.memory.results` (the other answers), ``to_dict`` writes the keys in the order the wire has always had.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Agent", "Applicability", "ContentType", "FactType", "Project", "Registered", "RegistryValue",
           "RelationshipType", "ResonanceType"]


@dataclass(frozen=True)
class RegistryValue:
    """A value of a plain registry: categories, source types, entry types, session types."""

    id: str
    description: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "created_at": self.created_at}


@dataclass(frozen=True)
class Agent:
    """A registered agent."""

    id: str
    description: str
    domain: str | None
    created_at: str
    updated_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "domain": self.domain,
                "created_at": self.created_at, "updated_at": self.updated_at}


@dataclass(frozen=True)
class Applicability:
    """An applicability context (where an entry applies)."""

    id: str
    description: str
    scope: str | None
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "scope": self.scope, "created_at": self.created_at}


@dataclass(frozen=True)
class Project:
    """A registered project."""

    id: str
    name: str
    path: str | None
    repo_url: str | None
    description: str | None
    active: bool
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "path": self.path, "repo_url": self.repo_url,
                "description": self.description, "active": self.active, "created_at": self.created_at}


@dataclass(frozen=True)
class RelationshipType:
    """A relationship type (``directional``: ``a → b`` differs from ``b → a``)."""

    id: str
    description: str
    directional: bool
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "directional": self.directional,
                "created_at": self.created_at}


@dataclass(frozen=True)
class ContentType:
    """A body format with the file extensions that imply it."""

    id: str
    description: str
    file_extensions: list[str]
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "file_extensions": list(self.file_extensions),
                "created_at": self.created_at}


@dataclass(frozen=True)
class FactType:
    """A fact type (fixed by the schema) and the category its facts are stored under."""

    id: str
    category: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "category": self.category}


@dataclass(frozen=True)
class ResonanceType:
    """A resonance type (fixed by the schema) and whether its importance decays with time."""

    id: str
    decays: bool

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "decays": self.decays}


@dataclass(frozen=True)
class Registered:
    """The answer of adding a registry value (agent, project, category, applicability): its id (and a project's
    name)."""

    id: str
    name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id} if self.name is None else {"id": self.id, "name": self.name}
