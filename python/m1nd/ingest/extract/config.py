"""Config files (graph.md §8): a file node only. A few files feed module resolution (§7) and are parsed here:
``go.mod`` (``module`` path), ``Cargo.toml`` (package name, lib / bin paths, workspace members) and
``tsconfig.json`` / ``jsconfig.json`` (``compilerOptions.baseUrl`` and ``paths``; comments and trailing commas
tolerated)."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from m1nd.ingest.extract._common import empty_blob

EXTRACTOR_VERSION = 2
LANG = "config"

_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.MULTILINE)


def strip_jsonc(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments (outside strings) and trailing commas from JSON-with-comments."""
    out: list[str] = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
            i += 1
            continue
        if c == '"':
            in_str = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j == -1 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j == -1 else j + 2
        else:
            out.append(c)
            i += 1
    s = "".join(out)
    return re.sub(r",(\s*[}\]])", r"\1", s)


def _tsconfig(text: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(strip_jsonc(text))
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    co = doc.get("compilerOptions")
    out: dict[str, Any] = {}
    if isinstance(doc.get("extends"), str):
        out["extends"] = doc["extends"]
    if isinstance(co, dict):
        if isinstance(co.get("baseUrl"), str):
            out["baseUrl"] = co["baseUrl"]
        paths = co.get("paths")
        if isinstance(paths, dict):
            out["paths"] = {
                str(k): [str(x) for x in v if isinstance(x, str)]
                for k, v in sorted(paths.items())
                if isinstance(v, list)
            }
    return out


def _cargo(text: str) -> dict[str, Any] | None:
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    out: dict[str, Any] = {}
    pkg = doc.get("package")
    if isinstance(pkg, dict) and isinstance(pkg.get("name"), str):
        out["name"] = pkg["name"]
    lib = doc.get("lib")
    if isinstance(lib, dict):
        if isinstance(lib.get("path"), str):
            out["lib_path"] = lib["path"]
        if isinstance(lib.get("name"), str):
            out["lib_name"] = lib["name"]
    ws = doc.get("workspace")
    if isinstance(ws, dict) and isinstance(ws.get("members"), list):
        out["members"] = [m for m in ws["members"] if isinstance(m, str)]
    return out


def extract(relpath: str, data: bytes) -> dict[str, Any]:
    blob = empty_blob(LANG, EXTRACTOR_VERSION, data, False)
    base = relpath.rsplit("/", 1)[-1]
    if base == "go.mod":
        m = _GO_MODULE.search(data.decode("utf-8", "replace"))
        if m:
            blob["extra"]["go_module"] = m.group(1)
    elif base == "Cargo.toml":
        got = _cargo(data.decode("utf-8", "replace"))
        if got is None:
            blob["parse_error"] = "invalid TOML"
        elif got:
            blob["extra"]["cargo"] = got
    elif base in ("tsconfig.json", "jsconfig.json"):
        got = _tsconfig(data.decode("utf-8", "replace"))
        if got:
            blob["extra"]["tsconfig"] = got
    return blob
