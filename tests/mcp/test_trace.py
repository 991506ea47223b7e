"""``trace`` (issue 15 item 6): stack-trace frames of five runtimes mapped to graph nodes by file and line, suspects
ranked by spreading from them, unmapped frames listed. Parsing is checked on the text; mapping and ranking on a real
ingested polyglot repository, through ``m1nd trace`` and through the official MCP SDK client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from test_server_support import anyio_backend, full_env, ingest_fixture  # noqa: F401 — fixtures are used by name

from m1nd.stacktrace import parse

REPO = {
    "app/__init__.py": "",
    "app/parser.py": '''\
"""Parse order lines."""


def parse_line(line):
    """Split one order line."""
    name, qty = line.split(",")
    return name, to_int(qty)


def to_int(text):
    """A quantity."""
    return int(text)


def parse_all(text):
    """Every order line of a text."""
    return [parse_line(x) for x in text.splitlines()]
''',
    "app/cli.py": '''\
from app.parser import parse_all


def main(path):
    with open(path) as f:
        return parse_all(f.read())
''',
    "web/src/cart.ts": '''\
export function total(items: number[]): number {
  let sum = 0;
  for (const x of items) {
    sum += check(x);
  }
  return sum;
}

function check(x: number): number {
  if (x < 0) throw new Error("negative");
  return x;
}
''',
    "svc/main.go": '''\
package main

func divide(a, b int) int {
\treturn a / b
}

func main() {
\tprintln(divide(1, 0))
}
''',
    "rs/Cargo.toml": '[package]\nname = "rs"\nversion = "0.1.0"\n',
    "rs/src/main.rs": '''\
fn parse(s: &str) -> i32 {
    s.parse().unwrap()
}

fn main() {
    println!("{}", parse("x"));
}
''',
    "jv/src/main/java/com/acme/Billing.java": '''\
package com.acme;

public class Billing {
    public int charge(int cents) {
        if (cents < 0) {
            throw new IllegalArgumentException("negative");
        }
        return cents;
    }
}
''',
    "other/app/parser.py": "def unrelated():\n    return 1\n",
}

PYTHON = '''\
Traceback (most recent call last):
  File "/home/dev/repo/app/cli.py", line 6, in main
    return parse_all(f.read())
  File "/home/dev/repo/app/parser.py", line 17, in parse_all
    return [parse_line(x) for x in text.splitlines()]
  File "/usr/lib/python3.11/json/decoder.py", line 3, in helper
  File "/home/dev/repo/app/parser.py", line 6, in parse_line
    name, qty = line.split(",")
ValueError: not enough values to unpack (expected 2, got 1)
'''
JAVASCRIPT = '''\
Error: negative
    at check (/srv/build/web/src/cart.ts:10:20)
    at total (/srv/build/web/src/cart.ts:4:12)
    at Object.<anonymous> (/srv/build/node_modules/jest/run.js:1:1)
    at node:internal/main/run_main_module:23:47
'''
FIREFOX = "check@http://localhost:8080/web/src/cart.ts:10:20\ntotal@http://localhost:8080/web/src/cart.ts:4:12\n"
GO = '''\
panic: runtime error: integer divide by zero

goroutine 1 [running]:
main.divide(...)
\t/home/dev/repo/svc/main.go:4
main.main()
\t/home/dev/repo/svc/main.go:8 +0x1d
exit status 2
'''
RUST = '''\
thread 'main' panicked at src/main.rs:2:15:
called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }
stack backtrace:
   0: rust_begin_unwind
             at /rustc/82e1608dfa6e0b5569232559e3d385fea5a93112/library/std/src/panicking.rs:645:5
   1: rs::parse
             at ./src/main.rs:2:5
   2: rs::main
             at ./src/main.rs:6:20
'''
JAVA = '''\
Exception in thread "main" java.lang.IllegalArgumentException: negative
\tat com.acme.Billing.charge(Billing.java:6)
\tat com.acme.Main.main(Main.java:3)
\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
'''

PARSE_LINE = "file::app/parser.py::fn::parse_line"
TO_INT = "file::app/parser.py::fn::to_int"


# -- parsing --------------------------------------------------------------------------------------------------------
def test_python_frames_come_out_innermost_first() -> None:
    frames = parse(PYTHON)
    assert [(f.path, f.line, f.function) for f in frames] == [
        ("/home/dev/repo/app/parser.py", 6, "parse_line"), ("/usr/lib/python3.11/json/decoder.py", 3, "helper"),
        ("/home/dev/repo/app/parser.py", 17, "parse_all"), ("/home/dev/repo/app/cli.py", 6, "main")]
    assert {f.language for f in frames} == {"python"}


@pytest.mark.parametrize(("text", "expected"), [
    (JAVASCRIPT, [("/srv/build/web/src/cart.ts", 10, "check"), ("/srv/build/web/src/cart.ts", 4, "total"),
                  ("/srv/build/node_modules/jest/run.js", 1, "Object.<anonymous>"),
                  ("node:internal/main/run_main_module", 23, None)]),
    (FIREFOX, [("http://localhost:8080/web/src/cart.ts", 10, "check"),
               ("http://localhost:8080/web/src/cart.ts", 4, "total")]),
    (GO, [("/home/dev/repo/svc/main.go", 4, "main.divide"), ("/home/dev/repo/svc/main.go", 8, "main.main")]),
    (RUST, [("src/main.rs", 2, None),
            ("/rustc/82e1608dfa6e0b5569232559e3d385fea5a93112/library/std/src/panicking.rs", 645,
             "rust_begin_unwind"), ("./src/main.rs", 2, "rs::parse"), ("./src/main.rs", 6, "rs::main")]),
    (JAVA, [("com/acme/Billing.java", 6, "com.acme.Billing.charge"), ("com/acme/Main.java", 3, "com.acme.Main.main"),
            ("", None, "java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0")]),
], ids=["v8", "firefox", "go", "rust", "java"])
def test_other_runtimes(text: str, expected: list[tuple]) -> None:
    assert [(f.path, f.line, f.function) for f in parse(text)] == expected


def test_text_without_frames() -> None:
    assert parse("Segmentation fault (core dumped)\nsomething else: 12\n") == []


# -- mapping and ranking on a real graph ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def poly(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("trace")
    repo = root / "repo"
    for rel, text in REPO.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    env = {"M1ND_HOME": str(root / "home"), "M1ND_WORKSPACE": str(repo), "M1ND_EMBEDDER": "hashing",
           "SKBUILD_EDITABLE_VERBOSE": "0"}
    ingest_fixture(env, repo)
    return env


def trace_cli(env: dict[str, str], text: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "m1nd", "trace", *args], input=text, capture_output=True, text=True,
                          env=full_env(env), timeout=300)


def traced(env: dict[str, str], text: str) -> dict:
    r = trace_cli(env, text, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_python_trace_ranks_frames_then_their_neighbours(poly: dict[str, str]) -> None:
    r = traced(poly, PYTHON)
    assert r["frames_total"] == 4 and len(r["mapped"]) == 3
    assert [m["node_id"] for m in r["mapped"]] == [PARSE_LINE, "file::app/parser.py::fn::parse_all",
                                                   "file::app/cli.py::fn::main"]
    (lib,) = r["unmapped"]
    assert lib["path"] == "/usr/lib/python3.11/json/decoder.py" and "not in the graph" in lib["reason"]
    top = r["suspects"]
    assert top[0]["node_id"] == PARSE_LINE and top[0]["in_trace"] and top[0]["frames"] == [0]
    scores = [s["score"] for s in top]
    assert scores == sorted(scores, reverse=True)
    helper = next(s for s in top if s["node_id"] == TO_INT)  # called by the innermost frame, not in the trace
    assert helper["in_trace"] is False and helper["hops_from_trace"] >= 1
    # The deeper path other/app/parser.py does not steal the frame: the longest matching suffix wins.
    assert all("other/" not in m["node_id"] for m in r["mapped"])


@pytest.mark.parametrize(("text", "innermost", "unmapped"), [
    (JAVASCRIPT, "file::web/src/cart.ts::fn::check", 2),
    (FIREFOX, "file::web/src/cart.ts::fn::check", 0),
    (GO, "file::svc/main.go::fn::divide", 0),
    (RUST, "file::rs/src/main.rs::fn::parse", 1),
    (JAVA, "file::jv/src/main/java/com/acme/Billing.java::class::Billing::fn::charge", 2),
], ids=["v8", "firefox", "go", "rust", "java"])
def test_each_runtime_maps_to_its_definitions(poly: dict[str, str], text: str, innermost: str,
                                              unmapped: int) -> None:
    r = traced(poly, text)
    assert r["mapped"][0]["node_id"] == innermost
    assert r["suspects"][0]["node_id"] == innermost
    assert len(r["unmapped"]) == unmapped and all(u["reason"] for u in r["unmapped"])


def test_ambiguous_and_unknown_files_are_listed_not_guessed(poly: dict[str, str]) -> None:
    r = traced(poly, 'Traceback (most recent call last):\n  File "parser.py", line 2, in unrelated\n'
                     '  File "/x/y/nothing_here.py", line 1, in f\nKeyError: 1\n')
    assert r["mapped"] == [] and r["suspects"] == [] and "ingest" in r["hint"]
    reasons = {u["path"]: u["reason"] for u in r["unmapped"]}
    assert reasons["parser.py"].startswith("ambiguous: 2 ingested files")
    assert "not in the graph" in reasons["/x/y/nothing_here.py"]


def test_text_output_and_bad_input(poly: dict[str, str], tmp_path: Path) -> None:
    f = tmp_path / "go.txt"
    f.write_text(GO, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "m1nd", "trace", str(f)], capture_output=True, text=True,
                       env=full_env(poly), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "2 of 2 frames mapped"
    assert "file::svc/main.go::fn::divide" in r.stdout.splitlines()[1]
    empty = trace_cli(poly, "   \n")
    assert empty.returncode == 2 and "the trace is empty" in empty.stderr
    missing = subprocess.run([sys.executable, "-m", "m1nd", "trace", str(tmp_path / "nope.txt")],
                             capture_output=True, text=True, env=full_env(poly), timeout=300)
    assert missing.returncode == 2 and "cannot read" in missing.stderr and "Traceback" not in missing.stderr


@pytest.mark.anyio
async def test_trace_tool_through_the_sdk_client(poly: dict[str, str]) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve", "--tools", "graph"],
                                   env=full_env(poly))
    async with Client(params, mode="legacy") as client:
        assert "trace" in {t.name for t in (await client.list_tools()).tools}
        res = await client.call_tool("trace", {"trace": JAVA, "top_k": 3})
        assert res.is_error is False, res.content[0].text
        r = res.structured_content
        assert r["suspects"][0]["node_id"].endswith("::class::Billing::fn::charge")
        assert len(r["suspects"]) <= 3 and len(r["unmapped"]) == 2
        nothing = await client.call_tool("trace", {"trace": "no frames at all"})
        assert nothing.is_error is False and nothing.structured_content["suspects"] == []
        assert "no stack frame recognised" in nothing.structured_content["hint"]
