"""Per-agent state of the code-graph service (:class:`~m1nd.codegraph.service.CodeGraph` is made of it): who asked
what and when, the priming boosts that ``warmup`` and ``trail_resume`` set (decayed at every query, kept in
``graph.db`` so a later process sees them), and the per-node factors of the persisted learn log
(:func:`m1nd.codegraph.learning.feedback_factors`).

A mixin over the service's own attributes (``agents``, ``store``, ``shared``, ``lock``, ``flush``), as the memory
service is made of its command families.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from m1nd.timeutil import now_ms

if TYPE_CHECKING:
    from m1nd.graph.model import Graph

FLUSH_EVERY = 50
BOOST_DECAY = 0.7
BOOST_TTL_MS = 24 * 3600 * 1000
MAX_BOOSTS = 500


@dataclass
class AgentState:
    first_seen: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time)
    query_count: int = 0
    boosts: dict[str, tuple[float, int, str]] = field(default_factory=dict)  # ext id -> (boost, created_ms, source)
    boosts_dirty: bool = False  # decayed since last persisted (written at the next flush)
    query_log: deque = field(default_factory=lambda: deque(maxlen=100))  # (normalised query, [seed ext ids])


class AgentStates:
    """The per-agent half of the code-graph service."""

    agents: dict[str, AgentState]
    store: Any
    shared: Any
    lock: Any
    queries_processed: int
    _feedback_cache: dict[Any, Any]
    flush: Any  # the service's: learned weights and dirty boosts to graph.db

    def agent(self, agent_id: str) -> AgentState:
        st = self.agents.get(agent_id)
        if st is None:
            # priming boosts outlive the process that set them (a CLI `trail resume` primes the next CLI `activate`)
            st = self.agents[agent_id] = AgentState()
            for ext, b, created, src in self.store.agent_boosts(agent_id, now_ms() - BOOST_TTL_MS):
                st.boosts[ext] = (b, created, src)
        st.last_seen = time.time()
        return st

    def _save_boosts(self, agent_id: str, st: AgentState) -> None:
        self.store.save_agent_boosts(agent_id, [(e, b, c, s) for e, (b, c, s) in st.boosts.items()],
                                     now_ms() - BOOST_TTL_MS)
        st.boosts_dirty = False

    def count_query(self, agent_id: str) -> None:
        """Every graph/learning/perspective call counts; every 50th flushes learned weights."""
        with self.lock:
            self.queries_processed += 1
            self.agent(agent_id).query_count += 1
            if self.queries_processed % FLUSH_EVERY == 0:
                self.flush()

    def feedback_for(self, g: Graph, agent_id: str, query: str) -> tuple[dict[int, float], dict[int, float]]:
        """Per-node score factors from the persisted learn log (learning.feedback_factors), re-read only when a new
        verdict was logged (by any process) and cached per agent and graph generation."""
        from m1nd.codegraph.learning import feedback_factors

        newest = self.shared.learning.newest_feedback_id()
        if newest == 0:
            return {}, {}
        cache = self._feedback_cache
        if cache.get("key") != (newest, g.graph_generation):
            cache.clear()
            cache["key"] = (newest, g.graph_generation)
            cache["rows"] = self.shared.learning.feedback_log()
        hit = cache.get(("agent", agent_id))
        if hit is None:
            hit = cache[("agent", agent_id)] = feedback_factors(cache["rows"], agent_id, g.nodes.index)
        return hit.for_query(query)

    def boosts_for(self, g: Graph, agent_id: str) -> dict[int, float]:
        st = self.agent(agent_id)
        now = now_ms()
        out: dict[int, float] = {}
        for ext, (b, created, _src) in list(st.boosts.items()):
            if b < 0.01 or now - created > BOOST_TTL_MS:
                del st.boosts[ext]
                continue
            i = g.nodes.index.get(ext)
            if i is not None:
                out[i] = b
        return out

    def decay_boosts(self, agent_id: str) -> None:
        st = self.agent(agent_id)
        st.boosts_dirty = st.boosts_dirty or bool(st.boosts)
        for ext, (b, created, src) in list(st.boosts.items()):
            nb = b * BOOST_DECAY
            if nb < 0.01:
                del st.boosts[ext]
            else:
                st.boosts[ext] = (nb, created, src)

    def add_boosts(self, agent_id: str, boosts: dict[str, float], source: str) -> None:
        st = self.agent(agent_id)
        now = now_ms()
        for ext, b in boosts.items():
            old = st.boosts.get(ext)
            if old is None or b > old[0]:
                st.boosts[ext] = (b, now, source)
        if len(st.boosts) > MAX_BOOSTS:
            for ext, _ in sorted(st.boosts.items(), key=lambda kv: kv[1][0])[: len(st.boosts) - MAX_BOOSTS]:
                del st.boosts[ext]
        self._save_boosts(agent_id, st)  # warmup and trail resume are writes: their boosts are durable at once
