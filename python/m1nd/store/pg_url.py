"""Server-store addresses without importing the driver: choosing the backend must not load psycopg."""

from __future__ import annotations

import re


def is_postgres_url(url: str | None) -> bool:
    return url is not None and url.split("://", 1)[0].lower() in ("postgresql", "postgres")


def redact(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)
