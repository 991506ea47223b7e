"""Memory tools (spec memory.md §14, mcp.md §7.1): thin adapters onto ``Workspace.memory``.

The acting agent is ``agent_id``: it is the source agent of every write and the owner of private entries (these
tools take no ``owner`` or ``source_agent``). ``include_private`` defaults to true here (the agent's own private
entries), bodies in lists are cut to ``max_body_chars``, and ``source_type`` defaults to ``agent_session``.
"""

from __future__ import annotations

from typing import Any

from m1nd.defaults import RECENT_DAYS, RESONANCE_CAP
from m1nd.errors import InvalidInputError
from m1nd.tools.registry import TOOLS, Param, Tool, register
from m1nd.memory.fields import FACT_TYPES, RESONANCE_TYPES
from m1nd.memory.results import Added

ID = Param("id", "string", "Entry id (kn-…; a unique prefix of ≥ 8 hex digits also works).", required=True,
           min_length=1, max_length=200)
BASIS = ("raw", "decayed")
# (most items, longest item) of each list-valued field, wherever a tool takes it
_LIST_LIMITS = {"category": (50, 64), "tags": (50, 64), "applicability": (50, 64), "anchors": (50, 200),
                "code_refs": (50, 1000), "wake_phrases": (20, 500)}


def list_param(name: str, description: str, field: str | None = None) -> Param:
    """A list-valued argument of a memory field (``field``, default ``name``) with that field's limits."""
    most, longest = _LIST_LIMITS[field or name]
    return Param(name, "string[]", description, max_items=most, max_length=longest)


def _replace_add_remove(field: str, what: str) -> tuple[Param, Param, Param]:
    """``memory_update``'s three ways to change a list field: replace it, add to it, remove from it."""
    return (list_param(field, f"New {what} (replace).", field),
            list_param(f"add_{field}", f"{what.capitalize()} to add.", field),
            list_param(f"remove_{field}", f"{what.capitalize()} to remove.", field))


MAX_BODY_CHARS = Param("max_body_chars", "integer", "Cut bodies to this many characters.", default=300,
                       minimum=0, maximum=5000)
REGISTRY_KINDS = ("categories", "relationship_types", "fact_types", "resonance_types", "source_types", "entry_types",
                  "content_types", "session_types", "applicability", "tags")


def _cut(entry: dict[str, Any], n: int | None) -> dict[str, Any]:
    if n is not None and isinstance(entry.get("body"), str) and len(entry["body"]) > n:
        entry["body"] = entry["body"][:n] + "…" if n > 0 else ""
        entry["body_truncated"] = True
    return entry


_DEFAULTS_HIDDEN = {"source_type_id": ("manual", "agent_session"), "entry_type_id": ("primary",),
                    "content_type_id": ("text",), "chunk_count": (0,), "activation_count": (0,)}
_NEVER_IN_LISTS = ("content_hash", "wake_phrase", "embedding_model", "embedded_at")


def _compact(entry: dict[str, Any], n: int | None) -> dict[str, Any]:
    """A list/search item: the entry shape without empty, null or default-valued fields (memory_show has all)."""
    out = {}
    for k, v in _cut(entry, n).items():
        if k in _NEVER_IN_LISTS or v is None or v == [] or v is False or v in _DEFAULTS_HIDDEN.get(k, ()):
            continue
        out[k] = v
    return out


FILTER_PARAMS = (
    list_param("category", "Only these categories."),
    Param("include_private", "boolean", "Include your own private entries.", default=True),
    Param("mine", "boolean", "Only your own private entries.", default=False),
    Param("min_resonance", "integer", "Minimum resonance (on the basis value)."),
    Param("max_resonance", "integer", "Maximum resonance (on the basis value)."),
    Param("resonance_basis", "string", "raw or decayed resonance for bounds and ordering.", default="decayed",
          enum=BASIS),
    list_param("tags", "Entries with any of these tags."),
    list_param("exclude_tags", "Drop entries with a tag starting with any of these prefixes.", "tags"),
    Param("code_ref", "string", "Only entries about this graph id.", max_length=1000),
    Param("project", "string", "Only entries of this project.", max_length=128),
    Param("session_id", "string", "Only entries of this session.", max_length=128),
    Param("has_wake_phrase", "boolean", "true: with wake phrases; false: without."),
    Param("has_anchors", "boolean", "true: with anchors; false: without."),
    Param("has_resonance_type", "boolean", "true: with a resonance type; false: without."),
)


def _filters(a: dict[str, Any]) -> Any:
    from m1nd.memory.service import Filters

    return Filters(
        categories=list(a.get("category") or []),
        visibility="mine" if a["mine"] else ("include" if a["include_private"] else "public"),
        min_resonance=a.get("min_resonance"), max_resonance=a.get("max_resonance"), basis=a["resonance_basis"],
        has_wake_phrase=a.get("has_wake_phrase"), has_anchors=a.get("has_anchors"),
        has_resonance_type=a.get("has_resonance_type"), tags=list(a.get("tags") or []),
        exclude_tags=[p for p in (a.get("exclude_tags") or []) if p.strip()], code_ref=a.get("code_ref"),
        project=a.get("project"), session_id=a.get("session_id"))


# -- adding ------------------------------------------------------------------------------------------------------

ADD_PARAMS = (
    Param("title", "string", "Title (with category).", min_length=1, max_length=500),
    Param("content", "string", "Body text (required with type).", default="", max_length=1024 * 1024),
    Param("category", "string", "Category (memory_registries kind=categories).", max_length=64),
    Param("type", "string", "Fact type: routes the category and generates the title.", enum=FACT_TYPES),
    list_param("tags", "Free tags."),
    list_param("applicability", "Where it applies (registry)."),
    list_param("anchors", "Entry ids this entry connects to."),
    list_param("code_refs", "Graph ids the entry is about."),
    list_param("wake_phrases", "Phrases that surface it in wake."),
    Param("wake_order", "integer", "Rank in wake."),
    Param("project", "string", "Project name.", max_length=128),
    Param("session_id", "string", "Session (enables dedup: identical facts in a session are stored once).",
          max_length=128),
    Param("domain", "string", "Subject area.", max_length=500),
    Param("thread_id", "string", "Thread to close (type thread_closed).", max_length=200),
    Param("content_type", "string", "Body format (registry).", default="text", max_length=64),
    Param("source_type", "string", "Origin (registry).", default="agent_session", max_length=64),
    Param("entry_type", "string", "Kind of entry (registry).", default="primary", max_length=64),
    Param("ephemeral", "boolean", "Short-lived fact.", default=False),
    Param("private", "boolean", "Visible only to you.", default=False),
    Param("resonance", "integer", "Importance (0 default, facts 3).", minimum=-100, maximum=100),
    Param("resonance_type", "string", "How importance decays.", enum=RESONANCE_TYPES),
    Param("allow_duplicate", "boolean", "Write even if identical this session.", default=False),
    Param("embed", "boolean", "Compute its vector now.", default=True),
    Param("auto_anchor", "boolean", "Link similar entries.", default=True),
)
_ADD_DEFAULTS = {p.name: p.default for p in ADD_PARAMS if p.name in (
    "content_type", "source_type", "entry_type", "ephemeral", "auto_anchor", "private", "allow_duplicate", "embed")}
_FACT_DROP_IF_DEFAULT = ("content_type", "source_type", "entry_type", "ephemeral", "auto_anchor")
_META = ("agent_id", "max_output_chars")


def _add_raw(a: dict[str, Any]) -> dict[str, Any]:
    """Tool arguments → the add fields of the memory service (batch-style keys)."""
    raw = {k: v for k, v in a.items() if k not in _META and v is not None}
    if raw.get("type"):
        for k in _FACT_DROP_IF_DEFAULT:
            if k in raw and raw[k] == _ADD_DEFAULTS[k]:
                raw.pop(k)
        if raw.get("content", "") == "":
            raw.pop("content", None)
        if raw.get("type") != "thread_closed" and "content" not in raw:
            raise InvalidInputError("memory_add needs title and category, or type and content")
    else:
        if not raw.get("title") or not raw.get("category"):
            raise InvalidInputError("memory_add needs title and category, or type and content")
    for k in ("private", "allow_duplicate", "embed"):
        if raw.get(k) is False:
            raw.pop(k)
    return raw


def _memory_add(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.tools.memory_ops import embed_deferred_note

    res = ws.memory.add(_add_raw(a), agent=a["agent_id"], default_source_type="agent_session")
    data: dict[str, Any] = res.to_dict()
    if isinstance(res, Added) and res.embed_deferred:
        data["notes"] = [embed_deferred_note(res.id, res.embed_deferred)]
    return data


register(Tool(
    name="memory_add", title="Remember something", group="memory",
    description=("Store a knowledge entry (title + category + content) or a fact (type + content: decision, "
                 "insight, person, quote, thread_opened, commitment, thread_closed). Pass a session_id: an "
                 "identical entry in the same session is not stored twice (answer status already_persisted). "
                 "private=true keeps it to you. Then memory_search / memory_list to recall, memory_relate to link."),
    params=ADD_PARAMS, handler=_memory_add, output_required=("id",),
))


_BATCH_FORBIDDEN = ("owner", "source_agent", "file", "visibility", "session", "agent_id", "max_output_chars")


def _memory_add_batch(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    from m1nd.tools.registry import validate_arguments

    tool = TOOLS["memory_add"]
    items: list[Any] = []
    pre_failed: list[dict[str, Any]] = []
    for i, obj in enumerate(a["entries"]):
        try:
            bad = [k for k in obj if k in _BATCH_FORBIDDEN]
            if bad:
                raise InvalidInputError(f"unknown field '{bad[0]}' (the acting agent is agent_id)")
            clean = validate_arguments(tool, {"agent_id": a["agent_id"], **obj})
            raw = _add_raw(clean)
            if not a["embed"]:
                raw["embed"] = False
            items.append((i, raw))
        except InvalidInputError as e:
            pre_failed.append({"index": i, "error": e.message})
            items.append((i, None))
    good = [raw for _, raw in items if raw is not None]
    index_of = [i for i, raw in items if raw is not None]
    res = ws.memory.add_batch(good, agent=a["agent_id"], objects=True, no_embed=not a["embed"],
                              default_source_type="agent_session")

    def re_index(rows: list[Any]) -> list[dict[str, Any]]:
        out = []
        for r in rows:
            d = r.to_dict()
            d["index"] = index_of[d.pop("line")]
            out.append(d)
        return out
    failed = sorted(pre_failed + re_index(res.failed), key=lambda r: r["index"])
    added, saved = re_index(res.added), re_index(res.already_saved)
    out = {"added": added, "already_saved": saved, "failed": failed, "embedded": res.embedded,
           "added_count": len(added), "already_saved_count": len(saved), "failed_count": len(failed)}
    if res.embed_deferred:
        out["embed_deferred"] = res.embed_deferred
    return out


register(Tool(
    name="memory_add_batch", title="Remember many things", group="memory",
    description=("Store up to 200 entries or facts at once; each item takes the memory_add arguments (without "
                 "agent_id). Partial success: bad items are listed in failed (by 0-based index) and the rest is "
                 "written; identical items in the same session land in already_saved. Use instead of many "
                 "memory_add calls at the end of a task."),
    params=(Param("entries", "object[]", "Items shaped like memory_add arguments.", required=True, min_items=1,
                  max_items=200),
            Param("embed", "boolean", "Embed the new entries.", default=True)),
    handler=_memory_add_batch, output_required=("added", "already_saved", "failed"),
    shrinkable=("added", "already_saved"),
))


# -- reading -------------------------------------------------------------------------------------------------------


def _memory_show(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    e = ws.memory.show(a["id"], agent=a["agent_id"])
    return {"entry": _cut(e.to_json(), a.get("max_body_chars"))}


register(Tool(
    name="memory_show", title="Read an entry", group="memory",
    description=("Read one memory entry in full (title, body, tags, resonance, anchors, code refs) by id; marks it "
                 "as used (resets its decay). Use after memory_search or memory_list; then memory_update to "
                 "correct it or memory_relate to link it."),
    params=(ID, Param("max_body_chars", "integer", "Cut the body to this many characters.", minimum=100,
                      maximum=1_000_000)),
    handler=_memory_show, output_required=("entry",),
))


def _memory_list(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    res = ws.memory.list_entries(_filters(a), agent=a["agent_id"], sort=a["sort"], limit=a["limit"], count=True)
    return {"entries": [_compact(e.to_json(), a["max_body_chars"]) for e in res.entries], "total": res.total,
            "resonance_basis": a["resonance_basis"]}


register(Tool(
    name="memory_list", title="List entries", group="memory",
    description=("List memory entries by filters (category, tags, exclude_tags prefixes, resonance bounds, "
                 "project, session, code_ref), newest first or by resonance; includes your private entries unless "
                 "include_private=false. Use to browse; memory_search to find by words; memory_show for a full body."),
    params=(*FILTER_PARAMS,
            Param("sort", "string", "Order of results.", default="updated", enum=("updated", "created",
                  "resonance", "id")),
            Param("limit", "integer", "Entries returned.", default=50, minimum=1, maximum=500),
            MAX_BODY_CHARS),
    handler=_memory_list, read_only=True, output_required=("entries", "total"), shrinkable=("entries",),
))


def _memory_search(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    res = ws.memory.search(a["query"], _filters(a), agent=a["agent_id"], limit=a["limit"], activate=a["activate"],
                           mode=a.get("mode"))
    from m1nd.tools.memory_ops import search_notes

    out = {"query": a["query"], "mode": res.mode,
           "results": [_compact(e.to_json(), a["max_body_chars"]) for e in res.entries],
           "resonance_basis": a["resonance_basis"]}
    # the command line's note on hidden private entries is not for agents (include_private defaults to true here)
    notes = [n for n in search_notes(res) if not n.startswith("note: ") or "private" not in n]
    if notes:
        out["notes"] = notes
    return out


register(Tool(
    name="memory_search", title="Search memory", group="memory",
    description=("Find memory entries by words (keyword search ranked by bm25 over title, body, tags and "
                 "identifier parts; quoted phrases and prefix* work) with the same filters as memory_list. "
                 "activate=true marks results as used. Use before starting work to recall decisions and gotchas; "
                 "then memory_show for full bodies."),
    params=(Param("query", "string", "Words; \"phrases\" and prefix* work.", required=True, min_length=1,
                  max_length=2000),
            Param("mode", "string", "keyword, semantic or hybrid (default: hybrid with a model, else keyword).",
                  enum=("keyword", "semantic", "hybrid")),
            *FILTER_PARAMS,
            Param("limit", "integer", "Results returned.", default=10, minimum=1, maximum=100),
            Param("activate", "boolean", "Mark results as used.", default=False),
            MAX_BODY_CHARS),
    handler=_memory_search, output_required=("query", "mode", "results"), shrinkable=("results",),
))


def _memory_recent(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    rows = ws.memory.recent(agent=a["agent_id"], days=a["days"], limit=a["limit"],
                            resonance_type=a.get("resonance_type"), all_types=a["all_types"], sort=a["sort"],
                            basis=a["resonance_basis"])
    return {"entries": [r.to_dict() for r in rows], "resonance_basis": a["resonance_basis"]}


register(Tool(
    name="memory_recent", title="Recent facts", group="memory",
    description=("Recently created facts (ephemeral entries by default; all_types=true for every kind) whose decayed "
                 "resonance is still above 0.5, newest first or by resonance. Use at the start of a session to "
                 "catch up; memory_show for details."),
    params=(Param("days", "integer", "Look back this many days.", default=RECENT_DAYS, minimum=1,
                  maximum=3650),
            Param("all_types", "boolean", "Every kind, not only facts.", default=False),
            Param("resonance_type", "string", "Only this type.", enum=RESONANCE_TYPES),
            Param("sort", "string", "Order of results.", default="chronological", enum=("chronological",
                  "resonance")),
            Param("resonance_basis", "string", "Stored or decayed resonance.", default="decayed", enum=BASIS),
            Param("limit", "integer", "Entries returned.", default=50, minimum=1, maximum=500)),
    handler=_memory_recent, read_only=True, output_required=("entries",), shrinkable=("entries",),
))


# -- updating --------------------------------------------------------------------------------------------------------


def _memory_update(ws: Any, a: dict[str, Any]) -> Any:
    keys = ("title", "content", "append", "prepend", "find", "replace", "replace_all", "nth", "category", "tags",
            "add_tags", "remove_tags", "applicability", "content_type", "resonance", "anchors", "add_anchors",
            "remove_anchors", "wake_phrases", "add_wake_phrases", "remove_wake_phrases", "code_refs", "add_code_refs",
            "remove_code_refs", "session_id", "force")
    ch: dict[str, Any] = {k: a[k] for k in keys if a.get(k) is not None}
    if "resonance_type" in a:
        ch["resonance_type"] = a["resonance_type"] if a["resonance_type"] is not None else "-"
    if "wake_order" in a:
        ch["wake_order"] = a["wake_order"] if a["wake_order"] is not None else "-"
    if "private" in a:
        ch["visibility"] = "private" if a["private"] else "public"
    from m1nd.memory.updating import operation_of

    return ws.memory.update(a["id"], ch, agent=a["agent_id"], operation=operation_of(ch), no_embed=not a["embed"],
                            no_auto_anchor=not a["auto_anchor"])


register(Tool(
    name="memory_update", title="Update an entry", group="memory",
    description=("Change an entry: title, one content mode (content replaces, append, prepend, or find+replace with "
                 "replace_all or nth), category, tags (or add_tags/remove_tags), anchors, wake phrases, code refs, "
                 "resonance, private. A backup is kept (memory_restore undoes). Nothing changes when the values are "
                 "the same. Returns the list of changes."),
    params=(ID,
            Param("title", "string", "New title.", min_length=1, max_length=500),
            Param("content", "string", "New body (replaces).", max_length=1024 * 1024),
            Param("append", "string", "Text added at the end.", max_length=1024 * 1024),
            Param("prepend", "string", "Text added at the start.", max_length=1024 * 1024),
            Param("find", "string", "Text to replace (with replace).", max_length=100_000),
            Param("replace", "string", "Replacement of find.", max_length=1024 * 1024),
            Param("replace_all", "boolean", "Replace every match.", default=False),
            Param("nth", "integer", "Replace only the nth match.", minimum=1),
            Param("category", "string", "New category.", max_length=64),
            *_replace_add_remove("tags", "tags"),
            list_param("applicability", "New applicability (replace)."),
            Param("content_type", "string", "New body format.", max_length=64),
            Param("resonance", "integer", "New importance.", minimum=-100, maximum=100),
            Param("resonance_type", "string", "null clears.", enum=RESONANCE_TYPES, nullable=True),
            *_replace_add_remove("anchors", "anchors"),
            *_replace_add_remove("wake_phrases", "wake phrases"),
            Param("wake_order", "integer", "null clears.", nullable=True),
            *_replace_add_remove("code_refs", "code refs"),
            Param("private", "boolean", "true: private to you; false: public."),
            Param("session_id", "string", "Move to this session.", max_length=128),
            Param("force", "boolean", "Confirm making a bloom public.", default=False),
            Param("embed", "boolean", "Recompute its vector.", default=True),
            Param("auto_anchor", "boolean", "Link similar entries.", default=True)),
    handler=_memory_update, destructive=True, output_required=("id", "changes"),
    exclusive=(("content", "append", "prepend", "find"),),
))


def _memory_delete(ws: Any, a: dict[str, Any]) -> Any:
    return ws.memory.delete(a["id"], agent=a["agent_id"])


register(Tool(
    name="memory_delete", title="Delete an entry", group="memory",
    description=("Delete a memory entry with its tags, anchors and relationships. A backup is kept, so "
                 "memory_restore with the same id brings it back. Use for wrong or obsolete entries; prefer "
                 "memory_update to correct them."),
    params=(ID,), handler=_memory_delete, destructive=True, output_required=("deleted", "id"),
))


def _memory_restore(ws: Any, a: dict[str, Any]) -> Any:
    if a["list"]:
        rows = ws.memory.list_backups(a["id"], agent=a["agent_id"])
        return {"id": a["id"], "backups": [r.to_dict() for r in rows]}
    return ws.memory.restore(a["id"], agent=a["agent_id"], backup_id=a.get("backup_id"))


register(Tool(
    name="memory_restore", title="Restore an entry", group="memory",
    description=("Undo a change: restore an entry's newest backup (or backup_id) — title, body, tags, category, "
                 "wake phrases, code refs — even after memory_delete. list=true shows the backups first. The current "
                 "state is backed up too, so restoring twice undoes the restore."),
    params=(ID, Param("backup_id", "string", "Backup to restore (default newest).", max_length=64),
            Param("list", "boolean", "Only list the backups.", default=False)),
    handler=_memory_restore, output_required=("id",), shrinkable=("backups",),
))


# -- relationships and reinforcement ---------------------------------------------------------------------------------


def _memory_relate(ws: Any, a: dict[str, Any]) -> Any:
    return ws.memory.relate(a["from_id"], a["to_id"], a["type"], agent=a["agent_id"], reinforce=a["reinforce"])


register(Tool(
    name="memory_relate", title="Link two entries", group="memory",
    description=("Add a typed relationship from one entry to another (related, supersedes, extends, implements, "
                 "contradicts, example_of, extracted_from). The target gains +1 resonance (cap 10) unless "
                 "reinforce=false or the type is contradicts/supersedes. Existing links answer existing=true."),
    params=(Param("from_id", "string", "Entry the link starts at.", required=True, min_length=1,
                  max_length=200),
            Param("to_id", "string", "Entry the link points to.", required=True, min_length=1,
                  max_length=200),
            Param("type", "string", "Relationship type (memory_registries kind=relationship_types).", required=True,
                  min_length=1, max_length=64),
            Param("reinforce", "boolean", "Give the target +1 resonance.", default=True)),
    handler=_memory_relate, output_required=("id", "existing"),
))


def _memory_relationships(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    eid, rels = ws.memory.relationships(a["id"], agent=a["agent_id"])
    return {"id": eid, "relationships": [r.to_dict() for r in rels]}


register(Tool(
    name="memory_relationships", title="Links of an entry", group="memory",
    description=("List an entry's relationships in both directions (direction out or in), with the ids of the "
                 "linked entries. Use to follow a decision's history (supersedes, extends); memory_unrelate "
                 "removes a wrong link."),
    params=(ID,), handler=_memory_relationships, read_only=True, output_required=("relationships",),
    shrinkable=("relationships",),
))


def _memory_unrelate(ws: Any, a: dict[str, Any]) -> Any:
    return ws.memory.unrelate(a["relationship_id"], agent=a["agent_id"])


register(Tool(
    name="memory_unrelate", title="Remove a link", group="memory",
    description="Delete a relationship by its id (rel-…, from memory_relationships).",
    params=(Param("relationship_id", "string", "Id from memory_relationships.", required=True, min_length=1,
                  max_length=64),),
    handler=_memory_unrelate, destructive=True, output_required=("deleted", "id"),
))


def _memory_reinforce(ws: Any, a: dict[str, Any]) -> Any:
    if a["amount"] == 0:
        raise InvalidInputError("argument 'amount' must be a non-zero integer between -10 and 10",
                                details={"argument": "amount"})
    return ws.memory.reinforce(a["id"], agent=a["agent_id"], amount=a["amount"], cap=a["cap"])


register(Tool(
    name="memory_reinforce", title="Reinforce an entry", group="memory",
    description=("Raise (or lower, with a negative amount) an entry's resonance and reset its decay clock: use when "
                 "an entry proved useful. Never lowers an entry already above the cap."),
    params=(ID, Param("amount", "integer", "Change of resonance.", default=1, minimum=-10, maximum=10),
            Param("cap", "integer", "Resonance ceiling.", default=RESONANCE_CAP, minimum=1, maximum=100)),
    handler=_memory_reinforce, output_required=("id", "old_resonance", "new_resonance", "capped"),
))


# -- statistics, sessions, registries --------------------------------------------------------------------------------


def _memory_stats(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    m, agent = ws.memory, a["agent_id"]
    return {"stats": m.stats(agent=agent).to_dict(), "health": m.health(agent=agent).to_dict(),
            "growth": m.growth(agent=agent)}


register(Tool(
    name="memory_stats", title="Memory statistics", group="memory",
    description=("Counts of the entries you can see: per category (stats), embedding/anchor coverage and stale "
                 "high-resonance entries (health), and entries per week for 8 weeks (growth)."),
    params=(), handler=_memory_stats, read_only=True, output_required=("stats", "health", "growth"),
))


def _memory_open_threads(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    return {"threads": [t.to_dict() for t in ws.memory.open_threads(agent=a["agent_id"], limit=a["limit"])]}


register(Tool(
    name="memory_open_threads", title="Open threads", group="memory",
    description=("Open questions and commitments (thread entries not closed), most resonant first. Close one with "
                 "memory_add type=thread_closed thread_id=<id>."),
    params=(Param("limit", "integer", "Threads returned.", default=50, minimum=1, maximum=200),),
    handler=_memory_open_threads, read_only=True, output_required=("threads",), shrinkable=("threads",),
))


def _memory_sessions(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    m, action, agent = ws.memory, a["action"], a["agent_id"]

    def need(key: str) -> str:
        if not a.get(key):
            raise InvalidInputError(f"action '{action}' needs argument '{key}'", details={"argument": key})
        return a[key]
    if action == "list":
        return {"action": action, "sessions": [s.to_dict() for s in m.sessions(agent=agent,
                                                                                project=a.get("project"))]}
    if action == "create":
        return {"action": action, "session": m.create_session(session_type=a.get("session_type"),
                                                              project=a.get("project"),
                                                              session_id=a.get("session_id"), agent=agent).to_dict()}
    if action == "close":
        return {"action": action, "session": m.close_session(need("session_id")).to_dict()}
    if action == "facts":
        sid = need("session_id")
        return {"action": action, "session_id": sid, "facts": [f.to_dict() for f in m.for_session(sid, agent=agent)]}
    return {"action": action, **m.fact_session(need("fact_id"), agent=agent).to_dict()}


register(Tool(
    name="memory_sessions", title="Work sessions", group="memory",
    description=("Sessions group what you store during a task. action=create (optional session_id, session_type, "
                 "project) then pass session_id to memory_add; close; list; facts (entries of a session_id); "
                 "session_of (the session of fact_id)."),
    params=(Param("action", "string", "What to do.", required=True, enum=("list", "create", "close",
                  "facts", "session_of")),
            Param("session_id", "string", "Session to act on.", max_length=128),
            Param("fact_id", "string", "Fact for session_of.", max_length=200),
            Param("session_type", "string", "Type for create.", max_length=64),
            Param("project", "string", "Project for create.", max_length=128)),
    handler=_memory_sessions, output_required=("action",),
    shrinkable=("sessions", "facts"),
))


def _memory_registries(ws: Any, a: dict[str, Any]) -> dict[str, Any]:
    values = ws.memory.registry(a["kind"], agent=a["agent_id"], category=a.get("category"))
    return {"kind": a["kind"], "values": [v if isinstance(v, str) else v.to_dict() for v in values]}


register(Tool(
    name="memory_registries", title="Valid values", group="memory",
    description=("The valid values of a memory field: categories, relationship_types, fact_types, resonance_types, "
                 "source_types, entry_types, content_types, session_types, applicability, or the tags in use "
                 "(optionally of one category). Use before memory_add when unsure of a name."),
    params=(Param("kind", "string", "Which registry.", required=True, enum=REGISTRY_KINDS),
            Param("category", "string", "Tags of this category only (kind=tags).", max_length=64)),
    handler=_memory_registries, read_only=True, output_required=("kind", "values"), shrinkable=("values",),
))


MEMORY_TOOLS = tuple(n for n in TOOLS if n.startswith("memory_"))
