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
#: (40 s instead of milliseconds); what lies deeper is simply not captured.
MAX_START_DEPTH = 4000


def _cursor(q: Any) -> Any:
    cur = _ts.QueryCursor(q)
    cur.set_max_start_depth(MAX_START_DEPTH)
    return cur


def captures(q: Any, node: Any) -> dict[str, list[Any]]:
    """``QueryCursor(q).captures(node)``: capture name -> nodes (document order per name)."""
    return _cursor(q).captures(node)


def matches(q: Any, node: Any) -> list[tuple[int, dict[str, list[Any]]]]:
    """``QueryCursor(q).matches(node)``: list of (pattern index, capture name -> nodes)."""
    return _cursor(q).matches(node)


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
