"""Fit a tool result into ``max_output_chars`` (spec mcp.md §5).

Tools return complete results sorted best-first; shaping trims them afterwards so every tool gets the same, tested
budget logic: drop the tail of the longest *shrinkable* list (never ids, counts or errors), shorten long strings,
and say what was cut (``truncated``, ``omitted``, ``hint``).
"""

from __future__ import annotations

import json
from typing import Any

from m1nd.errors import InvalidInputError

LONG_STRING = 300


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _with_size(result: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Set ``response_chars`` to the length of the serialised result that contains it (a fixed point)."""
    result["response_chars"] = 0
    n = len(dumps(result))
    for _ in range(4):
        result["response_chars"] = n
        m = len(dumps(result))
        if m == n:
            break
        n = m
    return result, n


def _shorten_strings(obj: Any) -> bool:
    changed = False
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, str) and len(v) > LONG_STRING and k not in ("node_id", "id", "trail_id"):
                obj[k] = v[: LONG_STRING - 1] + "…"
                changed = True
            else:
                changed |= _shorten_strings(v)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            if isinstance(v, str) and len(v) > LONG_STRING:
                obj[i] = v[: LONG_STRING - 1] + "…"
                changed = True
            else:
                changed |= _shorten_strings(v)
    return changed


def _lists(result: dict[str, Any], names: tuple[str, ...]) -> list[tuple[str, list[Any]]]:
    """Shrinkable lists by dotted name (``a.b`` reaches into a nested object)."""
    found = []
    for name in names:
        obj: Any = result
        for part in name.split("."):
            obj = obj.get(part) if isinstance(obj, dict) else None
        if isinstance(obj, list):
            found.append((name, obj))
    return found


def place(result: dict[str, Any], key: str, value: Any, before: tuple[str, ...] = ()) -> dict[str, Any]:
    """``result`` with ``key`` set to ``value``: where it already is, else before the first key of ``before`` the
    result has, else last. The tool layer adds its fields (``hint``, ``elapsed_ms``) this way, so a result's keys
    keep the order they have always had on the wire."""
    at = next((k for k in before if k in result), None)
    if key in result or at is None:
        result[key] = value
        return result
    out: dict[str, Any] = {}
    for k, v in result.items():
        if k == at:
            out[key] = value
        out[k] = v
    return out


def shape(tool: Any, result: dict[str, Any], max_chars: int) -> dict[str, Any]:
    result, n = _with_size(result)
    if n <= max_chars:
        return result
    omitted: dict[str, int] = {}
    result["truncated"] = True
    result["hint"] = (f"response cut to fit max_output_chars={max_chars}; raise it or narrow the request "
                      "(top_k, page_size, filters)")
    _shorten_strings(result)
    lists = _lists(result, tool.shrinkable)
    while True:
        result["omitted"] = omitted
        result, n = _with_size(result)
        if n <= max_chars:
            return result
        candidates = [(len(dumps(lst)), name, lst) for name, lst in lists if lst]
        if not candidates:
            break
        # Drop from the longest list several items at a time when far over budget (keeps this O(n log n)).
        _, name, lst = max(candidates, key=lambda c: c[0])
        over = n - max_chars
        per_item = max(1, len(dumps(lst)) // max(1, len(lst)))
        k = max(1, min(len(lst) - 0, over // per_item // 2)) if over > 4 * per_item else 1
        del lst[len(lst) - k:]
        omitted[name] = omitted.get(name, 0) + k
    skeleton = n
    raise InvalidInputError(f"max_output_chars={max_chars} is too small for this tool's result; use at least "
                            f"{skeleton + 100}", details={"argument": "max_output_chars", "minimum": skeleton + 100})
