"""The shared learning store's contract: trails and learned-weight deltas, independent of SQLite (issue 18).

Beside the code graph (always local, ``graph.db``), two kinds of state are what a team of agents learns together:
investigation trails (:mod:`m1nd.codegraph.trails`) and learned edge weights with the learn log behind them
(:mod:`m1nd.codegraph.learning`). They live in a :class:`SharedLearningStore`: the workspace's ``graph.db`` by
default (:mod:`m1nd.store.team_sqlite`), or a PostgreSQL server when the memory URL names one
(:mod:`m1nd.store.pg_team_repo`), so agents on several machines share them. One command is one transaction
(``write()`` / ``read()``); nested use joins the outer transaction.

Learned weights cross the boundary as *deltas keyed by external ids* — ``(src ext id, dst ext id, relation)`` —
never as positions or local row ids, because each machine has its own graph. A row read back carries the base
weight ``w0`` the learning started from and the learned ``w``; a process replays ``w0_local + (w − w0)`` onto its
own graph (exactly ``w`` where the bases agree). ``mark`` is an opaque, increasing position in the store's change
stream: a process asks for rows after the mark it last saw.

Rows are plain tuples; nothing here names a driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

TrailRow = tuple[Any, ...]  # the columns of m1nd.store.trails_repo.TRAIL_COLUMNS, JSON columns encoded
WeightDelta = tuple[str, str, int, float, float, int, int]  # (src, dst, relation, w0, delta, n_ltp, n_ltd)
LearnedWeight = tuple[str, str, int, float, float, int]  # (src, dst, relation, w0, w, updated_ms)


class TrailRepository(Protocol):
    """Trails of one workspace (every agent sees every trail: learning.md §7)."""

    def row(self, trail_id: str) -> TrailRow | None: ...
    def exists(self, trail_id: str) -> bool: ...
    def insert(self, row: Sequence[Any], tags: Sequence[str]) -> None: ...
    def take_sequence_number(self, agent_slug: str) -> int: ...
    def mark_resumed(self, trail_id: str, *, modified_ms: int, resumed_by_json: str, hypotheses_json: str) -> None: ...
    def mark_merged(self, trail_ids: Sequence[str], *, into: str, modified_ms: int) -> None: ...
    def mark_archived(self, trail_id: str, *, modified_ms: int) -> None: ...
    def ids(self, *, agent_id: str | None = None, tags: Sequence[str] = (), statuses: Sequence[str] = (),
            limit: int | None = None) -> list[str]: ...
    def count(self, *, agent_id: str | None = None, tags: Sequence[str] = (), statuses: Sequence[str] = ()) -> int: ...
    def rows(self, trail_ids: Sequence[str]) -> list[TrailRow]: ...


class LearnedRepository(Protocol):
    """The learn log (per agent; read by every agent) and the learned edge weights with their generation."""

    def append_event(self, *, agent_id: str, query: str, feedback: str, strength: float, node_ids_json: str,
                     edges_adjusted: int, created_ms: int, keep: int) -> None: ...
    def events_since(self, created_ms: int) -> int: ...
    def feedback_log(self) -> list[tuple[str, str, str, float, str]]: ...
    def newest_feedback_id(self) -> int: ...
    def generation(self) -> int: ...
    def bump_generation(self) -> int: ...
    def apply_weight_deltas(self, rows: Iterable[WeightDelta], *, w_min: float, w_max: float,
                            updated_ms: int) -> int: ...
    def weights_since(self, mark: int) -> tuple[list[LearnedWeight], int]: ...
    def weights_mark(self) -> int: ...
    def learned_edges(self, *, relation: int | None = None, node_ext_id: str | None = None
                      ) -> list[tuple[Any, ...]]: ...
    def reset_to_base(self, edges: list[tuple[Any, ...]], updated_ms: int) -> None: ...


class SharedLearningStore(Protocol):
    """Where trails and learned weights live; ``remote`` when other machines share it (the local graph then
    starts from its base weights and replays the store's)."""

    backend: str  # "sqlite" or "postgresql"
    remote: bool
    trails: TrailRepository
    learning: LearnedRepository

    def write(self) -> AbstractContextManager[Any]: ...
    def read(self) -> AbstractContextManager[Any]: ...
    def close(self) -> None: ...

    # moving everything to another store (inside the caller's transaction)
    def dump(self) -> LearningDump: ...
    def is_empty(self) -> bool: ...
    def clear(self, updated_ms: int) -> None: ...
    def load(self, dump: LearningDump, *, w_min: float, w_max: float, updated_ms: int) -> int: ...


@dataclass
class LearningDump:
    """Everything a shared learning store holds for one workspace / project, as plain rows (moving it between
    stores: :mod:`m1nd.codegraph.learning_migrate`)."""

    trails: list[TrailRow] = field(default_factory=list)  # TRAIL_COLUMNS order
    tags: list[tuple[str, str]] = field(default_factory=list)  # (trail_id, tag)
    sequences: list[tuple[str, int]] = field(default_factory=list)  # (agent_slug, next)
    # (agent_id, query, feedback, strength, node_ids_json, edges_adjusted, created_ms), oldest first
    log: list[tuple[Any, ...]] = field(default_factory=list)
    weights: list[tuple[Any, ...]] = field(default_factory=list)  # (src, dst, relation, w0, w, n_ltp, n_ltd,
    #                                                                updated_ms) of every edge ever learned

    def counts(self) -> dict[str, int]:
        return {"trails": len(self.trails), "trail_tags": len(self.tags), "trail_sequences": len(self.sequences),
                "learn_log": len(self.log), "learned_weights": len(self.weights)}
