"""What ``trail_save`` accepts (learning.md §7): the limits of a trail and the checks that turn an agent's arguments
into the stored record's parts (hypotheses, conclusions, visited nodes, boosts, questions, tags), each refusal naming
the argument at fault. :mod:`m1nd.codegraph.trails` stores what these return; the merge
(:mod:`m1nd.codegraph.trail_merge`) keeps within the same limits."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from m1nd.errors import InvalidInputError
from m1nd.graph.model import Graph

TAG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_./:-]{0,63}$"
TAG_RE = re.compile(TAG_PATTERN)

MAX_VISITED = 2000
MAX_BOOSTS = 2000
MAX_HYPOTHESES = 100
MAX_CONCLUSIONS = 100
MAX_QUESTIONS = 100
MAX_TAGS = 50
MAX_STATEMENT = 2000
MAX_ANNOTATION = 1000
MAX_QUESTION = 1000
MAX_JSON_BYTES = 1 << 20
_PUNCT = re.compile(r"[^\w\s]")


def normalise_text(s: str) -> str:
    """Case-fold, strip punctuation, collapse whitespace (``can't`` → ``cant``): statements compare equal in this
    form."""
    return " ".join(_PUNCT.sub("", s.casefold()).split())


def bad_input(msg: str, argument: str) -> InvalidInputError:
    return InvalidInputError(msg, details={"argument": argument})


def _check_fields(obj: Any, where: str, argument: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise bad_input(f"{where} must be an object", argument)
    for k in obj:
        if k not in allowed:
            raise bad_input(f"{where}: unknown field '{k}' (allowed: {', '.join(allowed)})", argument)
    return obj


def _text(obj: dict[str, Any], key: str, where: str, argument: str, *, required: bool, max_len: int,
          default: str = "") -> str:
    if key not in obj or obj[key] is None:
        if required:
            raise bad_input(f"{where}.{key} is required", argument)
        return default
    v = obj[key]
    if not isinstance(v, str):
        raise bad_input(f"{where}.{key} must be a string", argument)
    if required and not v.strip():
        raise bad_input(f"{where}.{key} must not be empty", argument)
    if len(v) > max_len:
        raise bad_input(f"{where}.{key} is too long: {len(v)} characters (at most {max_len})", argument)
    return v


def _unit(obj: dict[str, Any], key: str, where: str, argument: str, default: float) -> float:
    v = obj.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= float(v) <= 1.0):
        raise bad_input(f"{where}.{key} must be a number between 0 and 1 (got {v!r})", argument)
    return float(v)


def _id_list(obj: dict[str, Any], key: str, where: str, argument: str) -> list[str]:
    v = obj.get(key, [])
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise bad_input(f"{where}.{key} must be an array of node ids", argument)
    if len(v) > MAX_VISITED:
        raise bad_input(f"{where}.{key} has {len(v)} ids (at most {MAX_VISITED})", argument)
    return list(dict.fromkeys(v))


def parse_hypotheses(raw: list[Any]) -> list[dict[str, Any]]:
    if len(raw) > MAX_HYPOTHESES:
        raise bad_input(f"hypotheses has {len(raw)} items (at most {MAX_HYPOTHESES})", "hypotheses")
    out = []
    for i, h in enumerate(raw):
        w = f"hypotheses[{i}]"
        _check_fields(h, w, "hypotheses", ("statement", "confidence", "supporting_nodes", "contradicting_nodes"))
        out.append({"statement": _text(h, "statement", w, "hypotheses", required=True, max_len=MAX_STATEMENT),
                    "confidence": _unit(h, "confidence", w, "hypotheses", 0.5),
                    "supporting_nodes": _id_list(h, "supporting_nodes", w, "hypotheses"),
                    "contradicting_nodes": _id_list(h, "contradicting_nodes", w, "hypotheses")})
    return out


def parse_conclusions(raw: list[Any], hyps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(raw) > MAX_CONCLUSIONS:
        raise bad_input(f"conclusions has {len(raw)} items (at most {MAX_CONCLUSIONS})", "conclusions")
    known = {normalise_text(h["statement"]): h["statement"] for h in hyps}
    out = []
    for i, c in enumerate(raw):
        w = f"conclusions[{i}]"
        _check_fields(c, w, "conclusions", ("statement", "confidence", "from_hypotheses", "supporting_nodes"))
        fh = c.get("from_hypotheses", []) or []
        if not isinstance(fh, list) or not all(isinstance(x, str) for x in fh):
            raise bad_input(f"{w}.from_hypotheses must be an array of hypothesis statements", "conclusions")
        resolved = []
        for j, s in enumerate(fh):
            hit = known.get(normalise_text(s))
            if hit is None:
                raise bad_input(f"{w}.from_hypotheses[{j}] matches no hypothesis statement of this call: '{s[:80]}'",
                           "conclusions")
            if hit not in resolved:
                resolved.append(hit)
        out.append({"statement": _text(c, "statement", w, "conclusions", required=True, max_len=MAX_STATEMENT),
                    "confidence": _unit(c, "confidence", w, "conclusions", 0.5), "from_hypotheses": resolved,
                    "supporting_nodes": _id_list(c, "supporting_nodes", w, "conclusions")})
    return out


def parse_visited(raw: list[Any]) -> list[dict[str, Any]]:
    if len(raw) > MAX_VISITED:
        raise bad_input(f"visited_nodes has {len(raw)} items (at most {MAX_VISITED})", "visited_nodes")
    out: dict[str, dict[str, Any]] = {}
    for i, v in enumerate(raw):
        w = f"visited_nodes[{i}]"
        _check_fields(v, w, "visited_nodes", ("node_external_id", "annotation", "relevance"))
        nid = _text(v, "node_external_id", w, "visited_nodes", required=True, max_len=2000)
        item = {"node_external_id": nid,
                "annotation": _text(v, "annotation", w, "visited_nodes", required=False, max_len=MAX_ANNOTATION),
                "relevance": _unit(v, "relevance", w, "visited_nodes", 0.5)}
        old = out.get(nid)
        if old is None:
            out[nid] = item
        else:  # duplicate: keep the highest relevance, join annotations
            old["relevance"] = max(old["relevance"], item["relevance"])
            if item["annotation"] and item["annotation"] not in old["annotation"]:
                old["annotation"] = " | ".join(x for x in (old["annotation"], item["annotation"]) if x)
    return list(out.values())


def parse_boosts(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise bad_input("activation_boosts must be an object mapping node ids to numbers in [0, 1]",
                        "activation_boosts")
    if len(raw) > MAX_BOOSTS:
        raise bad_input(f"activation_boosts has {len(raw)} entries (at most {MAX_BOOSTS})", "activation_boosts")
    out = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= float(v) <= 1.0):
            raise bad_input(f"activation_boosts['{k}'] must be a number between 0 and 1 (got {v!r})",
                            "activation_boosts")
        out[k] = float(v)
    return out


def parse_strings(raw: list[Any], argument: str, limit: int, max_len: int) -> list[str]:
    if len(raw) > limit:
        raise bad_input(f"{argument} has {len(raw)} items (at most {limit})", argument)
    out: list[str] = []
    for i, s in enumerate(raw):
        if not isinstance(s, str) or not s.strip():
            raise bad_input(f"{argument}[{i}] must be a non-empty string", argument)
        if len(s) > max_len:
            raise bad_input(f"{argument}[{i}] is too long: {len(s)} characters (at most {max_len})", argument)
        if s not in out:
            out.append(s)
    return out


def parse_tags(raw: list[Any]) -> list[str]:
    if len(raw) > MAX_TAGS:
        raise bad_input(f"tags has {len(raw)} items (at most {MAX_TAGS})", "tags")
    out: list[str] = []
    for i, s in enumerate(raw):
        if not isinstance(s, str) or not TAG_RE.match(s):
            raise bad_input(f"tags[{i}] must match {TAG_PATTERN} (got {s!r})", "tags")
        if s not in out:
            out.append(s)
    return out


def canonical_ids(g: Graph, ids: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Given ids → canonical external ids; and the unknown ones (first-seen order)."""
    mapping: dict[str, str] = {}
    unknown: list[str] = []
    for raw in ids:
        if raw in mapping or raw in unknown:
            continue
        i = g.seeds.ext_lookup.get(raw.strip()) if g.n else None
        if i is None:
            unknown.append(raw)
        else:
            mapping[raw] = g.nodes.ext_id[i]
    return mapping, unknown


def max_merge(into: dict[str, float], key: str, value: float) -> None:
    if value > into.get(key, -1.0):
        into[key] = value
