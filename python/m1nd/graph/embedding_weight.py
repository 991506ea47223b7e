"""How much the code-embedding signal counts, per model (issue 11 item 7: "embeddings count only where they help,
decided by the benchmark, per model").

sem(n) — the query's rescaled similarity to each node — enters ranking twice (``ranking.sem_join`` for the seeds and
the semantic dimension D2). Both read it from :meth:`m1nd.codegraph.vectors.CodeVectors.scores`, which multiplies it by
:func:`weight` of the model: 1 keeps the design's weights, 0 ranks as without the model (the trigram fallback) and
never embeds the query. The figures behind each entry are in README "Embeddings" (bench/embed_text_report.py
measures them: the localization benchmark with and without the model, and with sem(n) scaled).

``M1ND_EMBED_WEIGHT`` (a number in [0, 1]) overrides the table, for measuring.
"""

from __future__ import annotations

import os

#: model id → factor on sem(n); models not listed (a BGE folder, say) count fully until measured
WEIGHTS: dict[str, float] = {}
DEFAULT = 1.0


def weight(model_id: str) -> float:
    raw = os.environ.get("M1ND_EMBED_WEIGHT", "").strip()
    if raw:
        try:
            return min(1.0, max(0.0, float(raw)))
        except ValueError:
            pass
    return WEIGHTS.get(model_id, DEFAULT)
