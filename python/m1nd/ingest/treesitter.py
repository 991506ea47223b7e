"""The only module that imports ``tree_sitter`` and the grammar packages (graph.md §6).

Grammars are loaded lazily, one ``Parser`` per language per process (parsers are not shared between threads:
extraction runs in one thread per process). Queries are compiled once per (language, source) and cached.
Extractors receive plain ``tree_sitter.Node`` objects and use their attributes; they never import tree_sitter.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import tree_sitter as _ts

log = logging.getLogger(__name__)

#: Languages with a tree-sitter grammar (file ``lang`` values).
GRAMMAR_LANGS: frozenset[str] = frozenset(
    {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "csharp", "ruby", "php", "kotlin"}
)

_lock = threading.RLock()  # query() holds it while language() loads the grammar
_languages: dict[str, Any] = {}
_local = threading.local()
_queries: dict[tuple[str, str], Any] = {}


def _load_language(lang: str) -> Any:
    if lang == "python":
        import tree_sitter_python as mod

        return _ts.Language(mod.language())
    if lang == "javascript":
        import tree_sitter_javascript as mod

        return _ts.Language(mod.language())
    if lang == "typescript":
        import tree_sitter_typescript as mod

        return _ts.Language(mod.language_typescript())
    if lang == "tsx":
        import tree_sitter_typescript as mod

        return _ts.Language(mod.language_tsx())
    if lang == "go":
        import tree_sitter_go as mod

        return _ts.Language(mod.language())
    if lang == "rust":
        import tree_sitter_rust as mod

        return _ts.Language(mod.language())
    if lang == "java":
        import tree_sitter_java as mod

        return _ts.Language(mod.language())
    if lang == "c":
        import tree_sitter_c as mod

        return _ts.Language(mod.language())
    if lang == "cpp":
        import tree_sitter_cpp as mod

        return _ts.Language(mod.language())
    if lang == "csharp":
        import tree_sitter_c_sharp as mod

        return _ts.Language(mod.language())
    if lang == "ruby":
        import tree_sitter_ruby as mod

        return _ts.Language(mod.language())
    if lang == "php":
        import tree_sitter_php as mod

        return _ts.Language(mod.language_php())  # PHP with its surrounding HTML (``<?php … ?>`` islands)
    if lang == "kotlin":
        import tree_sitter_kotlin as mod

        return _ts.Language(mod.language())
    raise KeyError(f"no tree-sitter grammar for language {lang!r}")


def language(lang: str) -> Any:
    """The ``tree_sitter.Language`` of ``lang`` (loaded once per process)."""
    got = _languages.get(lang)
    if got is None:
        with _lock:
            got = _languages.get(lang)
            if got is None:
                got = _languages[lang] = _load_language(lang)
    return got


def parse(lang: str, data: bytes) -> Any:
    """Parse ``data`` with the grammar of ``lang``; returns a ``tree_sitter.Tree``."""
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(lang)
    if parser is None:
        parser = parsers[lang] = _ts.Parser(language(lang))
    return parser.parse(data)


def query(lang: str, source: str) -> Any:
    """A compiled (cached) ``tree_sitter.Query`` for ``lang``."""
    key = (lang, source)
    got = _queries.get(key)
    if got is None:
        with _lock:
            got = _queries.get(key)
            if got is None:
                got = _queries[key] = _ts.Query(language(lang), source)
    return got


#: matches start at most this deep below the queried node. Real code stays far below it (a few hundred levels); a
#: pathological file (one line of 50,000 nested calls) otherwise costs the query cursor time quadratic in the depth
#: (40 s instead of milliseconds); what lies deeper is simply not captured (and reported: :func:`take_cuts`).
MAX_START_DEPTH = 4000
#: captured nodes per query run on one file; more are dropped (document order kept per capture name)
MAX_CAPTURES = 200_000
#: Extractors read the text of every captured node, so the bytes spanned by the captures are their work. Nested
#: expressions make that sum quadratic (each of 20,000 chained calls spans the whole chain before it: 9 s); past
#: ``SPAN_BUDGET_FACTOR`` x the file size (at least ``SPAN_BUDGET_FLOOR``) matches are limited to shallower depths.
#: Counting bytes instead of watching a clock keeps the graph independent of how busy the machine is.
SPAN_BUDGET_FACTOR = 16
SPAN_BUDGET_FLOOR = 4 << 20
MIN_START_DEPTH = 64

_cut_log = threading.local()


def take_cuts() -> list[str]:
    """What the bounds cut since the last call on this thread (one sentence each), then forget it."""
    got: list[str] = getattr(_cut_log, "cuts", [])
    _cut_log.cuts = []
    return got


def _cut(reason: str) -> None:
    cuts = getattr(_cut_log, "cuts", None)
    if cuts is None:
        cuts = _cut_log.cuts = []
    if reason not in cuts:
        cuts.append(reason)


def _cursor(q: Any, depth: int = MAX_START_DEPTH) -> Any:
    cur = _ts.QueryCursor(q)
    cur.set_max_start_depth(depth)
    return cur


def _deeper_than(node: Any, limit: int) -> bool:
    """Whether the path that always follows the widest child goes deeper than ``limit`` (deep nesting is nested
    expressions, where the nested part is the widest child). O(depth x children), for reporting only."""
    depth = 0
    while depth <= limit:
        best = None
        for child in node.children:
            if best is None or child.end_byte - child.start_byte > best.end_byte - best.start_byte:
                best = child
        if best is None:
            return False
        node = best
        depth += 1
    return True


def _span(groups: Any) -> tuple[int, int]:
    total = count = 0
    for nodes in groups:
        count += len(nodes)
        for n in nodes:
            total += n.end_byte - n.start_byte
    return total, count


def _bounded(run: Any, groups: Any, node: Any) -> Any:
    """Run a query under the per-file bounds: depth, captured nodes and captured bytes."""
    depth = MAX_START_DEPTH
    got = run(depth)
    size = node.end_byte - node.start_byte
    budget = max(SPAN_BUDGET_FLOOR, SPAN_BUDGET_FACTOR * size)
    work, _ = _span(groups(got))
    while work > budget and depth > MIN_START_DEPTH:
        depth = max(MIN_START_DEPTH, depth // 4)
        got = run(depth)
        work, _ = _span(groups(got))
    if depth < MAX_START_DEPTH:
        _cut(f"nested too deeply for its size: matches limited to depth {depth}")
    elif size > 4 * MAX_START_DEPTH and _deeper_than(node, MAX_START_DEPTH):
        _cut(f"nested deeper than {MAX_START_DEPTH} levels: nothing below that depth was extracted")
    return got


def _document_order(node: Any) -> tuple[int, int, int]:
    """Sort key of a node in document (pre-)order: an enclosing node before the nodes it starts with."""
    return node.start_byte, -node.end_byte, node.kind_id


def captures(q: Any, node: Any) -> dict[str, list[Any]]:
    """``QueryCursor(q).captures(node)``: capture name -> nodes (document order per name), within the bounds.

    The binding returns each name's nodes in an order that can differ between two parses of the same text (it
    follows where the nodes live in memory), and extractors emit references and imports in capture order: the
    nodes are sorted so the same text always gives the same extract."""
    got = _bounded(lambda depth: _cursor(q, depth).captures(node), lambda c: c.values(), node)
    for nodes in got.values():
        nodes.sort(key=_document_order)
    n = sum(len(v) for v in got.values())
    if n > MAX_CAPTURES:
        keep = MAX_CAPTURES / n
        got = {k: v[: int(len(v) * keep)] for k, v in got.items()}
        _cut(f"{n} captured nodes: kept the first {MAX_CAPTURES} (in proportion per kind)")
    return got


def matches(q: Any, node: Any) -> list[tuple[int, dict[str, list[Any]]]]:
    """``QueryCursor(q).matches(node)``: list of (pattern index, capture name -> nodes), within the bounds."""
    got = _bounded(lambda depth: _cursor(q, depth).matches(node),
                   lambda ms: (nodes for _, caps in ms for nodes in caps.values()), node)
    if len(got) > MAX_CAPTURES:
        _cut(f"{len(got)} matches: kept the first {MAX_CAPTURES}")
        got = got[:MAX_CAPTURES]
    return got


def first_error_line(root: Any) -> int | None:
    """1-based line of the first ERROR or MISSING node below ``root`` (None when the tree has no error)."""
    if not root.has_error:
        return None
    cursor = root.walk()
    while True:
        node = cursor.node
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        if node.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return root.start_point[0] + 1
