"""Frames of an error output or stack trace (issue 15 item 6): Python tracebacks, JavaScript/TypeScript (V8 and
Firefox/Safari styles), Go panics, Rust panics and backtraces, and Java/Kotlin exceptions.

Only the text is read here (no graph): each recognised frame gives a file path as the runtime printed it, a line and
the function. Frames come out innermost first, whatever the language's own order (Python prints the innermost
frame last), because the innermost frames are the likeliest suspects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_FRAMES = 200

_PY_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+?))?\s*$')
# V8: "    at fn (/a/b.js:10:5)", "    at /a/b.js:10:5", "    at async fn (file:///a/b.mjs:3:1)"
_JS_FRAME = re.compile(r"^\s*at (?:(?:async )?(?P<func>[^()]+?) \()?(?P<path>[^\s()]+?):(?P<line>\d+)(?::\d+)?\)?\s*$")
# Firefox / Safari: "fn@http://host/a/b.js:10:5", "@/a/b.js:3:1"
_JS_AT = re.compile(r"^\s*(?P<func>[^@\s]*)@(?P<path>\S+?):(?P<line>\d+)(?::\d+)?\s*$")
_GO_FUNC = re.compile(r"^(?P<func>[\w./*()\[\]{}\-]+)\(.*\)\s*$")
_GO_FILE = re.compile(r"^\t(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$")
_RUST_PANIC = re.compile(r"panicked at (?:'.*?', )?(?P<path>[^\s:]+\.rs):(?P<line>\d+)(?::\d+)?")
_RUST_FUNC = re.compile(r"^\s*\d+:\s+(?:0x[0-9a-f]+ - )?(?P<func>\S.*?)\s*$")
_RUST_AT = re.compile(r"^\s+at (?P<path>\S+\.rs):(?P<line>\d+)(?::\d+)?\s*$")
_JAVA = re.compile(r"^\s*at (?P<func>[\w$.<>/]+)\((?P<file>[^():]+?)(?::(?P<line>\d+))?\)\s*$")
_JAVA_EXT = (".java", ".kt", ".scala", ".groovy")


@dataclass
class Frame:
    language: str
    path: str  # as printed (Java: the package directories joined to the file name)
    line: int | None
    function: str | None
    text: str  # the trace line(s) it came from

    def to_json(self) -> dict[str, object]:
        return {"language": self.language, "path": self.path, "line": self.line, "function": self.function,
                "text": self.text}


def _java_path(func: str, file: str) -> str:
    """``com.example.Foo.bar`` + ``Foo.java`` -> ``com/example/Foo.java`` (the package is the qualifier before the
    class; nested classes ``Outer$Inner`` keep the outer file)."""
    parts = func.split("/")[-1].split(".")
    package = [p for p in parts[:-2] if p and p[0].islower()]
    return "/".join([*package, file])


def parse(text: str) -> list[Frame]:
    """Every frame recognised in ``text``, innermost first."""
    lines = text.splitlines()
    python: list[Frame] = []
    others: list[Frame] = []
    go_func: str | None = None
    rust_func: str | None = None
    for raw in lines:
        m = _PY_FRAME.match(raw)
        if m:
            python.append(Frame("python", m["path"], int(m["line"]), m["func"], raw.strip()))
            continue
        m = _JAVA.match(raw)
        if m and m["file"].endswith(_JAVA_EXT):
            others.append(Frame("java", _java_path(m["func"], m["file"]), int(m["line"]) if m["line"] else None,
                                m["func"], raw.strip()))
            continue
        if m and not m["line"]:  # "at x.Y(Native Method)" / "(Unknown Source)": a frame with no file
            others.append(Frame("java", "", None, m["func"], raw.strip()))
            continue
        m = _RUST_AT.match(raw)
        if m:
            others.append(Frame("rust", m["path"], int(m["line"]), rust_func, raw.strip()))
            rust_func = None
            continue
        m = _JS_FRAME.match(raw) or _JS_AT.match(raw)
        if m and not m["path"].endswith(".go"):
            others.append(Frame("javascript", m["path"], int(m["line"]), m["func"] or None, raw.strip()))
            continue
        m = _GO_FILE.match(raw)
        if m:
            others.append(Frame("go", m["path"], int(m["line"]), go_func, raw.strip()))
            go_func = None
            continue
        m = _RUST_PANIC.search(raw)
        if m:
            others.append(Frame("rust", m["path"], int(m["line"]), None, raw.strip()))
            continue
        m = _RUST_FUNC.match(raw)
        if m:
            rust_func = m["func"]
            continue
        m = _GO_FUNC.match(raw)
        go_func = m["func"] if m else None
    # Python prints the innermost frame last; every other runtime prints it first.
    return (python[::-1] + others)[:MAX_FRAMES]
