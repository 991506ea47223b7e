"""Identifiers of the knowledge memory (spec memory.md §4).

Entry ids are ``kn-`` + 16 lowercase hex digits from the operating system's CSPRNG (64 bits): never derived from the
title, so adding an entry twice can never overwrite the first. Imported legacy ids (``kn-`` + 8 hex, or anything
matching :data:`LEGACY_ID`) are kept as they are.
"""

from __future__ import annotations

import re
import secrets

from m1nd.errors import InvalidInputError

ENTRY_PREFIX = "kn-"
_HEX = re.compile(r"^[0-9a-f]+$")
# What an imported (seeded) id may look like: kn- followed by a conservative character set.
LEGACY_ID = re.compile(r"^kn-[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
MIN_PREFIX_HEX = 8


def new_entry_id() -> str:
    return ENTRY_PREFIX + secrets.token_hex(8)


def new_relationship_id() -> str:
    return "rel-" + secrets.token_hex(6)


def new_backup_id() -> str:
    return "bk-" + secrets.token_hex(6)


def new_session_id() -> str:
    return "ses-" + secrets.token_hex(6)


def normalize_entry_id(raw: str) -> str:
    """Trim, lowercase the ``kn-`` prefix and add it when missing. Raises on an empty or malformed id."""
    s = (raw or "").strip()
    if not s:
        raise InvalidInputError("entry id must not be empty", recover="pass an id such as kn-1a2b3c4d5e6f7a8b")
    if s[:3].lower() == ENTRY_PREFIX:
        s = ENTRY_PREFIX + s[3:]
    else:
        s = ENTRY_PREFIX + s
    if not LEGACY_ID.match(s):
        raise InvalidInputError(f"invalid entry id '{raw}'", recover="entry ids look like kn-1a2b3c4d5e6f7a8b")
    return s


def prefix_candidate(entry_id: str) -> str | None:
    """The hex part of a normalised id when it is long enough to be used as a unique prefix, else None."""
    rest = entry_id[len(ENTRY_PREFIX):].lower()
    if len(rest) >= MIN_PREFIX_HEX and _HEX.match(rest) and len(rest) < 16:
        return ENTRY_PREFIX + rest
    return None


def check_session_id(raw: str) -> str:
    s = (raw or "").strip()
    if not SESSION_ID.match(s):
        raise InvalidInputError(f"invalid session id '{raw}' (letters, digits, '.', '_', ':', '-'; at most 128 "
                                "characters, starting with a letter or digit)")
    return s
