"""Parsing and validation of entry fields that needs no database (spec memory.md §8).

Every add funnel (CLI ``add``, each ``add-batch`` line, MCP ``memory_add`` / ``memory_add_batch``) turns its input into
the same dictionary of *batch-style* keys and calls :func:`parse_add`. Checks that need the database (registries,
anchors, projects) happen later, inside the write transaction (:mod:`m1nd.memory.service`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from m1nd.errors import InvalidInputError
from m1nd.memory.ids import check_session_id, normalize_entry_id
from m1nd.store.memory_schema import FACT_TYPES, RESONANCE_TYPES

MAX_BODY_BYTES = 1024 * 1024
MAX_TITLE = 500
MAX_TAG = 64
MAX_CODE_REFS = 50
MAX_WAKE_PHRASES = 20

# fact type -> (category, extra tag)
FACT_ROUTES: dict[str, tuple[str, str | None]] = {
    "decision": ("decision", None),
    "insight": ("insight", None),
    "person": ("reference", "person"),
    "quote": ("reference", "quote"),
    "thread_opened": ("thread", "question"),
    "commitment": ("thread", "commitment"),
}
THREAD_FACTS = frozenset({"thread_opened", "commitment"})

STR_FIELDS = ("category", "title", "content", "file", "owner", "visibility", "session_id", "session", "project",
              "domain", "source_type", "entry_type", "content_type", "resonance_type", "type", "thread_id",
              "source_agent", "wake_phrase")
LIST_FIELDS = ("tags", "applicability", "anchors", "code_refs", "wake_phrases")
INT_FIELDS = ("wake_order", "resonance")
BOOL_FIELDS = ("private", "ephemeral", "allow_duplicate", "embed", "auto_anchor")
ALL_FIELDS = frozenset(STR_FIELDS + LIST_FIELDS + INT_FIELDS + BOOL_FIELDS)
# Keys a fact (``type``) accepts; anything else would be silently ignored, so it is refused.
FACT_FIELDS = frozenset({"type", "content", "file", "session", "session_id", "thread_id", "tags", "code_refs",
                         "resonance", "private", "allow_duplicate", "embed", "auto_anchor", "source_agent"})
FACT_FORBIDDEN_MSG = {
    "category": "--category", "title": "--title", "anchors": "--anchors", "wake_phrase": "--wake-phrase",
    "wake_phrases": "--wake-phrases", "wake_order": "--wake-order",
}
CODE_REF = re.compile(r"^(?:[^\s:#]+::)?(?:dir|file)::\S.*$")


def check_field_types(raw: dict[str, Any]) -> None:
    """JSON type checks of a batch line (``field 'resonance' must be an integer``)."""
    for key, value in raw.items():
        if key not in ALL_FIELDS:
            raise InvalidInputError(f"unknown field '{key}'")
        if value is None:
            continue
        if key in STR_FIELDS and not isinstance(value, str):
            raise InvalidInputError(f"field '{key}' must be a string")
        if key in INT_FIELDS and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidInputError(f"field '{key}' must be an integer")
        if key in BOOL_FIELDS and not isinstance(value, bool):
            raise InvalidInputError(f"field '{key}' must be true or false")
        if key in LIST_FIELDS and not (isinstance(value, str) or
                                       (isinstance(value, list) and all(isinstance(x, str) for x in value))):
            raise InvalidInputError(f"field '{key}' must be a comma-separated string or an array of strings")


def split_list(value: str | list[str] | None) -> list[str]:
    """CSV text or a list → trimmed, non-empty, de-duplicated values in order."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for x in items:
        s = x.strip()
        if s and s not in out:
            out.append(s)
    return out


def check_tags(tags: list[str]) -> list[str]:
    for t in tags:
        if "," in t or len(t) > MAX_TAG or not t:
            raise InvalidInputError(f"Tag '{t}' is invalid (no commas, at most {MAX_TAG} characters)")
    return tags


def tag_list(value: str | list[str] | None) -> list[str]:
    """Tags keep commas inside array items so that they can be refused (not silently split)."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for x in items:
        s = x.strip()
        if s and s not in out:
            out.append(s)
    return check_tags(out)


def check_title(title: str) -> str:
    if not (1 <= len(title) <= MAX_TITLE) or not title.strip():
        raise InvalidInputError(f"Title must be 1..{MAX_TITLE} characters")
    return title


def check_body(body: str) -> str:
    n = len(body.encode("utf-8"))
    if n > MAX_BODY_BYTES:
        raise InvalidInputError(f"Content is too large: {n} bytes (at most {MAX_BODY_BYTES})")
    return body


def check_code_refs(refs: list[str]) -> list[str]:
    if len(refs) > MAX_CODE_REFS:
        raise InvalidInputError(f"Too many code refs: {len(refs)} (at most {MAX_CODE_REFS})")
    for r in refs:
        if len(r) > 1000 or not CODE_REF.match(r):
            raise InvalidInputError(f"Invalid code ref '{r}' (expected a graph id such as file::src/a.py or "
                                    "file::src/a.py::fn::name)")
    return refs


def check_wake_phrases(phrases: list[str]) -> list[str]:
    if len(phrases) > MAX_WAKE_PHRASES:
        raise InvalidInputError(f"Too many wake phrases: {len(phrases)} (at most {MAX_WAKE_PHRASES})")
    return phrases


def check_resonance_type(value: str | None) -> str | None:
    if value is None:
        return None
    if value not in RESONANCE_TYPES:
        raise InvalidInputError(f"Invalid resonance type '{value}'. Valid types: {', '.join(RESONANCE_TYPES)}")
    return value


def check_fact_type(value: str) -> str:
    if value not in FACT_TYPES:
        raise InvalidInputError(f"Invalid fact type '{value}'. Valid types: {', '.join(FACT_TYPES)}")
    return value


def read_content_file(path: str, base_dir: Path | None = None) -> str:
    """Read ``path`` as UTF-8 (``-`` = stdin); relative paths resolve against ``base_dir`` when given."""
    if path == "-":
        return sys.stdin.read()
    p = Path(path).expanduser()
    if not p.is_absolute() and base_dir is not None:
        p = base_dir / p
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InvalidInputError(f"cannot read file '{path}': {e.strerror or e}") from None
    if len(data) > MAX_BODY_BYTES:
        raise InvalidInputError(f"Content is too large: {len(data)} bytes (at most {MAX_BODY_BYTES})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"file '{path}' is not UTF-8 text") from None


def fact_title(fact_type: str, body: str) -> str:
    snippet = body if len(body) <= 60 else body[:57] + "..."
    return f"{fact_type}: {snippet}"


@dataclass
class AddPlan:
    """A validated add request (no database checks yet)."""

    kind: str  # "entry", "fact" or "close"
    title: str = ""
    body: str = ""
    category: str = ""
    tags: list[str] = field(default_factory=list)
    applicability: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    code_refs: list[str] = field(default_factory=list)
    wake_phrases: list[str] = field(default_factory=list)
    wake_order: int | None = None
    project: str | None = None
    source_agent: str = ""
    source_type: str = "manual"
    entry_type: str = "primary"
    content_type: str = "text"
    session_id: str | None = None
    domain: str | None = None
    ephemeral: bool = False
    visibility: str = "public"
    owner: str | None = None
    resonance: int = 0
    resonance_type: str | None = None
    fact_type: str | None = None
    fact_state: str | None = None
    thread_id: str | None = None
    allow_duplicate: bool = False
    embed: bool = True
    auto_anchor: bool = True


def check_acting_agent(agent: str | None, *, owner: str | None = None, source_agent: str | None = None) -> None:
    """The one rule for writing on someone's behalf (issue 14): an agent writes as itself. A given owner or source
    agent must be the acting agent (without one, the source agent is the actor, so the owner must match it). MCP
    takes neither field (the acting agent is ``agent_id``); the CLI accepts them only when they name the actor."""
    actor = agent or source_agent
    if agent and source_agent and source_agent != agent:
        raise InvalidInputError(f"cannot write as another agent: source agent '{source_agent}' is not the acting "
                                f"agent '{agent}'", recover="drop --source-agent (entries are written by the acting "
                                "agent: --agent or M1ND_CURRENT_AGENT)", details={"argument": "source_agent"})
    if owner and actor and owner != actor:
        raise InvalidInputError(f"cannot write into another agent's private space: owner '{owner}' is not the "
                                f"acting agent '{actor}'", recover="drop --owner (a private entry belongs to the "
                                "acting agent: --agent or M1ND_CURRENT_AGENT)", details={"argument": "owner"})


def parse_add(raw: dict[str, Any], *, agent: str | None, base_dir: Path | None = None,
              default_source_type: str = "manual") -> AddPlan:
    """Validate an add request given as batch-style keys. Raises :class:`InvalidInputError` naming the problem."""
    g = raw.get
    check_acting_agent(agent, source_agent=g("source_agent"))
    fact_type = g("type")
    if g("session") is not None and g("session_id") is not None and g("session") != g("session_id"):
        raise InvalidInputError("'session' and 'session_id' name different sessions; pass one")
    session = g("session") if g("session") is not None else g("session_id")
    if fact_type is None and (g("session") is not None or g("thread_id") is not None):
        which = "session" if g("session") is not None else "thread_id"
        raise InvalidInputError(f"'{which}' requires 'type'")
    if g("content") is not None and g("file") is not None:
        raise InvalidInputError("'content' and 'file' cannot be combined; pass one")
    if g("private") and g("visibility") is not None:
        raise InvalidInputError("'private' and 'visibility' cannot be combined; pass one")

    def content() -> str | None:
        if g("content") is not None:
            return check_body(g("content"))
        if g("file") is not None:
            return check_body(read_content_file(g("file"), base_dir))
        return None

    if fact_type is not None:
        check_fact_type(fact_type)
        bad = [k for k, v in raw.items() if v is not None and k not in FACT_FIELDS]
        if bad:
            names = ", ".join(FACT_FORBIDDEN_MSG.get(k, f"'{k}'") for k in bad)
            raise InvalidInputError(f"{names} cannot be used with a fact type (type={fact_type})")
        if fact_type == "thread_closed":
            thread_id = normalize_entry_id(g("thread_id")) if g("thread_id") else None
            body = content()
            if thread_id is None and not (body and body.strip()):
                raise InvalidInputError("thread_closed needs --thread-id or --content")
            return AddPlan(kind="close", thread_id=thread_id, body=body or "", fact_type=fact_type)
        if g("thread_id") is not None:
            raise InvalidInputError("'thread_id' is only used with type thread_closed")
        body = content()
        if body is None or not body.strip():
            raise InvalidInputError("Either --content or --file must be provided")
        category, extra_tag = FACT_ROUTES[fact_type]
        tags = tag_list(g("tags"))
        if extra_tag and extra_tag not in tags:
            tags.insert(0, extra_tag)
        source_agent = g("source_agent") or agent
        if not source_agent:
            raise InvalidInputError("--source-agent not provided and M1ND_CURRENT_AGENT not set")
        private = bool(g("private"))
        return AddPlan(
            kind="fact", title=fact_title(fact_type, body), body=body, category=category, tags=tags,
            code_refs=check_code_refs(split_list(g("code_refs"))), source_agent=source_agent,
            source_type="agent_session", session_id=check_session_id(session) if session else None,
            ephemeral=True, visibility="private" if private else "public", owner=source_agent if private else None,
            resonance=3 if g("resonance") is None else int(g("resonance")), resonance_type="ephemeral",
            fact_type=fact_type, fact_state="open" if fact_type in THREAD_FACTS else None,
            allow_duplicate=bool(g("allow_duplicate")), embed=g("embed") is not False, auto_anchor=False)

    if not g("category"):
        raise InvalidInputError("category is required (or a fact type)")
    if g("title") is None:
        raise InvalidInputError("title is required (or a fact type)")
    body = content()
    if body is None:
        raise InvalidInputError("Either --content or --file must be provided")
    source_agent = g("source_agent") or agent
    if not source_agent:
        raise InvalidInputError("--source-agent not provided and M1ND_CURRENT_AGENT not set")
    visibility = g("visibility")
    if g("private"):
        visibility = "private"
    visibility = visibility or "public"
    if visibility not in ("public", "private"):
        raise InvalidInputError("--visibility must be 'public' or 'private'")
    owner = g("owner")
    if visibility == "public" and owner:
        raise InvalidInputError("Cannot set owner on public entry. Use --visibility private to make entry private "
                                "first.")
    if visibility == "private":
        check_acting_agent(agent, owner=owner, source_agent=source_agent)
        owner = owner or agent
        if not owner:
            raise InvalidInputError("Cannot make entry private without an owner. Provide --owner or set "
                                    "M1ND_CURRENT_AGENT.")
    phrases = split_list(g("wake_phrases"))
    if g("wake_phrase"):
        one = g("wake_phrase").strip()
        if one and one not in phrases:
            phrases.insert(0, one)
    anchors = [normalize_entry_id(a) for a in split_list(g("anchors"))]
    return AddPlan(
        kind="entry", title=check_title(g("title")), body=body, category=g("category").strip(),
        tags=tag_list(g("tags")), applicability=split_list(g("applicability")), anchors=anchors,
        code_refs=check_code_refs(split_list(g("code_refs"))), wake_phrases=check_wake_phrases(phrases),
        wake_order=g("wake_order"), project=g("project") or None, source_agent=source_agent,
        source_type=g("source_type") or default_source_type, entry_type=g("entry_type") or "primary",
        content_type=g("content_type") or "text", session_id=check_session_id(session) if session else None,
        domain=g("domain"), ephemeral=bool(g("ephemeral")), visibility=visibility, owner=owner,
        resonance=int(g("resonance") or 0), resonance_type=check_resonance_type(g("resonance_type")),
        allow_duplicate=bool(g("allow_duplicate")), embed=g("embed") is not False,
        auto_anchor=g("auto_anchor") is not False)


def embedding_text(title: str, body: str, summary: str | None, tags: list[str]) -> str:
    """The text an entry is embedded from (spec memory.md §11); used by the embedding hook of issue 6."""
    text = title + "\n\n" + (body if body else (summary or ""))
    if tags:
        text += "\n\nTags: " + ", ".join(sorted(tags))
    return text
