"""``m1nd memory update``, ``edit``, ``append``, ``prepend``, ``restore`` and ``delete``: changing an entry
(each change keeps a backup that ``restore`` brings back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from m1nd.cli.memory.common import (acting_agent, emit_json, exclusive, handled, json_option, memory_group,
                                    note, open_service, out, read_stdin_or, usage)
from m1nd.tools.memory_ops import embed_deferred_note


@memory_group.command("update")
@click.argument("entry_id")
@click.option("-t", "--title")
@click.option("--content", help="Replace the content.")
@click.option("-f", "--file", "file", help="Replace the content from a file.")
@click.option("--append-content")
@click.option("--append-file")
@click.option("--prepend-content")
@click.option("--prepend-file")
@click.option("--find")
@click.option("--replace")
@click.option("--replace-all", is_flag=True)
@click.option("--nth", type=int)
@click.option("--category")
@click.option("--tags", help="Replace all tags (comma-separated).")
@click.option("--add-tag")
@click.option("--remove-tag")
@click.option("-a", "--applicability", help="Replace applicability (comma-separated).")
@click.option("--content-type")
@click.option("--resonance", type=int)
@click.option("--resonance-type", help="New resonance type ('-' clears).")
@click.option("--anchors", help="Replace all anchors (comma-separated ids).")
@click.option("--add-anchor")
@click.option("--remove-anchor")
@click.option("--wake-phrase")
@click.option("--wake-phrases")
@click.option("--add-wake-phrase")
@click.option("--remove-wake-phrase")
@click.option("--wake-order", help="Number, or '-' to clear.")
@click.option("--code-refs", help="Replace all code refs (comma-separated).")
@click.option("--add-code-ref")
@click.option("--remove-code-ref")
@click.option("--private", is_flag=True, default=None)
@click.option("--visibility")
@click.option("--owner")
@click.option("--session-id")
@click.option("--force", is_flag=True, help="Confirm a dangerous visibility change.")
@click.option("--no-auto-anchor", is_flag=True)
@click.option("--no-embed", is_flag=True)
@json_option
@handled
def update_cmd(entry_id: str, as_json: bool, no_auto_anchor: bool, no_embed: bool, **kw: Any) -> None:
    """Update an entry: content (one mode) and any metadata. The id never changes."""
    from m1nd.tools.memory_ops import read_content_file

    modes = {"--content": kw["content"], "--file": kw["file"], "--append-content": kw["append_content"],
             "--append-file": kw["append_file"], "--prepend-content": kw["prepend_content"],
             "--prepend-file": kw["prepend_file"], "--find": kw["find"]}
    exclusive(**modes)
    if (kw["find"] is None) != (kw["replace"] is None):
        usage("--find and --replace must be given together")
    if (kw["replace_all"] or kw["nth"] is not None) and kw["find"] is None:
        usage("--replace-all and --nth need --find")
    exclusive(**{"--replace-all": kw["replace_all"], "--nth": kw["nth"]})
    exclusive(**{"--private": kw["private"], "--visibility": kw["visibility"]})
    if kw["wake_order"] is not None and kw["wake_order"] != "-":
        try:
            int(kw["wake_order"])
        except ValueError:
            from m1nd.errors import InvalidInputError
            raise InvalidInputError(f"Invalid wake_order value '{kw['wake_order']}' (use number or '-' to clear)") \
                from None
    ch: dict[str, Any] = {
        "title": kw["title"], "category": kw["category"], "tags": kw["tags"], "add_tags": kw["add_tag"],
        "remove_tags": kw["remove_tag"], "applicability": kw["applicability"], "content_type": kw["content_type"],
        "resonance": kw["resonance"], "anchors": kw["anchors"], "add_anchors": kw["add_anchor"],
        "remove_anchors": kw["remove_anchor"], "wake_phrases": kw["wake_phrases"],
        "code_refs": kw["code_refs"], "add_code_refs": kw["add_code_ref"], "remove_code_refs": kw["remove_code_ref"],
        "private": kw["private"], "visibility": kw["visibility"], "owner": kw["owner"],
        "session_id": kw["session_id"], "force": kw["force"], "find": kw["find"], "replace": kw["replace"],
        "replace_all": kw["replace_all"], "nth": kw["nth"],
    }
    if kw["wake_phrase"] is not None:
        ch["wake_phrase"] = kw["wake_phrase"]
    if kw["add_wake_phrase"] is not None:
        ch["add_wake_phrases"] = kw["add_wake_phrase"]
    if kw["remove_wake_phrase"] is not None:
        ch["remove_wake_phrases"] = kw["remove_wake_phrase"]
    if kw["resonance_type"] is not None:
        ch["resonance_type"] = kw["resonance_type"]
    if kw["wake_order"] is not None:
        ch["wake_order"] = kw["wake_order"]
    if kw["content"] is not None:
        ch["content"] = kw["content"]
    elif kw["file"] is not None:
        ch["content"], ch["content_source"] = read_content_file(kw["file"]), "from file"
    elif kw["append_content"] is not None or kw["append_file"] is not None:
        ch["append"] = kw["append_content"] if kw["append_content"] is not None else read_content_file(
            kw["append_file"])
    elif kw["prepend_content"] is not None or kw["prepend_file"] is not None:
        ch["prepend"] = kw["prepend_content"] if kw["prepend_content"] is not None else read_content_file(
            kw["prepend_file"])
    res = open_service().update(entry_id, ch, agent=acting_agent(), no_embed=no_embed,
                                no_auto_anchor=no_auto_anchor)
    if res.embed_deferred:
        note(embed_deferred_note(res.id, res.embed_deferred))
    if as_json:
        emit_json({"id": res.id, "changes": res.changes})
    elif not res.changes:
        out("  No changes specified")
    else:
        out(f"Updated entry: {res.id}")
        for c in res.changes:
            out(f"  {c}")


@memory_group.command("edit")
@click.argument("entry_id")
@click.option("--find", "--old", "find", help="Text to find.")
@click.option("--replace", "--new", "replace", help="Replacement text.")
@click.option("--replace-all", is_flag=True)
@click.option("--nth", type=int, help="Replace only the Nth occurrence (1-based).")
@click.option("--no-auto-anchor", is_flag=True)
@click.option("--no-embed", is_flag=True)
@json_option
@handled
def edit_cmd(entry_id: str, find: str | None, replace: str | None, replace_all: bool, nth: int | None,
             no_auto_anchor: bool, no_embed: bool, as_json: bool) -> None:
    """Find and replace in an entry's content."""
    if find is None:
        usage("Missing option '--find' / '--old'")
    if replace is None:
        usage("Missing option '--replace' / '--new'")
    exclusive(**{"--replace-all": replace_all, "--nth": nth})
    change = {"find": find, "replace": replace, "replace_all": replace_all, "nth": nth}
    res = open_service().update(entry_id, change, agent=acting_agent(), operation="edit", no_embed=no_embed,
                                no_auto_anchor=no_auto_anchor)
    if as_json:
        emit_json({"id": res.id, "replacements": res.replacements})
    else:
        out(f"Edited entry: {res.id}")
        out(f"  {res.replacements} replacement(s)")


def _append_like(op: str) -> Callable[..., None]:
    @click.argument("entry_id")
    @click.option("--content", help="Text to add (stdin when neither --content nor --file).")
    @click.option("-f", "--file", "--content-file", "file", help="Read the text from a file.")
    @click.option("--no-auto-anchor", is_flag=True)
    @click.option("--no-embed", is_flag=True)
    @json_option
    @handled
    def cmd(entry_id: str, content: str | None, file: str | None, no_auto_anchor: bool, no_embed: bool,
            as_json: bool) -> None:
        exclusive(**{"--content": content, "--file": file})
        text = read_stdin_or(content, file)
        res = open_service().update(entry_id, {op: text}, agent=acting_agent(), operation=op,
                                    no_embed=no_embed, no_auto_anchor=no_auto_anchor)
        if as_json:
            emit_json({"id": res.id, "bytes_added": res.bytes_added})
        else:
            out(f"{'Appended to' if op == 'append' else 'Prepended to'} entry: {res.id}")
            out(f"  {res.bytes_added} bytes added")
    cmd.__doc__ = f"{op.capitalize()} text to an entry's content (joined with a newline)."
    return cmd


memory_group.command("append")(_append_like("append"))
memory_group.command("prepend")(_append_like("prepend"))


@memory_group.command("restore")
@click.argument("entry_id")
@click.option("--list", "list_", is_flag=True, help="List the backups instead of restoring.")
@click.option("--backup", "backup_id", help="Restore this backup (default: the newest).")
@click.option("--no-auto-anchor", is_flag=True)
@click.option("--no-embed", is_flag=True)
@json_option
@handled
def restore_cmd(entry_id: str, list_: bool, backup_id: str | None, no_auto_anchor: bool, no_embed: bool,
                as_json: bool) -> None:
    """Restore an entry from a backup (works after delete), or list its backups."""
    from m1nd.tools.memory_ops import normalize_entry_id

    svc = open_service()
    if list_:
        rows = svc.list_backups(entry_id, agent=acting_agent())
        if as_json:
            emit_json([r.to_dict() for r in rows])
            return
        eid = normalize_entry_id(entry_id)
        if not rows:
            out(f"No backups found for {eid}")
            return
        out(f"Backups for {rows[0].entry_id}:")
        for r in rows:
            out(f"  {r.id} | {r.created_at} | {r.operation} | {len(r.body.encode('utf-8'))} bytes")
        return
    res = svc.restore(entry_id, agent=acting_agent(), backup_id=backup_id, no_embed=no_embed,
                      no_auto_anchor=no_auto_anchor)
    if res.embed_deferred:
        note(embed_deferred_note(res.id, res.embed_deferred))
    if as_json:
        emit_json(res.to_dict())
    else:
        out(f"Restored entry: {res.id}")
        out(f"  from backup: {res.from_backup}")
        out(f"  backup created: {res.backup_created}")
        out(f"  original operation: {res.operation}")


@memory_group.command("delete")
@click.argument("entry_id")
@json_option
@handled
def delete_cmd(entry_id: str, as_json: bool) -> None:
    """Delete an entry (a backup is kept; restore brings it back)."""
    res = open_service().delete(entry_id, agent=acting_agent())
    if as_json:
        emit_json(res.to_dict())
    else:
        out(f"Deleted entry '{res.id}'")
