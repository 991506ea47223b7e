"""SQLite registries of the memory: the valid values of entry fields, agents and projects
(:class:`~m1nd.store.memory_contract.RegistryRepository`).

A registry is named by its kind (``categories``, ``source_types``, ``entry_types``, ``content_types``,
``session_types``, ``relationship_types``, ``applicability``, ``projects``, ``agents``); the table behind it is this
module's business.
"""

from __future__ import annotations

from typing import Any

from m1nd.store.db import Database

TABLES = {
    "categories": "categories", "source_types": "source_types", "entry_types": "entry_types",
    "content_types": "content_types", "session_types": "session_types",
    "relationship_types": "relationship_types", "applicability": "applicability_types", "projects": "projects",
    "agents": "agents",
}
# kind -> (columns listed by `rows`, their order)
_LISTED = {
    "agents": ("id, description, domain, created_at, updated_at", "id"),
    "projects": ("id, name, path, repo_url, description, active, created_at", "name, id"),
    "applicability": ("id, description, scope, created_at", "id"),
    "relationship_types": ("id, description, directional, created_at", "id"),
    "content_types": ("id, description, file_extensions, created_at", "id"),
    "categories": ("id, description, created_at", "id"),
    "source_types": ("id, description, created_at", "id"),
    "entry_types": ("id, description, created_at", "id"),
    "session_types": ("id, description, created_at", "id"),
}


def _table(kind: str) -> str:
    try:
        return TABLES[kind]
    except KeyError:
        raise ValueError(f"unknown registry kind {kind!r}") from None


class RegistryRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def ids(self, kind: str) -> list[str]:
        return [r[0] for r in self.db.all(f"SELECT id FROM {_table(kind)} ORDER BY id")]

    def has(self, kind: str, key: str) -> bool:
        return self.db.one(f"SELECT 1 FROM {_table(kind)} WHERE id = ?", (key,)) is not None

    def rows(self, kind: str) -> list[tuple[Any, ...]]:
        """Every row of a registry, in the column order of its listing (see ``_LISTED``)."""
        columns, order = _LISTED[kind]
        return self.db.all(f"SELECT {columns} FROM {_table(kind)} ORDER BY {order}")

    def upsert_agent(self, agent_id: str, description: str, domain: str | None, now: str, *,
                     keep_unset: bool) -> None:
        """Register or refresh an agent; ``keep_unset`` keeps stored values where the new ones are None."""
        if keep_unset:
            update = ("description = coalesce(excluded.description, description), domain = coalesce(excluded.domain, "
                      "domain), updated_at = excluded.updated_at")
        else:
            update = "description = excluded.description, domain = excluded.domain, updated_at = excluded.updated_at"
        self.db.execute("INSERT INTO agents(id, description, domain, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
                        f"ON CONFLICT(id) DO UPDATE SET {update}", (agent_id, description, domain, now, now))

    def agent(self, agent_id: str) -> tuple[Any, ...] | None:
        return self.db.one("SELECT id, description, domain, created_at, updated_at FROM agents WHERE id = ?",
                           (agent_id,))

    def upsert_project(self, pid: str, name: str, path: str | None, repo_url: str | None, description: str | None,
                       now: str) -> None:
        self.db.execute(
            "INSERT INTO projects(id, name, path, repo_url, description, active, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
            "path = coalesce(excluded.path, path), repo_url = coalesce(excluded.repo_url, repo_url), "
            "description = coalesce(excluded.description, description), active = 1, updated_at = excluded.updated_at",
            (pid, name, path, repo_url, description, now, now))

    def add(self, kind: str, key: str, description: str, now: str, *, scope: str | None = None) -> None:
        """Add a value to a simple registry (``categories`` or ``applicability``, which has a scope)."""
        if kind == "applicability":
            self.db.execute("INSERT INTO applicability_types(id, description, scope, created_at) VALUES (?, ?, ?, ?)",
                            (key, description, scope, now))
        else:
            self.db.execute(f"INSERT INTO {_table(kind)}(id, description, created_at) VALUES (?, ?, ?)",
                            (key, description, now))

    def ensure(self, kind: str, key: str, now: str) -> None:
        """Create a value with an empty description unless it exists (an import naming an unknown value)."""
        if kind == "projects":
            self.db.execute("INSERT OR IGNORE INTO projects(id, name, active, created_at, updated_at) "
                            "VALUES (?, ?, 1, ?, ?)", (key, key, now, now))
        elif kind == "applicability":
            self.db.execute("INSERT OR IGNORE INTO applicability_types(id, description, created_at) "
                            "VALUES (?, '', ?)", (key, now))
        else:
            self.db.execute(f"INSERT OR IGNORE INTO {_table(kind)}(id, description, created_at) VALUES (?, '', ?)",
                            (key, now))

    def delete(self, kind: str, key: str) -> None:
        self.db.execute(f"DELETE FROM {_table(kind)} WHERE id = ?", (key,))
