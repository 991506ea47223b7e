"""Work sessions: listing (privacy-aware), creating and closing them, the facts of a session and a fact's session.

A session that exists only through another agent's private entries stays hidden: its id and ``created_by`` would
reveal that agent's private work.
"""

from __future__ import annotations


from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.memory import fields as F
from m1nd.memory.core import MemoryCore, visible
from m1nd.memory.ids import new_session_id, normalize_entry_id
from m1nd.memory.results import FactSession, Session, SessionClosed, SessionFact
from m1nd.timeutil import now_iso, now_ms

SESSION_COLUMNS = ("id", "session_type", "project", "started_at", "ended_at", "created_by")


class Sessions(MemoryCore):
    def sessions(self, *, agent: str | None, project: str | None = None) -> list[Session]:
        """Sessions ``agent`` may know of: its own, empty ones, and those holding an entry it can see."""
        with self._read() as tx:
            if project is not None and not tx.registries.has("projects", project):
                raise InvalidInputError(f"Unknown project '{project}'; register it with m1nd memory projects add")
            rows = tx.sessions.visible(agent, project)
        return [Session(**dict(zip(SESSION_COLUMNS, r, strict=True))) for r in rows]

    def create_session(self, *, session_type: str | None = None, project: str | None = None,
                       session_id: str | None = None, agent: str | None = None) -> Session:
        sid = F.check_session_id(session_id) if session_id else new_session_id()
        st = session_type or "manual"
        ts = now_iso()
        with self._write() as tx:
            types = tx.registries.ids("session_types")
            if st not in types:
                raise InvalidInputError(f"Invalid session type '{st}'. Valid: {', '.join(types)}")
            if project is not None and not tx.registries.has("projects", project):
                raise InvalidInputError(f"Unknown project '{project}'; register it with m1nd memory projects add")
            if tx.sessions.exists(sid):
                raise InvalidInputError(f"Session '{sid}' already exists")
            tx.sessions.create(sid, st, project, ts, agent)
        return Session(id=sid, session_type=st, project=project, started_at=ts, ended_at=None, created_by=agent)

    def close_session(self, session_id: str) -> SessionClosed:
        ts = now_iso()
        with self._write() as tx:
            r = tx.sessions.ended_at(session_id)
            if r is None:
                raise NotFoundError(f"Session '{session_id}' not found")
            if r[0] is None:
                tx.sessions.close(session_id, ts)
            ended = r[0] or ts
        return SessionClosed(id=session_id, ended_at=ended)

    def for_session(self, sid: str, *, agent: str | None) -> list[SessionFact]:
        s = sid.strip()
        cands = [s] if s.startswith("kn-") else [s, "kn-" + s]
        now = now_ms()
        with self._read() as tx:
            entries = tx.entries.hydrate_rowids(tx.entries.session_rowids(cands, agent, now), agent=agent, now=now)
        if entries:
            self._bookkeep([e.rowid for e in entries], "", full=False)
        return [SessionFact(id=e.id, type=e["fact_type"], content=e["body"], created_at=e["created_at"],
                            resonance=e["resonance"]) for e in entries]

    def fact_session(self, fid: str, *, agent: str | None) -> FactSession:
        eid = normalize_entry_id(fid)
        sid = None
        rowid = None
        with self._read() as tx:
            hit = tx.entries.rowid_of(eid)
            if visible(hit, agent):
                rowid = hit[0]
                sid = tx.entries.value_of(rowid, "session_id")
                if sid is None:
                    sid = tx.relationships.extracted_from(rowid, agent)
        if rowid is not None:
            self._bookkeep([rowid], now_iso())
        return FactSession(fact_id=eid, session_id=sid)
