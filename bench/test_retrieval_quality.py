"""Retrieval quality of ``activate`` on a real corpus (the interpreter's standard library).

Each query is written the way an agent describes a task, and lists the files a developer would open first. The
metric uses the *files* of the ranked results (first occurrence order): recall@10 = share of expected files among
the first 10 distinct files; MRR = mean of 1/rank of the first expected file. Figures are printed and stored in the
benchmark's extra_info; the assertion only guards against a collapse (a regression shows in the figures).
Expected files are stdlib paths that exist in every CPython 3.11+; queries whose files are missing are skipped.
"""

from __future__ import annotations

import pytest

from corpus import STDLIB, STDLIB_EXCLUDE, file_quality, workspace
from m1nd.tools.registry import call_tool

CASES: list[tuple[str, list[str]]] = [
    ("decode a JSON document into Python objects", ["json/decoder.py", "json/__init__.py"]),
    ("send an email message through an SMTP server", ["smtplib.py"]),
    ("HTTP client connection sending a request and reading the response", ["http/client.py"]),
    ("compress and decompress data with gzip", ["gzip.py"]),
    ("parse command line options and arguments", ["argparse.py", "getopt.py", "optparse.py"]),
    ("run callables in a pool of worker threads and get futures", ["concurrent/futures/thread.py",
                                                                     "concurrent/futures/_base.py"]),
    ("event loop scheduling callbacks and running until complete", ["asyncio/base_events.py", "asyncio/events.py"]),
    ("compile a regular expression pattern", ["re/_compiler.py", "re/__init__.py", "re/_parser.py"]),
    ("create a temporary file or directory that is removed afterwards", ["tempfile.py"]),
    ("copy a directory tree recursively and move files", ["shutil.py"]),
    ("split a URL into components and quote unsafe characters", ["urllib/parse.py"]),
    ("log records to a file that rotates when it gets too big", ["logging/handlers.py"]),
    ("unit test case assertion methods", ["unittest/case.py"]),
    ("pretty print nested data structures", ["pprint.py"]),
    ("read and write CSV files with dialects", ["csv.py"]),
    ("spawn a child process and capture its output through pipes", ["subprocess.py"]),
    ("priority queue with heap push and pop", ["heapq.py", "queue.py"]),
    ("deep copy of arbitrary objects", ["copy.py"]),
    ("encode binary data as base64 text", ["base64.py"]),
    ("read members of a zip archive", ["zipfile.py"]),
    ("inspect the signature and source of a function", ["inspect.py"]),
    ("threaded TCP server handling requests", ["socketserver.py"]),
    ("parse an XML document into an element tree", ["xml/etree/ElementTree.py"]),
    ("serialize Python objects to bytes with pickle", ["pickle.py", "_compat_pickle.py"]),
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    w = workspace(tmp_path_factory.mktemp("home"), STDLIB)
    r = call_tool(w, "ingest", {"agent_id": "q", "path": str(STDLIB), "exclude": STDLIB_EXCLUDE})
    assert not r.is_error, r.structured
    yield w
    w.close()


def evaluate(ws, dimensions: list[str] | None = None) -> tuple[float, float, list[tuple[str, int | None]]]:
    return file_quality(ws, CASES, STDLIB, dimensions=dimensions)


def test_retrieval_quality(benchmark, ws) -> None:
    recall, mrr, ranks = benchmark.pedantic(evaluate, args=(ws,), rounds=1, iterations=1)
    benchmark.extra_info.update({"recall_at_10": round(recall, 3), "mrr": round(mrr, 3), "queries": len(ranks)})
    print(f"\nactivate on the stdlib: recall@10 {recall:.3f}, MRR {mrr:.3f} over {len(ranks)} queries")
    for q, first in ranks:
        print(f"  {first if first else '-':>3}  {q}")
    assert recall >= 0.3 and mrr >= 0.2
