"""Markdown extractor (graph.md §8): one ``section`` definition per ATX heading, nested by level, plus the
mentions found in each section's text (``extra["mentions"]``: ``[owner, "path" | "name", token]``, owner -1 =
text before the first heading). Fenced code blocks are skipped (neither headings nor mentions)."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest.extract._common import (
    assign_ids,
    clean_name,
    empty_blob,
    first_paragraph,
    line_count,
    make_def,
    sha256,
)

EXTRACTOR_VERSION = 2
LANG = "markdown"

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICK = re.compile(r"(?<!`)`([^`\n]{1,200})`(?!`)")
_PATH = re.compile(
    r"(?<![\w/.\-])(?:\./)?((?:[\w\-.]+/)*[\w\-]+(?:\.[\w\-]+)*\.[A-Za-z0-9]{1,10})(?![\w/\-])"
)
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")


def _mentions(text: str, owner: int, out: list[list[Any]], seen: set[tuple[int, str, str]]) -> None:
    for m in _BACKTICK.finditer(text):
        tok = m.group(1).strip()
        tok = tok.removesuffix("()")
        if "/" in tok or ("." in tok and tok.rsplit(".", 1)[-1].lower() in _EXTS):
            key = (owner, "path", tok.lstrip("./") if tok.startswith("./") else tok)
        elif _NAME.fullmatch(tok):
            key = (owner, "name", tok.replace("::", "."))
        else:
            continue
        if key not in seen:
            seen.add(key)
            out.append(list(key))
    if "`" in text:
        text = _BACKTICK.sub(" ", text)
    if "/" in text or "." in text:
        for m in _PATH.finditer(text):
            tok = m.group(1)
            if "/" not in tok and tok.rsplit(".", 1)[-1].lower() not in _EXTS:
                continue
            key = (owner, "path", tok)
            if key not in seen:
                seen.add(key)
                out.append(list(key))


_EXTS = frozenset(
    {
        "py",
        "pyi",
        "js",
        "jsx",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "mts",
        "cts",
        "go",
        "rs",
        "java",
        "md",
        "markdown",
        "toml",
        "yaml",
        "yml",
        "json",
        "ini",
        "cfg",
        "c",
        "h",
        "cpp",
        "hpp",
        "cc",
        "rb",
        "php",
        "kt",
        "swift",
        "sh",
    }
)


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    blob = empty_blob(LANG, EXTRACTOR_VERSION, data, False)
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    n_lines = line_count(data)
    # pass 1: headings outside fenced code
    heads: list[tuple[int, int, str, str]] = []  # (line index, level, name, raw line)
    in_fence = ""
    for i, line in enumerate(lines):
        fm = _FENCE.match(line)
        if fm:
            tok = fm.group(1)
            if not in_fence:
                in_fence = tok[0] * 3
            elif tok.startswith(in_fence):
                in_fence = ""
            continue
        if in_fence or "#" not in line[:4]:
            continue
        hm = _HEADING.match(line)
        if hm is None:
            continue
        name = clean_name((hm.group(2) or "").strip())
        if not name:
            continue
        heads.append((i, len(hm.group(1)), name, line))

    defs: list[dict[str, Any]] = []
    stack: list[tuple[int, int]] = []  # (level, def index)
    for k, (i, level, name, raw) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else -1
        # a section ends before the next heading of the same or a higher level
        end = n_lines
        for j in range(k + 1, len(heads)):
            if heads[j][1] <= level:
                end = heads[j][0]  # 0-based index of that heading = 1-based line before it
                break
        end = max(end, i + 1)
        body = "\n".join(lines[i + 1 : end])
        span = "\n".join(lines[i:end]).encode("utf-8", "replace")
        d = make_def(
            "section", name, i + 1, end, raw.strip()[:200], _section_doc(body), sha256(span), level=level
        )
        d["parent"] = parent
        defs.append(d)
        stack.append((level, len(defs) - 1))
    assign_ids(defs)

    # pass 2: mentions per section (the text up to the next heading of any level belongs to the innermost one)
    mentions: list[list[Any]] = []
    seen: set[tuple[int, str, str]] = set()
    starts = [h[0] for h in heads] + [len(lines)]
    owner_ranges = [(-1, 0, starts[0])] + [(k, starts[k] + 1, starts[k + 1]) for k in range(len(heads))]
    for owner, lo, hi in owner_ranges:
        in_fence = ""
        chunk: list[str] = []
        for line in lines[lo:hi]:
            fm = _FENCE.match(line)
            if fm:
                tok = fm.group(1)
                if not in_fence:
                    in_fence = tok[0] * 3
                elif tok.startswith(in_fence):
                    in_fence = ""
                continue
            if not in_fence:
                chunk.append(line)
        if owner >= 0:
            chunk.append(heads[owner][2])
        _mentions("\n".join(chunk), owner, mentions, seen)

    blob["definitions"] = defs
    blob["extra"]["mentions"] = mentions
    if heads:
        blob["doc"] = heads[0][2][:300]
    return blob


def _section_doc(body: str) -> str:
    out: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            if out:
                break
            continue
        if in_fence:
            continue
        if not line.strip():
            if out:
                break
            continue
        out.append(line)
    return first_paragraph("\n".join(out))
