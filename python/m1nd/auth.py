"""Bearer tokens for the shared HTTP runtime (issue 18, item 4): issue, list, revoke, verify.

Beyond loopback, ``m1nd serve --http`` answers only requests carrying ``Authorization: Bearer <token>``; each token
is bound to one agent identity, which every call of that connection acts as. Tokens are created by ``m1nd token
create`` on the serving machine and handed to the agent's host; the store keeps their digests only
(:mod:`m1nd.store.token_repo`). A revoked or expired token stops working on its next request: the server checks
every request, not just the first.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.store.token_repo import TokenRepository, TokenRow
from m1nd.timeutil import MS_PER_DAY, now_ms

PREFIX = "m1nd_"
_TOKEN_RE = re.compile(r"^m1nd_([0-9a-f]{8})_([A-Za-z0-9_-]{43})$")
MAX_NOTE = 200
MAX_EXPIRY_DAYS = 3650


def tokens_db_path(home: Path) -> Path:
    return home / "tokens.db"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """What may be shown of a token (never the secret)."""

    id: str
    agent: str
    note: str | None
    created_ms: int
    expires_ms: int | None
    revoked_ms: int | None

    def state(self, now_ms: int) -> str:
        if self.revoked_ms is not None:
            return "revoked"
        if self.expires_ms is not None and self.expires_ms <= now_ms:
            return "expired"
        return "active"

    def to_dict(self, now_ms: int) -> dict[str, object]:
        return {"id": self.id, "agent": self.agent, "note": self.note, "state": self.state(now_ms),
                "created_ms": self.created_ms, "expires_ms": self.expires_ms, "revoked_ms": self.revoked_ms}

    @classmethod
    def of(cls, row: TokenRow) -> TokenInfo:
        return cls(row.id, row.agent, row.note, row.created_ms, row.expires_ms, row.revoked_ms)


class TokenService:
    """Tokens of one home. ``clock`` (milliseconds) is injectable for tests of expiry."""

    def __init__(self, home: Path, *, busy_timeout_ms: int = 10000,
                 clock: Callable[[], int] = now_ms) -> None:
        self.repo = TokenRepository(tokens_db_path(home), busy_timeout_ms=busy_timeout_ms)
        self.clock = clock

    def create(self, agent: str, *, note: str | None = None, expires_days: float | None = None
               ) -> tuple[str, TokenInfo]:
        """A new token for ``agent`` (already validated by the caller as an agent id): ``(secret, info)``."""
        if note is not None and len(note) > MAX_NOTE:
            raise InvalidInputError(f"--note is {len(note)} characters; at most {MAX_NOTE}",
                                    recover="shorten the note")
        if expires_days is not None and not (0 < expires_days <= MAX_EXPIRY_DAYS):
            raise InvalidInputError(f"--expires-days must be in (0, {MAX_EXPIRY_DAYS}] (got {expires_days:g})",
                                    recover="pass a number of days such as 90, or omit it for no expiry")
        now = self.clock()
        expires = now + int(expires_days * MS_PER_DAY) if expires_days is not None else None
        while True:
            token_id = secrets.token_hex(4)
            secret = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
            row = TokenRow(token_id, _digest(secret), agent, note, now, expires, None)
            if self.repo.insert(row):
                return secret, TokenInfo.of(row)

    def list(self) -> Sequence[TokenInfo]:
        return [TokenInfo.of(r) for r in self.repo.all()]

    def revoke(self, token_id: str) -> TokenInfo:
        row = self.repo.revoke(token_id.strip(), self.clock())
        if row is None:
            raise NotFoundError(f"no token with id {token_id!r}", recover="run 'm1nd token list' to see the ids")
        return TokenInfo.of(row)

    def usable(self) -> int:
        """How many tokens would be accepted now."""
        return self.repo.count_usable(self.clock())

    def verify(self, token: str) -> str | None:
        """The agent ``token`` acts as, or None when it is malformed, unknown, revoked or expired."""
        m = _TOKEN_RE.match(token.strip())
        if m is None:
            return None
        row = self.repo.get(m.group(1))
        if row is None or not hmac.compare_digest(row.digest, _digest(token.strip())):
            return None
        if TokenInfo.of(row).state(self.clock()) != "active":
            return None
        return row.agent

    def close(self) -> None:
        self.repo.close()
