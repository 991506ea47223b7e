"""Change-localization report: ``activate`` beside BM25 on every mirrored project, as a markdown table.

Why a script beside ``bench/test_localization.py``: ranking work needs the figures after every change, in seconds,
without pytest. It measures exactly what the bench does (same module, :mod:`localization`), and keeps each
project's checkout and ingested m1nd home under ``bench/corpora/localization/`` keyed by the mirror's HEAD, so a
run after the first one costs the queries only.

    python bench/localization_report.py                       # every mirror, markdown tables on stdout
    python bench/localization_report.py --project click --project gin
    python bench/localization_report.py --reingest            # after changing ingest/extract/index code
    python bench/localization_report.py --json > figures.json # figures and per-query ranks
    python bench/localization_report.py --activate-args '{"dimensions": ["structural", "temporal"]}'

Mirrors come from ``$M1ND_LOCALIZATION_MIRRORS`` (colon-separated bare git dirs) or ``/work/.mirror/*/repo``
(held-out projects excluded); see :mod:`localization`. Progress and ingest notes go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import localization as L  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", action="append", default=[], metavar="NAME",
                    help="only projects whose owner/name contains NAME (repeatable)")
    ap.add_argument("--json", action="store_true", help="print figures and per-query ranks as JSON")
    ap.add_argument("--reingest", action="store_true",
                    help="full re-ingest of every selected project first (after changing ingest code)")
    ap.add_argument("--max-queries", type=int, default=L.DEFAULT_QUERIES, help="queries per project (default 100)")
    ap.add_argument("--no-embeddings", action="store_true",
                    help="skip the embedding model: no code vectors at ingest, no 'm1nd' (with embeddings) column")
    ap.add_argument("--rankers", default=None,
                    help=f"comma-separated subset of {','.join(L.RANKERS)} (default: all)")
    ap.add_argument("--activate-args", default=None, metavar="JSON",
                    help='extra activate arguments for both m1nd rankers, e.g. \'{"dimensions": ["structural"]}\'')
    ap.add_argument("--cache", type=Path, default=L.CACHE, help=f"checkouts and homes (default {L.CACHE})")
    ap.add_argument("--list", action="store_true", help="list the mirrors found and exit")
    a = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    for noisy in ("m1nd", "bm25s"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    mirrors = L.select(L.discover(), a.project)
    if a.list:
        for m in mirrors:
            print(f"{m.name}\t{m.head[:12]}\t{m.git_dir}")
        return 0
    if not mirrors:
        print("error: no mirrors found (or none matches --project). Recover: fetch repositories into "
              f"{L.MIRROR_ROOT}/<owner>+<name>/repo, or set M1ND_LOCALIZATION_MIRRORS=/path/a.git:/path/b.git",
              file=sys.stderr)
        return 1
    try:
        args = json.loads(a.activate_args) if a.activate_args else None
    except json.JSONDecodeError as e:
        print(f"error: --activate-args is not valid JSON ({e})", file=sys.stderr)
        return 2
    rankers = tuple(r.strip() for r in a.rankers.split(",")) if a.rankers else L.RANKERS
    if a.no_embeddings:
        rankers = tuple(r for r in rankers if r != "m1nd")
    unknown = [r for r in rankers if r not in L.RANKERS]
    if unknown:
        print(f"error: unknown ranker(s) {', '.join(unknown)}; choose from {', '.join(L.RANKERS)}", file=sys.stderr)
        return 2

    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    progress = L.stderr_progress()
    rows, per_query = [], {}
    started = time.perf_counter()
    for m in mirrors:
        project = L.prepare(m, cache=a.cache, reingest=a.reingest, embed=not a.no_embeddings, say=say)
        try:
            t0 = time.perf_counter()
            s, ev = L.evaluate_project(project, max_queries=a.max_queries, activate_args=args, rankers=rankers,
                                       progress=progress)
            row = L.summary_row(m, s, ev)
            row["ingest_s"] = project.ingest_s
            row["eval_s"] = round(time.perf_counter() - t0, 2)
            rows.append(row)
            per_query[m.name] = ev.per_query
            say(f"{m.name}: {len(s.queries)} queries in {row['eval_s']:.1f} s")
        finally:
            project.close()
    if a.json:
        print(json.dumps({"projects": rows, "per_query": per_query, "activate_args": args}, indent=2))
    else:
        print(L.markdown_tables(rows))
        backends = {r["project"]: r["rankers"]["m1nd"]["notes"].get("semantic_backends") for r in rows
                    if "m1nd" in r["rankers"]}
        if backends:
            print("\nsemantic backend of `m1nd activate`: " + "; ".join(
                f"{p.split('/')[-1]} {', '.join(f'{b} {n}' for b, n in (v or {}).items())}"
                for p, v in backends.items()))
    say(f"{len(rows)} projects, {sum(r['queries'] for r in rows)} queries, {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
