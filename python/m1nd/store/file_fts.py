"""A plain BM25 file ranker on SQLite FTS5: the baseline that ``m1nd eval`` measures ``activate`` against.

Why it exists: change localization (commit subject in, touched files out) has a strong, cheap, well-understood
baseline — BM25 over whole files, as in SWE-bench's retrieval setting. Measuring ``activate`` only makes sense beside
it, on the same queries and the same files, and it must need nothing that m1nd does not already ship (SQLite via
apsw; this module is in ``store/`` because ``store/db.py`` is the only importer of apsw).

Design:

* **One document per file**: its relpath followed by its whole text. The caller chooses the files (``m1nd eval``
  indexes the non-test source files m1nd ingests, like SWE-bench's BM25, which leaves tests out).
* **Identifier-split tokens** (:func:`code_tokens`): every word-like run (letters, digits, ``_``) is kept whole,
  lower-cased (``parse_args``, ``httpclient``), and also split into its snake_case / camelCase / digit parts
  (``parse`` ``args``, ``http`` ``client``), so ``HTTPClient.sendRequest`` matches "send request" and
  ``send_request`` alike. No stemming and no stop words: IDF weighs common words down, and the same tokens feed the
  bm25s baseline of the benchmarks, so both BM25 figures rest on one tokenization.
* Tokenization happens in Python and the token stream is stored space-separated; FTS5's ``unicode61`` tokenizer
  with ``_`` as a token character then only splits on the spaces, so a whole identifier stays one term.
* Ranking is FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, fixed by SQLite) over an OR of the query's distinct tokens,
  ties broken by relpath so results are deterministic.
* The database is in memory by default (a temporary index per evaluation run; nothing is written to disk).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from m1nd.identifiers import HUMPS_ANY_SCRIPT
from m1nd.store.db import Database

_WORD = re.compile(r"\w+")
#: longer runs are hashes, base64 or minified code: not words anyone searches for
MAX_TOKEN_CHARS = 64


def code_tokens(text: str) -> list[str]:
    """Lower-cased tokens of ``text``: each identifier-like run whole, then its parts when it has several.

    ``"HTTPClient.send_request(url)"`` → ``httpclient http client send_request send request url``. Tokens of one
    character and runs longer than :data:`MAX_TOKEN_CHARS` are dropped. Order and repetitions are kept (term
    frequencies matter to BM25).
    """
    out: list[str] = []
    append = out.append
    for m in _WORD.finditer(text):
        run = m.group(0).strip("_")
        if len(run) < 2 or len(run) > MAX_TOKEN_CHARS:
            continue
        whole = run.lower()
        append(whole)
        if run.isalpha() and (run.islower() or run.isupper() or (run[0].isupper() and run[1:].islower())):
            continue  # a plain word: no parts (fast path for prose and most keywords)
        parts = [p.lower() for chunk in run.split("_") if chunk for p in HUMPS_ANY_SCRIPT.findall(chunk)]
        if len(parts) > 1:
            out.extend(p for p in parts if len(p) > 1)
    return out


def _match_expression(tokens: Iterable[str]) -> str:
    # Tokens are \w runs, so they never hold a double quote; quoting keeps AND / OR / NOT / NEAR literal.
    return " OR ".join(f'"{t}"' for t in dict.fromkeys(tokens))


class FileTextIndex:
    """BM25 over whole files in an FTS5 table (see the module docstring).

    Use as a context manager, or call :meth:`close`. ``path`` defaults to an in-memory database.

    >>> with FileTextIndex() as idx:
    ...     idx.add([("a/pool.py", "class SessionPool: ..."), ("a/db.py", "def connect(): ...")])
    ...     idx.search("session pool")[0][0]
    2
    'a/pool.py'
    """

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.db = Database(path)
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS file_text USING fts5("
            "relpath UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 0 tokenchars ''_''')"
        )
        self._count = int(self.db.scalar("SELECT COUNT(*) FROM file_text", default=0) or 0)

    def __enter__(self) -> FileTextIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self._count

    def add(self, docs: Iterable[tuple[str, str]]) -> int:
        """Index ``(relpath, text)`` pairs (the relpath is part of the document); returns how many were added."""
        rows = [(rel, " ".join(code_tokens(rel + "\n" + text))) for rel, text in docs]
        with self.db.write():
            self.db.executemany("INSERT INTO file_text(relpath, body) VALUES (?, ?)", rows)
        self._count += len(rows)
        return len(rows)

    def search(self, query: str, limit: int = 100) -> list[tuple[str, float]]:
        """The best ``limit`` files for ``query`` as ``(relpath, score)``, best first (score = −bm25, higher is
        better). A query without any token answers ``[]``."""
        expr = _match_expression(code_tokens(query))
        if not expr:
            return []
        rows = self.db.all(
            "SELECT relpath, bm25(file_text) AS s FROM file_text WHERE file_text MATCH ? ORDER BY s, relpath LIMIT ?",
            (expr, int(limit)),
        )
        return [(rel, -float(s)) for rel, s in rows]

    def close(self) -> None:
        self.db.close()
