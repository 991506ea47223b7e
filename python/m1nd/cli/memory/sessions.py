"""``m1nd memory sessions`` (work sessions that group entries), ``for-session`` and ``fact-session``."""

from __future__ import annotations


import click

from m1nd.cli.memory.common import (acting_agent, emit_json, handled, json_option, memory_group, open_service,
                                    out, preview)


@memory_group.group("sessions")
def sessions_group() -> None:
    """Work sessions that group entries."""


@sessions_group.command("list", help='List work sessions.')
@click.option("--project")
@json_option
@handled
def sessions_list_cmd(project: str | None, as_json: bool) -> None:
    rows = open_service().sessions(agent=acting_agent(), project=project)
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        out("No sessions found")
        return
    for r in rows:
        out(f"  {r.id} [{r.session_type}] started {r.started_at} ended {r.ended_at or '-'}")


@sessions_group.command("create", help='Create a work session.')
@click.option("--session-type")
@click.option("--project")
@click.option("--id", "sid")
@json_option
@handled
def sessions_create_cmd(session_type: str | None, project: str | None, sid: str | None, as_json: bool) -> None:
    r = open_service().create_session(session_type=session_type, project=project, session_id=sid,
                                      agent=acting_agent())
    if as_json:
        emit_json(r.to_dict())
    else:
        out(f"Created session: {r.id}")


@sessions_group.command("close", help='Close a work session (sets its end time).')
@click.option("--id", "sid", required=True)
@json_option
@handled
def sessions_close_cmd(sid: str, as_json: bool) -> None:
    r = open_service().close_session(sid)
    if as_json:
        emit_json(r.to_dict())
    else:
        out(f"Closed session: {r.id}")


@memory_group.command("for-session")
@click.argument("session_id")
@json_option
@handled
def for_session_cmd(session_id: str, as_json: bool) -> None:
    """Facts recorded in a session."""
    rows = open_service().for_session(session_id, agent=acting_agent())
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        out(f"No facts found for session: {session_id}")
        return
    out(f"Facts for session {session_id}:")
    for r in rows:
        out(f"[{r.created_at[:10]}] {r.type or 'unknown'}: {preview(r.content, 60)} ({r.id}, "
            f"resonance {r.resonance})")


@memory_group.command("fact-session")
@click.argument("fact_id")
@json_option
@handled
def fact_session_cmd(fact_id: str, as_json: bool) -> None:
    """The session a fact was recorded in."""
    r = open_service().fact_session(fact_id, agent=acting_agent())
    if as_json:
        emit_json(r.to_dict())
    elif r.session_id:
        out(f"Fact {r.fact_id} was extracted from session: {r.session_id}")
    else:
        out(f"No session found for fact: {r.fact_id}")
