"""Tokenising with m1nd's BERT WordPiece reader against ``tokenizers`` (issue 17: the default install no longer has
``tokenizers``; the reader must not slow embedding down). Texts: the first 2,000 characters of 400 stdlib modules,
what code-node and memory texts look like. Both encode one text at a time, as the embedder does (its batching is
its own); the reader's word cache is warm after the first round, as in a serving process. Reported, never asserted.

Run: ``pytest bench/test_wordpiece_bench.py --benchmark-only``
"""

from __future__ import annotations

import pytest

from corpus import STDLIB
from m1nd.memory import embeddings as E
from m1nd.memory.wordpiece import WordPieceTokenizer


@pytest.fixture(scope="module")
def texts() -> list[str]:
    files = sorted(p for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts and "test" not in p.parts)
    out = [f.read_text(encoding="utf-8", errors="replace")[:2000] for f in files[:400]]
    assert len(out) == 400
    return out


def test_wordpiece_reader(benchmark, texts) -> None:
    tok = WordPieceTokenizer.from_file(E.DEFAULT_TOKENIZER)
    encs = benchmark.pedantic(lambda: [tok.encode(t) for t in texts], rounds=10, iterations=1, warmup_rounds=1)
    benchmark.extra_info["tokens"] = sum(len(e.ids) for e in encs)
    assert all(e.ids[0] == 101 and e.ids[-1] == 102 for e in encs)


def test_tokenizers_reference(benchmark, texts) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(E.DEFAULT_TOKENIZER))
    tok.no_padding()
    tok.no_truncation()
    encs = benchmark.pedantic(lambda: [tok.encode(t) for t in texts], rounds=10, iterations=1, warmup_rounds=1)
    ours = WordPieceTokenizer.from_file(E.DEFAULT_TOKENIZER)
    assert [e.ids for e in encs[:50]] == [ours.encode(t).ids for t in texts[:50]]
