"""Registries: the valid values of entry fields (categories, types, applicability), agents and projects, tags.

Fact types and resonance types are fixed by the schema; the others live in the store and can be extended.
"""

from __future__ import annotations

import json
import re
from typing import Any

from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.memory import fields as F
from m1nd.memory.core import MemoryCore
from m1nd.memory.registry_results import (Agent, Applicability, ContentType, FactType, Project, Registered,
                                          RegistryValue, RelationshipType, ResonanceType)
from m1nd.memory.results import Deleted
from m1nd.store.memory_schema import FACT_TYPES, RESONANCE_TYPES
from m1nd.timeutil import now_iso

CATEGORY_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$")
PROJECT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
# The registries the store keeps as rows, and the result type of one row (in the store's column order).
_ROW_TYPES: dict[str, Any] = {
    "agents": Agent, "applicability": Applicability, "categories": RegistryValue, "source_types": RegistryValue,
    "entry_types": RegistryValue, "session_types": RegistryValue, "projects": Project,
    "relationship_types": RelationshipType, "content_types": ContentType,
}


class Registries(MemoryCore):
    def registry(self, kind: str, *, agent: str | None = None, category: str | None = None) -> list[Any]:
        """The values of registry ``kind``: result objects of :mod:`m1nd.memory.results` (``tags``: strings)."""
        if kind == "fact_types":
            return [FactType(id=t, category=F.FACT_ROUTES.get(t, ("thread", None))[0]) for t in FACT_TYPES]
        if kind == "resonance_types":
            return [ResonanceType(id=t, decays=t not in ("foundational", "transformative")) for t in RESONANCE_TYPES]
        if kind == "tags":
            return self.tags(agent=agent, category=category)
        if kind not in _ROW_TYPES:
            raise InvalidInputError(f"unknown registry '{kind}'")
        with self._read() as tx:
            rows = tx.registries.rows(kind)
        if kind == "projects":
            return [Project(id=r[0], name=r[1], path=r[2], repo_url=r[3], description=r[4], active=bool(r[5]),
                            created_at=r[6]) for r in rows]
        if kind == "relationship_types":
            return [RelationshipType(id=r[0], description=r[1], directional=bool(r[2]), created_at=r[3])
                    for r in rows]
        if kind == "content_types":
            return [ContentType(id=r[0], description=r[1], file_extensions=json.loads(r[2]), created_at=r[3])
                    for r in rows]
        return [_ROW_TYPES[kind](*r) for r in rows]

    def tags(self, *, agent: str | None, category: str | None = None) -> list[str]:
        with self._read() as tx:
            if category is not None and not tx.registries.has("categories", category):
                cats = tx.registries.ids("categories")
                raise InvalidInputError(f"Unknown category '{category}'. Valid categories: {', '.join(cats)}")
            return tx.entries.visible_tags(agent, category)

    def add_agent(self, agent_id: str, description: str | None, domain: str | None) -> Registered:
        aid = agent_id.strip()
        if not AGENT_ID.match(aid):
            raise InvalidInputError(f"Invalid agent id '{agent_id}' (letters, digits, '.', '_', ':', '@', '-')")
        ts = now_iso()
        with self._write() as tx:
            tx.registries.upsert_agent(aid, description or "", domain, ts, keep_unset=True)
        return Registered(id=aid)

    def show_agent(self, agent_id: str) -> Agent:
        with self._read() as tx:
            r = tx.registries.agent(agent_id)
        if r is None:
            raise NotFoundError(f"Agent '{agent_id}' not found")
        return Agent(*r)

    def add_project(self, pid: str, name: str, *, path: str | None = None, repo_url: str | None = None,
                    description: str | None = None) -> Registered:
        if not PROJECT_ID.match(pid or ""):
            raise InvalidInputError(f"Invalid project id '{pid}' (letters, digits, '.', '_', ':', '-')")
        if not name or not name.strip():
            raise InvalidInputError("--name must not be empty")
        ts = now_iso()
        with self._write() as tx:
            tx.registries.upsert_project(pid, name, path, repo_url, description, ts)
        return Registered(id=pid, name=name)

    def add_category(self, cid: str, description: str) -> Registered:
        if not CATEGORY_ID.match(cid or ""):
            raise InvalidInputError(f"Invalid category id '{cid}' (lowercase letters, digits, '_' or '-')")
        with self._write() as tx:
            if tx.registries.has("categories", cid):
                raise InvalidInputError(f"Category '{cid}' already exists")
            tx.registries.add("categories", cid, description, now_iso())
        return Registered(id=cid)

    def remove_category(self, cid: str) -> Deleted:
        with self._write() as tx:
            if not tx.registries.has("categories", cid):
                raise NotFoundError(f"Category '{cid}' not found")
            n = tx.entries.category_use(cid)
            if n:
                raise InvalidInputError(f"Cannot remove category '{cid}': {n} entries still use it")
            tx.registries.delete("categories", cid)
        return Deleted(id=cid)

    def add_applicability(self, aid: str, description: str, scope: str | None) -> Registered:
        if not CATEGORY_ID.match(aid or ""):
            raise InvalidInputError(f"Invalid applicability id '{aid}' (lowercase letters, digits, '_' or '-')")
        with self._write() as tx:
            if tx.registries.has("applicability", aid):
                raise InvalidInputError(f"Applicability '{aid}' already exists")
            tx.registries.add("applicability", aid, description, now_iso(), scope=scope)
        return Registered(id=aid)
