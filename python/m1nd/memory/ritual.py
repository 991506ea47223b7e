"""The token ritual of the wake (spec memory.md §12): one guess per chunk, made from the title alone, then the chunk
is shown.

State lives in ``wake_sessions`` (one row per ritual: the plan, the step cursor, the previous step, the last
response and the running counters) and ``wake_guesses`` (one row per judged step, written in the **same**
transaction that advances the cursor — never one without the other).

Tokens
------
``{session_id}.{step}.{sig}`` where ``sig`` is the unpadded base64url of the first 16 bytes of
HMAC-SHA256(key = the store's random ``meta.wake_secret``, message = ``"{session_id}.{step}.{agent}"``), checked in
constant time. The session id alone (which appears in every token) does not let anyone mint a token for another
step or agent.

A call with the **current** token is judged and advances the cursor. A call with the token spent by the last call
(``prev_step``) gets that call's answer again with ``replayed: true`` (also when it judged nothing), so a caller whose
response was lost recovers it together with the token it never received. Any older token is refused with
``token_out_of_sync`` and a pointer to the token of the last call, which is always resumable. A refused guess (too
long, no alphanumeric character) writes nothing and leaves the token valid.

Each respond runs inside one ``BEGIN IMMEDIATE`` transaction that reads the session, reads the entry, judges, and
writes the row and the advance; the advance is an ``UPDATE … WHERE step = ?`` so even a writer that bypassed the lock
could not double-advance: a lost race is answered as a replay.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import uuid
from dataclasses import dataclass
from typing import Any

from m1nd.defaults import WAKE_DAYS, WAKE_LIMIT
from m1nd.errors import InvalidInputError, M1ndError
from m1nd.memory.ids import normalize_entry_id
from m1nd.memory.service import MemoryService
from m1nd.memory.wake import bump_activation, select
from m1nd.memory.waketext import (
    chunk_limit,
    chunk_phrases,
    entry_content,
    has_alnum,
    judge,
    shown_title,
    split_chunks,
)
from m1nd.store.memory_tx import MemoryTx
from m1nd.timeutil import now_iso

PLAN_VERSION = 1
MAX_GUESS = 2000
MAX_MODEL = 200
SOURCES = ("authored", "derived", "auto", "unphrased")
_TOKEN = re.compile(r"^([0-9a-f]{32})\.(0|[1-9][0-9]{0,8})\.([A-Za-z0-9_-]{22})$")

RECOVER = {
    "invalid_guess": "retry with the same token and a guess of 1..2000 characters with letters or digits",
    "invalid_bloom_id": "retry with the bloom id of the prompt (expected_id)",
    "token_out_of_sync": "call again with the last valid token named in the message",
    "invalid_token": "begin a new ritual (wake --begin / wake_begin)",
    "wrong_agent": "call as the agent that began the ritual",
    "wake_taken": "pick another wake number, or pass force_wake / --force-wake",
}


class RitualError(M1ndError):
    """A ritual refusal; ``code`` is one of the ritual codes of mcp.md §3 (or invalid_argument / not_found)."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message, code=code, recover=RECOVER.get(code), details=details)


# -- tokens ---------------------------------------------------------------------------------------------------
def _secret(repo: MemoryTx) -> bytes:
    raw = repo.meta.get("wake_secret")
    if raw is None:  # a store made before the secret existed: make one (the write joins the caller's transaction)
        repo.meta.ensure("wake_secret", secrets.token_hex(32))
        raw = repo.meta.get("wake_secret")
    try:
        return bytes.fromhex(raw)
    except ValueError:
        return raw.encode("utf-8")


def sign(secret: bytes, session_id: str, step: int, agent: str) -> str:
    mac = hmac.new(secret, f"{session_id}.{step}.{agent}".encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def make_token(secret: bytes, session_id: str, step: int, agent: str) -> str:
    return f"{session_id}.{step}.{sign(secret, session_id, step, agent)}"


def parse_token(token: str) -> tuple[str, int, str]:
    m = _TOKEN.match((token or "").strip())
    if not m:
        raise RitualError("invalid_token", "malformed ritual token (expected {session}.{step}.{signature})")
    return m.group(1), int(m.group(2)), m.group(3)


# -- the plan -------------------------------------------------------------------------------------------------
@dataclass
class Step:
    id: str
    title: str  # as shown (with the Part suffix for multi-chunk entries)
    chunk_index: int
    chunk_total: int
    bloom_position: int
    bloom_total: int
    phrase_source: str
    phrases: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "t": self.title, "ci": self.chunk_index, "ct": self.chunk_total,
                "bp": self.bloom_position, "bt": self.bloom_total, "src": self.phrase_source, "ph": self.phrases}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Step:
        return cls(d["id"], d["t"], d["ci"], d["ct"], d["bp"], d["bt"], d["src"], d["ph"])

    def prompt(self) -> dict[str, Any]:
        chunk = {"index": self.chunk_index, "total": self.chunk_total} if self.chunk_total > 1 else None
        return {"id": self.id, "title": self.title, "phrase_source": self.phrase_source, "chunk": chunk}


def build_plan(entries: list[Any], limit: int) -> list[Step]:
    """Steps of a ritual over wake entries (objects with ``id``, ``title``, ``body``, ``summary``,
    ``wake_phrases``)."""
    steps: list[Step] = []
    n = len(entries)
    for pos, e in enumerate(entries):
        content = entry_content(e.body, e.summary)
        chunks = split_chunks(content, limit)
        for ci, ch in enumerate(chunks):
            src, phrases = chunk_phrases(ci, ch.text, content, e.title, list(e.wake_phrases))
            steps.append(Step(e.id, shown_title(e.title, ci, len(chunks)), ci, len(chunks), pos, n, src, phrases))
    return steps


def _empty_counters() -> dict[str, Any]:
    return {"unhinted": dict.fromkeys(SOURCES, 0), "revealed": dict.fromkeys(SOURCES, 0), "unjudged": 0}


def _bucket_totals(c: dict[str, Any]) -> dict[str, int]:
    return {"unhinted": sum(c["unhinted"].values()), "revealed": sum(c["revealed"].values())}


# -- the service ----------------------------------------------------------------------------------------------
class Ritual:
    """Begin and respond over one :class:`MemoryService`."""

    def __init__(self, svc: MemoryService) -> None:
        self.svc = svc

    # -- begin ------------------------------------------------------------------------------------------------
    def _wake_checks(self, repo: MemoryTx, agent: str, wake: int | None, force: bool) -> list[str]:
        if wake is None:
            return []
        if not force and repo.ritual.wake_has_guesses(agent, wake):
            raise RitualError("wake_taken", f"wake {wake} already has guesses logged by {agent} in another ritual; "
                              "pass --force-wake (force_wake) to begin under it anyway", wake=wake)
        highest = repo.ritual.highest_wake(agent)
        warnings = []
        if highest is not None:
            if wake < highest:
                warnings.append(f"wake {wake} is lower than the highest wake you have logged ({highest})")
            elif wake > highest + 1:
                warnings.append(f"wake {wake} skips ahead: the highest wake you have logged is {highest}")
        return warnings

    def begin(self, agent: str | None, *, wake: int | None = None, model: str | None = None,
              force_wake: bool = False, limit: int = WAKE_LIMIT, min_resonance: int | None = None,
              days: int = WAKE_DAYS,
              activate: bool = True, include_excluded: bool = False, basis: str | None = None) -> dict[str, Any]:
        if wake is not None and wake < 1:
            raise InvalidInputError(f"--wake must be a positive integer (got {wake})")
        if model is not None and (not model.strip() or len(model) > MAX_MODEL):
            raise InvalidInputError(f"--model must be 1..{MAX_MODEL} characters")
        ws = select(self.svc, agent, limit=limit, min_resonance=min_resonance, days=days,
                    include_excluded=include_excluded, basis=basis)
        assert agent is not None  # select() refused otherwise
        with self.svc._read() as repo:
            warnings = self._wake_checks(repo, agent, wake, force_wake)
        entries = ws.entries()
        base = {"wake": wake, "model": model, "excluded": ws.excluded, "warnings": warnings}
        if not entries:
            return {"status": "empty", "session": None, "prompt": None, "progress": {"current": 0, "total": 0},
                    **base}
        limit_bytes = chunk_limit()
        steps = build_plan(entries, limit_bytes)
        sid = uuid.uuid4().hex
        plan = {"v": PLAN_VERSION, "chunk_bytes": limit_bytes, "blooms": len(entries),
                "steps": [s.to_json() for s in steps]}
        with self.svc._write() as repo:
            warnings = self._wake_checks(repo, agent, wake, force_wake)  # again, under the write lock
            secret = _secret(repo)
            repo.ritual.begin(sid, agent, wake, model, json.dumps(plan, ensure_ascii=False),
                              json.dumps(_empty_counters()), now_iso())
            if activate:
                bump_activation(repo, [e.rowid for e in entries])
        return {"status": "started", "session": make_token(secret, sid, 0, agent), "prompt": steps[0].prompt(),
                "progress": {"current": 0, "total": len(steps)}, **base, "warnings": warnings}

    # -- respond ----------------------------------------------------------------------------------------------
    def respond(self, agent: str | None, *, guess: str, bloom_id: str, token: str) -> dict[str, Any]:
        sid, step, sig = parse_token(token)
        with self.svc._write() as repo:
            row = repo.ritual.session(sid)
            if row is None:
                raise RitualError("invalid_token", f"unknown ritual session {sid}")
            s_agent, wake, model, plan_json, cur, prev, last_json, counters_json, _completed = row
            secret = _secret(repo)
            if not hmac.compare_digest(sign(secret, sid, step, s_agent), sig):
                raise RitualError("invalid_token", "ritual token signature does not verify")
            if not agent or agent != s_agent:
                raise RitualError("wrong_agent", f"this ritual belongs to agent {s_agent}; "
                                  + ("no agent was given" if not agent else f"you are {agent}"))
            plan = json.loads(plan_json)
            if plan.get("v") != PLAN_VERSION:
                raise RitualError("invalid_token", "this ritual was begun by an older version of the ritual and "
                                  "cannot be continued")
            if len(guess) > MAX_GUESS:
                raise RitualError("invalid_guess", f"guess is {len(guess)} characters; at most {MAX_GUESS} are "
                                  "accepted (nothing was recorded; retry with the same token)")
            if not has_alnum(guess):
                raise RitualError("invalid_guess", "guess has no letter or digit (nothing was recorded; retry with "
                                  "the same token)")
            steps = plan["steps"]
            total = len(steps)
            if prev is not None and step == prev:
                self._check_bloom(steps[step], bloom_id)
                return {**json.loads(last_json), "replayed": True}
            if step != cur:
                if step < cur:
                    last = make_token(secret, sid, prev, s_agent) if prev is not None else make_token(
                        secret, sid, cur, s_agent)
                    raise RitualError("token_out_of_sync", f"token for step {step} is out of sync: the ritual is at "
                                      f"step {cur} of {total}; the last valid token is {last}",
                                      last_valid_token=last)
                raise RitualError("invalid_token", "ritual token is ahead of the ritual")
            if cur >= total:
                raise RitualError("invalid_token", f"ritual {sid} is complete ({total} chunks walked); begin a new "
                                  "one")
            st = Step.from_json(steps[cur])
            self._check_bloom(steps[cur], bloom_id)
            answer = self._judge_step(repo, st, agent, guess, plan, cur)
            counters = json.loads(counters_json)
            if answer["status"] == "shown":
                counters[answer["bucket"]][st.phrase_source] += 1
            else:
                counters["unjudged"] += 1
            nxt = cur + 1
            ts = now_iso()
            resp: dict[str, Any] = {"status": answer["status"]}
            if answer["status"] == "shown":
                resp.update(bucket=answer["bucket"], guess=guess, match=answer["match"], bloom=answer["bloom"])
            resp.update(session=make_token(secret, sid, nxt, s_agent),
                        next=Step.from_json(steps[nxt]).prompt() if nxt < total else None,
                        progress={"current": nxt, "total": total, "buckets": _bucket_totals(counters)},
                        wake=wake, model=model)
            if nxt == total:
                resp["summary"] = {"chunks": total, "blooms": plan["blooms"],
                                   "buckets": {"unhinted": counters["unhinted"], "revealed": counters["revealed"]},
                                   "unjudged": counters["unjudged"]}
            if not repo.ritual.advance(sid, cur, nxt, json.dumps(resp, ensure_ascii=False), resp["status"],
                                       json.dumps(counters), ts if nxt == total else None):
                raise _LostRace()  # another writer advanced it: answer from what it recorded
            if answer["status"] == "shown":
                repo.ritual.log_guess(
                    (sid, cur, s_agent, wake, model, st.id, st.chunk_index, st.chunk_total, st.bloom_position,
                     st.bloom_total, st.title, guess, st.phrase_source, json.dumps(st.phrases, ensure_ascii=False),
                     answer["match"]["kind"], answer["match"]["phrase_index"], answer["bucket"],
                     answer["sha256"], ts))
            return resp

    @staticmethod
    def _check_bloom(step: dict[str, Any], bloom_id: str) -> None:
        try:
            given = normalize_entry_id(bloom_id)
        except InvalidInputError:
            given = (bloom_id or "").strip()
        if given != step["id"]:
            raise RitualError("invalid_bloom_id", f"Expected bloom {step['id']}, got {bloom_id.strip()}",
                              expected_id=step["id"])

    @staticmethod
    def _judge_step(repo: MemoryTx, st: Step, agent: str, guess: str, plan: dict[str, Any], cur: int
                    ) -> dict[str, Any]:
        r = repo.ritual.bloom(st.id)
        if r is None or not (r[2] == "public" or r[3] == agent):
            return {"status": "bloom_missing"}
        chunks = split_chunks(entry_content(r[0], r[1]), plan["chunk_bytes"])
        if st.chunk_index >= len(chunks):
            return {"status": "chunk_truncated"}
        text = chunks[st.chunk_index].text
        kind, index = judge(guess, st.phrases)
        return {"status": "shown", "bucket": "unhinted" if kind != "none" else "revealed",
                "match": {"kind": kind, "phrase_index": index},
                "bloom": {"id": st.id, "title": st.title, "phrases": st.phrases, "phrase_source": st.phrase_source,
                          "content": text, "chunk": ({"index": st.chunk_index, "total": st.chunk_total}
                                                     if st.chunk_total > 1 else None)},
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


class _LostRace(Exception):
    pass


def respond(svc: MemoryService, agent: str | None, *, guess: str, bloom_id: str, token: str) -> dict[str, Any]:
    """One respond; a lost race (the cursor moved under us) is answered as the replay of the winning call."""
    r = Ritual(svc)
    for _ in range(3):
        try:
            return r.respond(agent, guess=guess, bloom_id=bloom_id, token=token)
        except _LostRace:
            continue
    raise M1ndError("ritual session changed concurrently; retry with the same token", code="busy",
                    recover="retry with the same token")


def begin(svc: MemoryService, agent: str | None, **kw: Any) -> dict[str, Any]:
    return Ritual(svc).begin(agent, **kw)
