"""Receiver types on the stdlib (issue 12 item 5): what became of the call references that were ambiguous before.

The baseline, ``data/stdlib_ambiguous_calls_5be154a.json.gz``, lists the references that the resolver left
ambiguous on this machine's stdlib (CPython 3.11.7) at commit 5be154a: ``[file, owner, called name, count]``. This
report ingests the stdlib again (walk, extract, resolve, one worker), records each reference's outcome and matches
the baseline by (file, owner, called name):

- **linked**: the reference now gives an edge (through the receiver's type, or a mixin's subclasses);
- **settled**: no edge by rule, not a guess: a method of a type outside the graph (``str``, ``open()``'s file), a
  call of a variable, a mixin's method that no type of the graph defines; the extractor no longer emits a
  reference for a call of a variable, which counts here too;
- **ambiguous** / **unresolved**: still so.

Resolved share = (linked + settled) / baseline. ``--sample N`` prints N random newly linked references with
``file:line`` and the edges' targets (several when the receiver may be of several types that define the method
differently: each is a possible callee), for checking by hand.

Run: ``python bench/receiver_types_report.py [--sample 50]`` or ``pytest bench/test_receiver_types_stdlib.py -s``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import sysconfig
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BASELINE = Path(__file__).parent / "data" / "stdlib_ambiguous_calls_5be154a.json.gz"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
EXCLUDE = ["site-packages/"]


@dataclass
class Outcomes:
    baseline: int = 0
    linked: int = 0
    settled: int = 0
    ambiguous: int = 0
    unresolved: int = 0
    by_kind: Counter = field(default_factory=Counter)  # (reference kind, outcome) -> count, whole graph
    #: (file, owner, kind, name, edge targets) of baseline references that are now linked
    newly_linked: list[tuple[str, str, str, str, str]] = field(default_factory=list)

    @property
    def share(self) -> float:
        return (self.linked + self.settled) / self.baseline if self.baseline else 0.0


def load_baseline() -> dict[str, Any]:
    with gzip.open(BASELINE, "rb") as fh:
        return json.loads(fh.read())


def _called(kind: str, name: str) -> str:
    return name.rpartition(":")[2] if kind == "typed_call" else name.rsplit(".", 1)[-1]


def record_outcomes(root: Path) -> list[tuple[str, str, str, str, int, str, str | None]]:
    """Ingest ``root`` and return each reference's outcome: (file, owner local id, kind, name, count, outcome,
    edge targets, space-separated: a receiver of several possible types calls each one's method). The resolver is
    the real one; a subclass only watches ``_resolve_ref`` and ``edge``."""
    from m1nd.ingest.extract import extract_many
    from m1nd.ingest.walker import read_text, walk

    resolve_mod = sys.modules.get("m1nd.ingest.resolve")
    if resolve_mod is None or not hasattr(resolve_mod, "_Resolver"):
        import importlib

        importlib.import_module("m1nd.ingest.resolve")
        resolve_mod = sys.modules["m1nd.ingest.resolve"]
    base = resolve_mod._Resolver
    rows: list[tuple[str, str, str, str, int, str, str | None]] = []

    class Watching(base):  # type: ignore[misc, valid-type]
        targets: list[int] = []

        def edge(self, src: int, dst: int, rel: int, factor: float, n: int = 1) -> None:
            if src >= 0 and dst >= 0 and src != dst:
                self.targets.append(dst)
            super().edge(src, dst, rel, factor, n)

        def _resolve_ref(self, f: Any, owner: int, kind: str, name: str, n: int) -> None:
            amb, unres = self.ambiguous, self.unresolved
            self.targets = []
            super()._resolve_ref(f, owner, kind, name, n)
            if self.ambiguous > amb:
                oc = "ambiguous"
            elif self.unresolved > unres:
                oc = "unresolved"
            elif self.targets:
                oc = "linked"
            else:
                oc = "settled"
            own = self.ext[owner]
            pre = f"file::{f.rel}::"
            rows.append(
                (
                    f.rel,
                    own[len(pre) :] if own.startswith(pre) else "",
                    kind,
                    name,
                    n,
                    oc,
                    " ".join(self.ext[t] for t in self.targets) if oc == "linked" else None,
                )
            )

    wr = walk(root, exclude=EXCLUDE)
    items, kept = [], []
    for wf in wr.files:
        got = read_text(wf.abspath)
        if got is not None:
            items.append((wf.relpath, got[0], wf.lang))
            kept.append(wf)
    blobs = extract_many(items, 1)
    r = Watching({wf.relpath: b for wf, b in zip(kept, blobs)}, None, {}, None)
    r.build_nodes()
    r.build_indexes()
    r.resolve_refs()
    return rows


def measure(root: Path = STDLIB) -> Outcomes:
    base = load_baseline()
    want: dict[tuple[str, str, str], int] = {(a, b, m): n for a, b, m, n in base["refs"]}
    rows = record_outcomes(root)
    res = Outcomes(baseline=sum(want.values()))
    got: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    linked_rows: dict[tuple[str, str, str], list] = defaultdict(list)
    for rel, owner, kind, name, n, oc, dst in rows:
        res.by_kind[(kind, oc)] += n
        key = (rel, owner, _called(kind, name))
        if key in want:
            got[key][oc] += n
            if oc == "linked":
                linked_rows[key].append((rel, owner, kind, name, dst))
    for key, n in want.items():
        c = got.get(key, Counter())
        left = n
        # the baseline count of a key is spread over its new outcomes, still-ambiguous ones first
        for oc in ("ambiguous", "unresolved", "linked", "settled"):
            take = min(left, c[oc])
            setattr(res, oc, getattr(res, oc) + take)
            left -= take
        res.settled += left  # references the extractor no longer emits (calls of variables)
        if c["ambiguous"] == 0 and c["linked"]:
            res.newly_linked.extend(linked_rows[key])
    return res


def source_line(root: Path, rel: str, owner: str, name: str) -> tuple[int, str]:
    """First line of the owner's text that calls ``name`` (for the hand check)."""
    from m1nd.ingest.extract import extract_file

    text = (root / rel).read_text(errors="replace")
    lines = text.splitlines()
    lo, hi = 1, len(lines)
    if owner:
        blob = extract_file(rel, text.encode(), "python")
        d = next((d for d in blob["definitions"] if d["id"] == owner), None)
        if d is not None:
            lo, hi = d["line_start"], d["line_end"]
    pat = re.compile(r"\b" + re.escape(name) + r"\(")
    for i in range(lo - 1, hi):
        if pat.search(lines[i]):
            return i + 1, lines[i].strip()
    return lo, ""


def format_report(res: Outcomes) -> str:
    def pct(x: int) -> str:
        return f"{100 * x / res.baseline:.1f} %" if res.baseline else "-"

    counts = (
        f"linked {res.linked} ({pct(res.linked)}), settled {res.settled} ({pct(res.settled)}), "
        f"still ambiguous {res.ambiguous} ({pct(res.ambiguous)}), unresolved {res.unresolved} "
        f"({pct(res.unresolved)})"
    )
    out = [
        f"baseline (ambiguous at 5be154a): {res.baseline}",
        counts,
        f"resolved share (linked + settled): {100 * res.share:.1f} %",
        "ambiguous now by reference kind: "
        + ", ".join(f"{k} {v}" for (k, oc), v in sorted(res.by_kind.items()) if oc == "ambiguous"),
    ]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sample", type=int, default=0, help="print N random newly linked references")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    base = load_baseline()
    if base["python"] != sys.version.split()[0]:
        print(f"note: the baseline is for Python {base['python']}, this is {sys.version.split()[0]}")
    res = measure()
    print(format_report(res))
    if args.sample:
        rng = random.Random(args.seed)
        for rel, owner, kind, name, dst in rng.sample(
            res.newly_linked, min(args.sample, len(res.newly_linked))
        ):
            line, txt = source_line(STDLIB, rel, owner, _called(kind, name))
            shown = " ".join(t.removeprefix("file::") for t in (dst or "").split())
            print(f"{rel}:{line} | {kind} {name} -> {shown} | {txt[:100]}")


if __name__ == "__main__":
    main()
