"""Bulk embedding throughput against a bare ONNX Runtime loop, side by side in one run (issue 13 item 2).

Same texts (every code-node text of a stdlib subset, graph order), same session settings (those of every m1nd
session: :func:`m1nd.memory.embeddings.session_options`, the worker child's thread count, the default batch size):

Both embed each distinct text once.

* **bare loop** — what one would write first: the tokenizer pads each batch to its longest text, batches in input
  order, mean pooling in numpy; nothing stored;
* **m1nd bulk** — :meth:`m1nd.codegraph.vectors.CodeVectors.embed_missing`, exactly what the worker child runs: per-node
  texts and hashes, length-sorted batches, every 256 vectors committed to ``graph.db``.

Rounds alternate (bare, m1nd, bare, m1nd ...) so machine load hits both alike; the best round of each is reported
in texts/s (``extra_info`` and stdout). Targets are reported, never asserted (timing on a shared machine). CI runs
it with ``--benchmark-disable`` on the ``json`` package only.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from corpus import copy_subset, workspace
from m1nd.memory import embeddings as E

PACKAGES = ("json", "http", "logging", "concurrent")  # ~1,000 distinct texts: minutes per loop on a loaded 2-core box


def _full(config: pytest.Config) -> bool:
    return not config.getoption("benchmark_disable", default=False)


class BareLoop:
    """A bare ONNX Runtime loop with m1nd's session settings (batches in input order, padded to their longest)."""

    def __init__(self, spec: E.ModelSpec, threads: int, batch: int) -> None:
        ort = E.onnxruntime_module()
        so = ort.SessionOptions()
        for name, value in E.session_options(threads).items():
            setattr(so, name, value)
        self.session = ort.InferenceSession(str(spec.model_path), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tok = E.load_tokenizer(spec.tokenizer_path)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tok.enable_truncation(max_length=E.CODE_MAX_TOKENS)
        self.batch = batch

    def embed(self, texts: list[str]) -> np.ndarray:
        out = []
        for a in range(0, len(texts), self.batch):
            encs = self.tok.encode_batch(texts[a:a + self.batch])
            ids = np.asarray([e.ids for e in encs], np.int64)
            mask = np.asarray([e.attention_mask for e in encs], np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            h = self.session.run(None, feed)[0]
            m = mask[..., None].astype(np.float32)
            v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        return np.vstack(out)


@pytest.mark.timeout(3600)
def test_bulk_embedding_against_a_bare_loop(benchmark, tmp_path, request) -> None:
    from m1nd.codegraph.vectors import code_vectors_for, node_texts, worker_embedder

    if E.default_spec() is None:
        pytest.skip("the default embedding model is not installed")
    big = _full(request.config)
    root = copy_subset(tmp_path / "src", PACKAGES if big else ("json",))
    os.environ["M1ND_EMBEDDER"] = "onnx"
    E.reset_embedder()
    try:
        ws = workspace(tmp_path / "home", root)
        ws.graph.ingest(str(root), embed="skip")
        g = ws.graph.graph()
        cv = code_vectors_for(ws.graph)
        texts = list(dict.fromkeys(t for t in node_texts(g.nodes) if t))  # distinct: m1nd embeds a text once
        emb = worker_embedder(cv.emb)  # the worker child's embedder: its thread count, default batch
        assert emb is not None
        bare = BareLoop(emb.spec, emb.threads, emb.batch)
        # the same vectors (up to padding noise): both loops do the same work
        np.testing.assert_allclose(emb.embed_documents(texts[:32], max_tokens=E.CODE_MAX_TOKENS),
                                   bare.embed(texts[:32]), atol=2e-3)

        def m1nd_bulk() -> int:
            with cv.db.write():
                cv.db.execute("DELETE FROM node_vectors")
            cv._have = None
            cv._coverage = None
            return cv.embed_missing(g, emb=emb, update_index=False)

        rates: dict[str, list[float]] = {"bare": [], "m1nd": []}
        embedded = 0
        for _ in range(2 if big else 1):
            t = time.perf_counter()
            bare.embed(texts)
            rates["bare"].append(len(texts) / (time.perf_counter() - t))
            t = time.perf_counter()
            embedded = m1nd_bulk()
            rates["m1nd"].append(embedded / (time.perf_counter() - t))
        assert embedded == len(texts)
        assert not cv.missing(g)  # every text has its vector in the database
        ws.close()
    finally:
        os.environ.pop("M1ND_EMBEDDER", None)
        E.reset_embedder()
    best = {k: max(v) for k, v in rates.items()}
    info = {"texts": len(texts), "distinct_texts": embedded, "threads": emb.threads, "batch": emb.batch,
            "bare_texts_per_s": round(best["bare"], 1), "m1nd_texts_per_s": round(best["m1nd"], 1),
            "ratio": round(best["m1nd"] / best["bare"], 3),
            "rounds": {k: [round(x, 1) for x in v] for k, v in rates.items()}}
    benchmark.extra_info.update(info)
    print(f"\nbulk embedding on {len(texts)} stdlib code texts ({emb.threads} thread(s), batch {emb.batch}): "
          f"bare loop {best['bare']:.1f} texts/s, m1nd {best['m1nd']:.1f} texts/s ({info['ratio']}x)")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
