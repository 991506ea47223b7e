"""``m1nd token create|list|revoke``: bearer tokens of the shared HTTP runtime (issue 18, item 4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

import click

T = TypeVar("T")


def _with_tokens(as_json: bool, work: Callable[[Any], T]) -> tuple[T, int]:
    """``work(service)`` on this home's tokens and the time it ran (ms); a service error exits the CLI way."""
    from m1nd.auth import TokenService
    from m1nd.cli.app import fail
    from m1nd.errors import M1ndError

    obj = click.get_current_context().find_root().obj
    try:
        svc = TokenService(obj.settings.home, busy_timeout_ms=obj.settings.busy_timeout_ms)
        try:
            return work(svc), svc.clock()
        finally:
            svc.close()
    except M1ndError as e:
        fail(e, as_json=as_json)
        raise  # fail() exits; this line only satisfies the type checker


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@click.group("token")
def token_group() -> None:
    """Bearer tokens for `m1nd serve --http` beyond loopback: each acts as one agent; stored hashed."""


@token_group.command("create")
@click.argument("agent")
@click.option("--note", default=None, help="What the token is for (shown by 'token list').")
@click.option("--expires-days", type=float, default=None, help="Stop accepting the token after this many days.")
@click.option("--json", "as_json", is_flag=True, help="Print the token and its record as JSON.")
def create_cmd(agent: str, note: str | None, expires_days: float | None, as_json: bool) -> None:
    """Issue a token for AGENT, the identity every call made with it acts as. The token is printed once: put it in
    the agent host's configuration."""
    from m1nd.cli.app import fail
    from m1nd.errors import M1ndError
    from m1nd.tools.registry import check_agent

    try:
        check_agent(agent, "AGENT")
    except M1ndError as e:
        fail(e, as_json=as_json)
    (secret, info), now = _with_tokens(as_json, lambda svc: svc.create(agent, note=note, expires_days=expires_days))
    if as_json:
        click.echo(json.dumps({"token": secret, **info.to_dict(now)}, indent=2, ensure_ascii=False))
        return
    click.echo(secret)
    click.echo(f"token {info.id} for agent '{info.agent}', expires {_when(info.expires_ms)}. It is shown only "
               "now; send it as 'Authorization: Bearer <token>'.", err=True)


@token_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the tokens as JSON.")
def list_cmd(as_json: bool) -> None:
    """The tokens issued in this home (ids, agents, states; never the secrets)."""
    tokens, now = _with_tokens(as_json, lambda svc: svc.list())
    if as_json:
        click.echo(json.dumps({"tokens": [t.to_dict(now) for t in tokens]}, indent=2, ensure_ascii=False))
        return
    if not tokens:
        click.echo("no tokens; create one with: m1nd token create AGENT")
        return
    for t in tokens:
        click.echo(f"{t.id}  {t.state(now):8s}  {t.agent:24s}  created {_when(t.created_ms)}  expires "
                   f"{_when(t.expires_ms)}{'  ' + t.note if t.note else ''}")


@token_group.command("revoke")
@click.argument("token_id")
@click.option("--json", "as_json", is_flag=True, help="Print the revoked token's record as JSON.")
def revoke_cmd(token_id: str, as_json: bool) -> None:
    """Revoke TOKEN_ID (from 'token list'): the server refuses it from its next request on."""
    info, now = _with_tokens(as_json, lambda svc: svc.revoke(token_id))
    if as_json:
        click.echo(json.dumps(info.to_dict(now), indent=2, ensure_ascii=False))
    else:
        click.echo(f"token {info.id} (agent '{info.agent}') revoked")


def register(cli: click.Group) -> None:
    cli.add_command(token_group)
