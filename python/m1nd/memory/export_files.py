"""Writing exported entries (``m1nd memory export``), as :meth:`~m1nd.memory.service.MemoryService.export_entries`
gives them: one markdown file per entry under ``<root>/<category>/<slug>.md`` (front matter with JSON values, then
the body), JSON lines, or CSV (the listing columns, tags and applicability joined by ``;``)."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

FORMATS = ("md", "jsonl", "csv")
PROGRESS_EVERY = 10000  # entries between two progress reports of a long export
CSV_COLUMNS = ["id", "category_id", "title", "tags", "applicability", "source_project_id", "created_at",
               "updated_at"]


def slugify(title: str) -> str:
    """A file name from a title: lower-case letters and digits, ``-`` for spaces, dashes and underscores, ``_`` for
    anything else; ``entry`` when nothing is left."""
    s = []
    for ch in title.lower():
        if ("a" <= ch <= "z") or ("0" <= ch <= "9"):
            s.append(ch)
        elif ch in " -_":
            s.append("-")
        else:
            s.append("_")
    slug = re.sub(r"-{2,}", "-", "".join(s)).strip("-")
    return slug or "entry"


def _report(progress: Callable[[int], None] | None, n: int) -> None:
    if progress is not None and n % PROGRESS_EVERY == 0:
        progress(n)


def write_markdown(entries: Iterable[dict[str, Any]], root: Path,
                   progress: Callable[[int], None] | None = None) -> int:
    """One file per entry; a name already used (in this export or on disk) gets ``-1``, ``-2``… Returns the
    count."""
    used: set[Path] = set()
    n = 0
    for e in entries:
        d = root / e["category_id"]
        d.mkdir(parents=True, exist_ok=True)
        base = slugify(e["title"])
        p, k = d / f"{base}.md", 0
        while p in used or p.exists():
            k += 1
            p = d / f"{base}-{k}.md"
        used.add(p)
        fm = {"id": e["id"], "title": e["title"], "category": e["category_id"], "tags": e["tags"],
              "applicability": e["applicability"], "created": e["created_at"], "updated": e["updated_at"],
              "source_project": e["source_project_id"], "source_agent": e["source_agent_id"],
              "resonance": e["resonance"], "resonance_type": e["resonance_type"], "wake_phrases": e["wake_phrases"]}
        lines = ["---"] + [f"{key}: {json.dumps(v, ensure_ascii=False)}" for key, v in fm.items()] + ["---", "",
                                                                                                        e["body"]]
        p.write_text("\n".join(lines) + ("\n" if not e["body"].endswith("\n") else ""), encoding="utf-8")
        n += 1
        _report(progress, n)
    return n


def write_jsonl(entries: Iterable[dict[str, Any]], stream: TextIO,
                progress: Callable[[int], None] | None = None) -> int:
    """One JSON object per line. Returns the count."""
    n = 0
    for e in entries:
        stream.write(json.dumps(e, ensure_ascii=False) + "\n")
        n += 1
        _report(progress, n)
    return n


def write_csv(entries: Iterable[dict[str, Any]], stream: TextIO) -> int:
    """A header row, then one row per entry (CRLF line ends, as CSV has them). Returns the count."""
    w = csv.writer(stream, lineterminator="\r\n")
    w.writerow(CSV_COLUMNS)
    n = 0
    for e in entries:
        w.writerow([e["id"], e["category_id"], e["title"], ";".join(e["tags"]), ";".join(e["applicability"]),
                    e["source_project_id"] or "", e["created_at"], e["updated_at"]])
        n += 1
    return n
