"""Per-file extraction: ``extract_file(relpath, data, lang) -> dict`` (the cacheable ``extract_blob``, §11).

The result depends only on ``(relpath, bytes, lang)`` and the language's ``EXTRACTOR_VERSION``
(:func:`extractor_version`), so the orchestrator may cache it per file and re-use it while size/mtime or the
content hash are unchanged. It is plain JSON (str / int / bool / None / list / dict):

``lang``, ``version``
    language and extractor version that produced the blob.
``line_count``, ``content_hash``, ``is_test``, ``doc``
    file attributes (``content_hash`` = sha256 of the bytes, ``doc`` = module docstring / package comment).
``parse_error``
    ``None`` or a message (the first syntax error); the definitions, references and imports tree-sitter recovered
    around the error are still extracted.
``definitions``
    list in source order of dicts ``kind, name, parent (index, -1 = file), id (local id path such as
    "class::Pool::fn::submit", incl. ``#n`` and Go ``recv::`` segments), qname, line_start, line_end,
    signature (≤ 200), doc (≤ 300), content_hash (sha256 of the span), is_test`` plus language extras
    (``recv``: Go receiver type; ``impl_type`` / ``impl_trait``: Rust impl; ``level``: markdown heading;
    ``attrs``: a type's attribute / field name → type expression, ``""`` when assigned values of different or
    unknown types; ``ret``: a function's declared (Python: or inferred) return type expression; Python ``items``:
    the type expression of each position of the tuples a function returns, ``""`` unknown; ``yields``: what a
    ``@contextmanager`` generator yields; ``abstract``: a body that only raises ``NotImplementedError``).
``references``
    unresolved references ``[kind, name, owner, count]``, one per distinct (kind, name, owner) with its number
    of occurrences; ``owner`` is the index of the innermost enclosing definition (-1 = the file); ``kind`` is
    one of

    ``call``         bare call ``f()`` (name ``f``)
    ``qualified``    ``mod.f()`` / ``pkg.F()`` / ``Type::f()`` / ``Cls.m()``: dotted path whose head is an
                     import binding, a file-level name or (Java/Rust) a type-like path
    ``self``         ``self.m()`` / ``this.m()`` / ``cls.m()`` / Go receiver / Rust ``Self::m``: method of the
                     enclosing type (then its bases)
    ``super``        ``super().m()`` / ``super.m()``: method of the enclosing type's bases
    ``method_call``  ``obj.m()`` on a receiver of unknown type (name ``m``)
    ``typed_call``   ``x.m()`` on a receiver whose type is plain from the code: name ``<texpr>:m``; the type
                     expression is ``Foo`` / ``mod.Foo`` (a type: annotation, declaration, ``new Foo()``,
                     literal → ``str``/``list``/…), ``Foo()`` (what calling ``Foo`` returns: an instance of the
                     class, or the function's ``ret``), ``@`` (the enclosing type: ``self``/``this``/Go receiver),
                     followed by ``>attr`` segments (the type of that attribute, from ``attrs`` along the type's
                     bases, else of the types derived from it when they agree) and ``>m()`` segments (what method
                     ``m`` of that type returns: its ``ret``). Locals are typed by the extractor (flow-insensitive,
                     per scope: a name bound to values of different or unknown types gets none; ``with X() as x``
                     is ``X()>__enter__()``, ``except E as e`` is ``E``); the resolver links to the type's method
                     and keeps the plain ``method_call`` rule when the type is not known. Python: ``ret`` is also
                     inferred from ``return`` statements when they all give one type expression; ``A()|B()`` is a
                     union (links when all agree on the method); ``^T`` is an instance of ``T`` or of a type
                     derived from it (``isinstance``); attributes may hold ``!Foo``, the object a name denotes
                     (``factory = Foo``: ``>factory()`` segments give what calling it gives); ``>#i`` after
                     a call is item ``i`` of the tuple it returns (``a, b = f()``: ``f()>#0``), and
                     ``>__enter__()`` after a call of a ``@contextmanager`` generator what it yields
    ``new``          ``new X()`` (name ``X``, possibly dotted)
    ``macro``        Rust ``name!(…)`` / ``path::name!(…)``: a ``macro_rules!`` macro
    ``reference``    a type name used in an annotation / signature / field (possibly dotted)
    ``base``         base class / embedded struct / embedded interface / supertrait
    ``implements``   ``implements I`` / ``impl Trait for``
    ``decorator``    decorator of the owner definition
``imports``
    import bindings: dicts ``module`` (language-specific string: Python dotted name, JS specifier, Go import
    path, Rust ``crate::a::b`` path, Java ``a.b.C``), ``names`` (list of ``[imported, local]``), ``alias``
    (local name bound to the module itself, or None), ``level`` (Python relative level), ``reexport``,
    ``star``, ``line``.
``config_refs``
    config-file basenames found inside string literals (for ``uses_config``).
``package``
    Go package name / Java package declaration / None.
``extra``
    language-specific data: Rust ``mods`` (``mod x;`` names), JS ``default_export``, Python ``all`` (the literal
    ``__all__`` list), Python ``aliases`` (top-level ``Lock = _allocate_lock``: name → the dotted name it copies),
    markdown ``mentions``, config ``go_module`` / ``cargo`` / ``tsconfig``.

``import`` modules of the tags-query languages: C/C++ include paths (``system`` for ``<…>``), Ruby ``require``
paths (``level`` 1 for ``require_relative``), Kotlin / C# / PHP dotted names (``A\\B\\C`` written ``A.B.C``; a C#
``using A.B;`` is a ``star`` import of the namespace).
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from m1nd.fork_safety import fork_is_safe
from m1nd.ingest.extract import _common
from m1nd.ingest.terms import TERMS_VERSION, attach_terms

log = logging.getLogger(__name__)

_MODULES: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "javascript",
    "tsx": "javascript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "c",
    "csharp": "csharp",
    "ruby": "ruby",
    "php": "php",
    "kotlin": "kotlin",
    "markdown": "markdown",
    "config": "config",
    "other": "other",
}

_loaded: dict[str, Any] = {}


def _module(lang: str) -> Any:
    name = _MODULES.get(lang)
    if name is None:
        raise ValueError(f"unknown language {lang!r}")
    mod = _loaded.get(name)
    if mod is None:
        import importlib

        mod = _loaded[name] = importlib.import_module(f"m1nd.ingest.extract.{name}")
    return mod


def extractor_version(lang: str) -> int:
    """``EXTRACTOR_VERSION`` of the extractor handling ``lang`` combined with the body-terms version (bump either
    to force re-extraction)."""
    return int(_module(lang).EXTRACTOR_VERSION) * 1000 + TERMS_VERSION


def extract_file(relpath: str, data: bytes, lang: str) -> dict[str, Any]:
    """Extract one file; never raises for bad content (a crash inside an extractor becomes ``parse_error``)."""
    mod = _module(lang)
    fn: Callable[..., dict[str, Any]] = mod.extract
    from m1nd.ingest.treesitter import take_cuts

    take_cuts()  # forget anything left over from a file that failed
    try:
        if lang in ("typescript", "tsx", "javascript", "c", "cpp"):
            blob = fn(relpath, data, lang)
        else:
            blob = fn(relpath, data)
        if len(blob["imports"]) > 1:
            blob["imports"].sort(key=lambda imp: imp["line"])
        attach_terms(blob, data)
        blob["version"] = extractor_version(lang)
        cuts = take_cuts()
        if cuts:  # the per-file bounds dropped part of the file (reported by ingest)
            blob["cut"] = "; ".join(cuts)
        return blob
    except RecursionError:
        msg = "file too deeply nested to extract"
    except Exception as e:
        log.warning("extractor for %s failed on %s: %r", lang, relpath, e, exc_info=True)
        msg = f"extractor failed: {type(e).__name__}: {e}"
    blob = _common.empty_blob(lang, extractor_version(lang), data, _common.is_test_path(relpath, lang))
    blob["parse_error"] = msg[:300]
    attach_terms(blob, data)
    return blob


#: extraction batches larger than this use a process pool (when ``workers`` is None)
PARALLEL_THRESHOLD = 200


def _extract_chunk(items: list[tuple[str, bytes, str]], finish: Callable[[dict[str, Any]], Any] | None = None
                   ) -> list[Any]:
    # many small dicts / lists and no cyclic garbage: pausing the cyclic GC saves ~15 %
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if finish is None:
            return [extract_file(rel, data, lang) for rel, data, lang in items]
        return [finish(extract_file(rel, data, lang)) for rel, data, lang in items]
    finally:
        if gc_was_enabled:
            gc.enable()


def extract_many(items: list[tuple[str, bytes, str]], workers: int | None = None,
                 finish: Callable[[dict[str, Any]], Any] | None = None) -> list[Any]:
    """Extract many files; results are in input order and identical to calling ``extract_file`` one by one.

    ``workers=None`` uses up to 2 processes (bounded by the CPU count) when there are more than 200 items,
    else runs in-process; ``workers<=1`` forces in-process extraction. ``finish`` (a module-level function, so a
    worker can run it): what is returned for each file is ``finish(extract_file(...))``, computed in the worker
    (the ingest compresses the blobs there instead of one after the other in the parent).
    """
    if workers is None:
        workers = min(2, os.cpu_count() or 1) if len(items) > PARALLEL_THRESHOLD else 1
    if workers <= 1 or len(items) < 2:
        return _extract_chunk(items, finish)
    # chunks balanced by bytes, interleaved so both workers get a similar mix; order is restored afterwards
    n_chunks = max(workers * 8, 1)
    order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))
    chunks: list[list[int]] = [[] for _ in range(n_chunks)]
    sizes = [0] * n_chunks
    for i in order:
        k = min(range(n_chunks), key=sizes.__getitem__)
        chunks[k].append(i)
        sizes[k] += len(items[i][1]) + 256
    chunks = [c for c in chunks if c]
    out: list[dict[str, Any] | None] = [None] * len(items)
    try:
        # fork is fastest but unsafe in a multi-threaded process (a server): then forkserver / spawn
        methods = multiprocessing.get_all_start_methods()
        if fork_is_safe():
            method = "fork"
        else:
            method = "forkserver" if "forkserver" in methods else "spawn"
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method)) as ex:
            futs = [ex.submit(_extract_chunk, [items[i] for i in c], finish) for c in chunks]
            for c, fut in zip(chunks, futs):
                for i, blob in zip(c, fut.result()):
                    out[i] = blob
    except (OSError, RuntimeError) as e:  # no fork / broken pool: fall back to in-process extraction
        log.warning("parallel extraction unavailable (%s); extracting in-process", e)
        return _extract_chunk(items, finish)
    return out  # type: ignore[return-value]


__all__ = ["PARALLEL_THRESHOLD", "extract_file", "extract_many", "extractor_version"]
