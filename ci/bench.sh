#!/usr/bin/env bash
# Timed benchmarks (pytest-benchmark). Saves a run under .benchmarks/ and compares with the previous one.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${M1ND_VENV:-.venv}
# shellcheck disable=SC1091
[ -x "$VENV/bin/python" ] && . "$VENV/bin/activate"
python -m pytest -q -p no:cacheprovider bench --benchmark-only --benchmark-autosave \
  --benchmark-columns=median,mean,min,max,rounds "$@"
