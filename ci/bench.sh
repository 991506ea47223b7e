#!/usr/bin/env bash
# Timed benchmarks (pytest-benchmark). Each run is saved under .benchmarks/<machine>/ (--benchmark-autosave) and
# compared with the previous saved run on this machine (--benchmark-compare): the table shows both, and the run
# fails when a benchmark got slower than M1ND_BENCH_FAIL allows. Extra arguments go to pytest (e.g. a file or -k).
# Settings (README, "Benchmarks"): M1ND_BENCH_FAIL (default min:25%; empty: compare, never fail),
# M1ND_BENCH_COMPARE=0 (save without comparing), M1ND_VENV (default .venv), M1ND_BENCH_FULL, M1ND_BENCH_STDLIB_SUBSET.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${M1ND_VENV:-.venv}
if [ -x "$VENV/bin/python" ]; then
  # shellcheck disable=SC1091
  . "$VENV/bin/activate"
fi
STORAGE=.benchmarks
FAIL=${M1ND_BENCH_FAIL-min:25%}

compare=()
if [ "${M1ND_BENCH_COMPARE:-1}" != 0 ] && find "$STORAGE" -name '*.json' -print -quit 2>/dev/null | grep -q .; then
  # no argument: the newest saved run of this machine (same interpreter and platform), read before this one is saved
  compare=(--benchmark-compare)
  if [ -n "$FAIL" ]; then
    compare+=("--benchmark-compare-fail=$FAIL")
  fi
else
  echo "ci/bench.sh: no previous run under $STORAGE/ to compare with; this run is saved as the first" >&2
fi
python -m pytest -q -p no:cacheprovider bench --benchmark-only --benchmark-autosave --benchmark-storage="$STORAGE" \
  --benchmark-columns=median,mean,min,max,rounds "${compare[@]}" "$@"
