#!/usr/bin/env bash
# The README's test command: a fresh virtualenv, the extension built from source, the test extras installed
# from PyPI, then the whole suite (tests/ and bench/ as correctness checks) — once on the release build and once
# on a checked build (bounds and initialisation checks compiled into the Cython kernels).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${M1ND_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
# shellcheck disable=SC1091
. "$VENV/bin/activate"
python -m pip install -q --upgrade pip
echo "== building m1nd from source (release) and installing test and benchmark dependencies" >&2
python -m pip install -q ".[test,bench]"

run_suite() {
  # Exit code 5 means "no tests collected": that is a failure here.
  python -m pytest -q -p no:cacheprovider "$@"
}

echo "== test suite (release build)" >&2
run_suite tests bench --benchmark-disable

if [ "${M1ND_SKIP_CHECKED:-0}" != 1 ]; then
  echo "== test suite (checked build: M1ND_BOUNDSCHECK=ON)" >&2
  M1ND_BOUNDSCHECK=ON python -m pip install -q --force-reinstall --no-deps .
  run_suite tests -m "not slow"
  # Leave the release build installed.
  python -m pip install -q --force-reinstall --no-deps .
fi
