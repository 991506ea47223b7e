"""Suite-wide rules: every test uses the fake (hashing) embedder unless it is marked ``model`` (issue 14: a memory
test loaded the real ONNX model by accident and took 15 s). Tests that need another choice set ``M1ND_EMBEDDER``
themselves; subprocesses inherit the environment set here."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fake_embedder_unless_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    if request.node.get_closest_marker("model") is not None:
        yield
        return
    from m1nd.memory import embeddings as E

    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    monkeypatch.delenv("M1ND_EMBED_MODEL_DIR", raising=False)
    E.reset_embedder()
    yield
    E.reset_embedder()
