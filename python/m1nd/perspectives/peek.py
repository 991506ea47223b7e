"""Reading a route target's code safely (perspectives.md §6 ``perspective_peek``) and provenance staleness.

Only files inside the node's own ingested root are ever opened:

1. the node needs a source path and a line span (directories have no content);
2. a relpath that is absolute, has a ``..`` segment, a backslash or a NUL is refused before touching the disk;
3. ``realpath(root / relpath)`` must stay inside ``realpath(root)`` — this catches symlinked files and directories
   that point elsewhere;
4. the file is opened with ``O_NOFOLLOW`` and checked with ``fstat``: a regular file, at most 10 MiB, the same inode
   as the resolved path (no swap between check and open), no NUL byte in its first 8 KiB.
"""

from __future__ import annotations

import errno
import os
import stat as st
from dataclasses import dataclass
from typing import Any

from m1nd.errors import M1ndError, NotFoundError, RefusedError

MAX_FILE_BYTES = 10 * 1024 * 1024
BINARY_PROBE = 8192


@dataclass(frozen=True)
class RootInfo:
    id: int
    path: str
    namespace: str | None


def not_peekable(msg: str) -> M1ndError:
    return M1ndError(msg, code="not_peekable",
                     recover="peek a file, symbol or section route instead (see perspective_routes)")


def denied(relpath: str, why: str) -> RefusedError:
    return RefusedError(f"refusing to read '{relpath}': {why}", code="path_denied",
                        recover="peek only reads files inside the ingested roots; pick another route",
                        details={"source_path": relpath})


def check_relpath(relpath: str) -> None:
    if not relpath:
        raise not_peekable("this node has no source file")
    if "\0" in relpath or "\\" in relpath:
        raise denied(relpath.replace("\0", "\\0"), "NUL bytes and backslashes are not allowed in a source path")
    if relpath.startswith("/") or os.path.isabs(relpath):
        raise denied(relpath, "absolute paths are not allowed")
    if any(seg == ".." for seg in relpath.split("/")):
        raise denied(relpath, "'..' segments are not allowed")


def resolve_inside(root: str, relpath: str) -> str:
    """Real path of ``root/relpath``; refused unless it stays inside the root's real path."""
    check_relpath(relpath)
    root_real = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root_real, relpath))
    if os.path.commonpath([real, root_real]) != root_real:
        raise denied(relpath, "it resolves outside the ingested root")
    return real


def file_stale(real: str, recorded: tuple[Any, ...] | None) -> bool:
    """True when the file's size or mtime differs from what ingest recorded (or it is gone / unrecorded)."""
    if recorded is None:
        return True
    size, mtime_ns = recorded[0], recorded[1]
    try:
        s = os.stat(real)
    except OSError:
        return True
    return (size is not None and int(size) != s.st_size) or (mtime_ns is not None and int(mtime_ns) != s.st_mtime_ns)


def read_file(real: str, relpath: str) -> tuple[str, bool]:
    """Text of a regular file inside a root (checked by :func:`resolve_inside`), and whether decoding replaced."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise NotFoundError(f"'{relpath}' no longer exists; re-ingest",
                            recover="call ingest to refresh the graph, then perspective_routes") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise denied(relpath, "it is a symbolic link") from None
        if e.errno in (errno.EISDIR,):
            raise not_peekable("directories have no content; follow a file or symbol route") from None
        raise denied(relpath, f"it cannot be opened ({e.strerror})") from None
    try:
        fs = os.fstat(fd)
        if st.S_ISDIR(fs.st_mode):
            raise not_peekable("directories have no content; follow a file or symbol route")
        if not st.S_ISREG(fs.st_mode):
            raise not_peekable("not a regular file")
        if fs.st_size > MAX_FILE_BYTES:
            raise not_peekable(f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        try:
            ps = os.stat(real)
        except FileNotFoundError:
            raise NotFoundError(f"'{relpath}' no longer exists; re-ingest") from None
        if (ps.st_ino, ps.st_dev) != (fs.st_ino, fs.st_dev):
            raise denied(relpath, "it changed while being opened")
        chunks = []
        remaining = MAX_FILE_BYTES + 1
        while remaining > 0:
            b = os.read(fd, min(1 << 20, remaining))
            if not b:
                break
            chunks.append(b)
            remaining -= len(b)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise not_peekable(f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    if b"\0" in data[:BINARY_PROBE]:
        raise not_peekable("binary file")
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True


def excerpt(text: str, *, is_file: bool, line_start: int, line_end: int, max_lines: int, max_chars: int,
            context: int) -> dict[str, Any]:
    """Cut the window of perspectives.md §6 step 5 out of ``text``."""
    lines = text.splitlines()
    n = len(lines)
    if is_file:
        lo, hi = 1, min(n, max_lines)
        truncated = n > max_lines
        span = n
    else:
        span = max(1, line_end - line_start + 1)
        lo = max(1, line_start - context)
        hi = min(line_end, line_start + max_lines - 1) + context
        hi = min(n, hi)
        truncated = line_end > line_start + max_lines - 1
    if n == 0 or lo > n:
        return {"excerpt": "", "line_start": lo, "line_end": lo - 1, "truncated": truncated, "span_lines": span}
    body = "\n".join(lines[lo - 1:hi])
    if len(body) > max_chars:
        cut = body.rfind("\n", 0, max_chars - 2)
        if cut <= 0:
            cut = max_chars - 2
        body = body[:cut]
        hi = lo + body.count("\n")
        body += "\n…"
        truncated = True
    return {"excerpt": body, "line_start": lo, "line_end": hi, "truncated": truncated, "span_lines": span}
