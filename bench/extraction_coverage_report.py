"""Extraction coverage against Universal Ctags (issue 12): which share of the definitions ctags lists are graph nodes.

For each language, on real corpora (public repositories, located at run time, never committed), the script

1. exports the corpus into a cache directory (the files of ``HEAD`` of a bare git mirror ``<owner>+<name>/repo``;
   a plain checkout is used as is),
2. builds the graph with the ingest pipeline (:func:`m1nd.ingest.pipeline.build_graph_parts`, no git data),
3. runs ``ctags --output-format=json --fields=+n+K+l`` over exactly the graph's files of the language (walk rules
   such as skipped ``dist/`` or ``vendor/`` directories are not extraction misses),
4. keeps ctags' definitions of the kinds in :data:`KIND_MAP` (functions, methods, classes, structs, interfaces,
   traits, enums, type aliases, plus Rust macros and TS namespaces), drops anonymous names, de-duplicates
   ``(file, line, name)``, and
5. counts a definition as covered when a node of the same file has the same label, a kind allowed by
   :data:`KIND_MAP`, and a span whose first line is ctags' line or whose header reaches it (``line_start <= line
   <= line_end``; ctags reports the name's line, the graph the first line of the definition, decorators,
   annotations and ``export`` included). The ``exact`` column counts ``line_start == line``.

Per-language corrections of ctags' output, each dropping tags that are not definitions of their name (counted in
the "dropped" column): JS/TS tags on lines that define nothing; C/C++ "functions" named after an upper-case macro of
the corpus invoked at the start of a line (``TEST_BEGIN(test_x) {``); Kotlin lambda parameters and ``for`` variables
that ctags lists as methods and the garbled names it gives backticked functions. ``.h`` files count under C or C++
by the graph's reading of their text (ctags is told the same with ``--map-C=+.h``).

Corpora: the running interpreter's standard library (Python, without its ``test/`` package), and
``M1ND_COVERAGE_CORPORA`` (``os.pathsep``-separated directories holding ``<owner>+<name>`` checkouts or
bare mirrors ``<owner>+<name>/repo``), default ``/work/.mirror``. Cache: ``M1ND_COVERAGE_CACHE``, default
``<tmp>/m1nd-coverage``. webpack and tokio are held out (issue 12's own examples) and never used here.

Usage::

    python bench/extraction_coverage_report.py [--lang rust] [--misses 30]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

#: the running interpreter's standard library (a Python corpus that is always present)
STDLIB = "stdlib"
STDLIB_EXCLUDE = ["site-packages/", "config-*/", "__pycache__/", "test/", "idlelib/idle_test/"]

#: language -> repositories (``owner/name``) used as corpora
CORPORA: dict[str, tuple[str, ...]] = {
    "python": ("encode/httpx", "pallets/click", STDLIB),
    "javascript": ("expressjs/express", "lodash/lodash", "axios/axios"),
    "typescript": ("vuejs/core", "colinhacks/zod"),
    "go": ("spf13/cobra", "gin-gonic/gin", "caddyserver/caddy"),
    "rust": ("BurntSushi/ripgrep", "serde-rs/serde", "clap-rs/clap"),
    "java": ("google/gson", "jhy/jsoup"),
    "c": ("curl/curl", "redis/redis"),
    "cpp": ("catchorg/Catch2", "aria2/aria2", "google/leveldb"),
    "csharp": ("JamesNK/Newtonsoft.Json", "serilog/serilog"),
    "ruby": ("hashicorp/vagrant", "jekyll/jekyll", "heartcombo/devise"),
    "php": ("composer/composer", "thephpleague/commonmark"),
    "kotlin": ("square/okhttp", "InsertKoinIO/koin"),
}
HELD_OUT = frozenset({"webpack/webpack", "tokio-rs/tokio"})

#: graph file languages counted under each table row
FILE_LANGS: dict[str, tuple[str, ...]] = {
    "python": ("python",),
    "javascript": ("javascript",),
    "typescript": ("typescript",),
    "go": ("go",),
    "rust": ("rust",),
    "java": ("java",),
    "c": ("c",),
    "cpp": ("cpp",),
    "csharp": ("csharp",),
    "ruby": ("ruby",),
    "php": ("php",),
    "kotlin": ("kotlin",),
}
#: ctags parser name per table row
CTAGS_LANG = {"python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "go": "Go",
              "rust": "Rust", "java": "Java", "c": "C", "cpp": "C++", "csharp": "C#", "ruby": "Ruby", "php": "PHP",
              "kotlin": "Kotlin"}

#: (language, ctags kind) -> graph kinds that count as the same definition
KIND_MAP: dict[str, dict[str, frozenset[str]]] = {
    "python": {"class": frozenset({"class"}), "function": frozenset({"fn"}), "member": frozenset({"fn"})},
    "javascript": {
        "function": frozenset({"fn"}), "method": frozenset({"fn"}), "generator": frozenset({"fn"}),
        "getter": frozenset({"fn"}), "setter": frozenset({"fn"}),
        # ctags calls a constructor function with prototype members a class
        "class": frozenset({"class", "fn"}),
    },
    "typescript": {
        "function": frozenset({"fn"}), "method": frozenset({"fn"}), "generator": frozenset({"fn"}),
        "class": frozenset({"class"}), "interface": frozenset({"interface"}), "enum": frozenset({"enum"}),
        "alias": frozenset({"type"}), "namespace": frozenset({"mod"}),
    },
    "go": {
        "func": frozenset({"fn"}), "struct": frozenset({"struct"}), "interface": frozenset({"interface"}),
        "type": frozenset({"type", "struct", "interface"}), "talias": frozenset({"type", "struct", "interface"}),
    },
    "rust": {
        "function": frozenset({"fn"}), "method": frozenset({"fn"}), "struct": frozenset({"struct"}),
        "enum": frozenset({"enum"}), "interface": frozenset({"trait"}), "typedef": frozenset({"type"}),
        "macro": frozenset({"macro"}),
    },
    "java": {
        "class": frozenset({"class"}), "interface": frozenset({"interface"}), "enum": frozenset({"enum"}),
        "method": frozenset({"fn"}), "annotation": frozenset({"interface"}),
    },
    "c": {
        "function": frozenset({"fn"}), "struct": frozenset({"struct"}), "union": frozenset({"struct"}),
        "enum": frozenset({"enum"}), "typedef": frozenset({"type"}),
    },
    "cpp": {
        "function": frozenset({"fn"}), "class": frozenset({"class"}), "struct": frozenset({"struct"}),
        "union": frozenset({"struct"}), "enum": frozenset({"enum"}), "typedef": frozenset({"type"}),
        "namespace": frozenset({"mod"}),
    },
    "csharp": {
        "class": frozenset({"class"}), "struct": frozenset({"struct"}), "interface": frozenset({"interface"}),
        # ctags lists a delegate (a method signature that is a type) as a method
        "enum": frozenset({"enum"}), "method": frozenset({"fn", "type"}), "namespace": frozenset({"mod"}),
    },
    "ruby": {
        "class": frozenset({"class"}), "module": frozenset({"mod"}), "method": frozenset({"fn"}),
        "singletonMethod": frozenset({"fn"}),
    },
    "php": {
        "class": frozenset({"class"}), "interface": frozenset({"interface"}), "trait": frozenset({"trait"}),
        "enum": frozenset({"enum"}), "function": frozenset({"fn"}), "namespace": frozenset({"mod"}),
    },
    "kotlin": {
        "class": frozenset({"class", "enum", "interface"}), "interface": frozenset({"interface"}),
        "object": frozenset({"class"}), "method": frozenset({"fn"}), "typealias": frozenset({"type"}),
    },
}


@dataclass(frozen=True)
class Tag:
    path: str
    line: int
    name: str
    kind: str


@dataclass
class Result:
    lang: str
    corpora: list[str] = field(default_factory=list)
    files: int = 0
    tags: int = 0
    covered: int = 0
    exact: int = 0
    not_defs: int = 0  # JS/TS ctags tags dropped as not being definitions
    misses: list[tuple[str, Tag]] = field(default_factory=list)  # (corpus, tag)
    missed_kinds: Counter = field(default_factory=Counter)

    @property
    def share(self) -> float:
        return self.covered / self.tags if self.tags else 1.0


def ctags_path() -> str | None:
    """The ``ctags`` binary when it is Universal Ctags with JSON output, else None."""
    exe = shutil.which("ctags")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20, check=False).stdout
        feats = subprocess.run([exe, "--list-features"], capture_output=True, text=True, timeout=20, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    if "Universal Ctags" not in out or "json" not in feats:
        return None
    return exe


def corpus_dirs() -> list[Path]:
    raw = os.environ.get("M1ND_COVERAGE_CORPORA", "/work/.mirror")
    return [Path(p) for p in raw.split(os.pathsep) if p]


def cache_dir() -> Path:
    return Path(os.environ.get("M1ND_COVERAGE_CACHE") or Path(tempfile.gettempdir()) / "m1nd-coverage")


def locate(repo: str) -> Path | None:
    """A work tree of ``repo`` (``owner/name``): a checkout, or a bare mirror exported into the cache."""
    if repo in HELD_OUT:
        raise ValueError(f"{repo} is held out of tuning")
    if repo == STDLIB:
        return Path(sysconfig.get_paths()["stdlib"])
    key = repo.replace("/", "+")
    for base in corpus_dirs():
        cand = base / key
        if not cand.is_dir():
            continue
        bare = cand / "repo" if (cand / "repo").is_dir() else cand
        if (bare / "HEAD").is_file() and (bare / "objects").is_dir():
            try:
                head = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "HEAD"], capture_output=True,
                                      text=True, check=True, timeout=60).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                continue
            dest = cache_dir() / f"{key}-{head[:12]}"
            if not (dest / ".complete").exists():
                shutil.rmtree(dest, ignore_errors=True)
                dest.mkdir(parents=True)
                _export(bare, dest)
                (dest / ".complete").write_text(head)
            return dest
        if any(cand.iterdir()):
            return cand
    return None


_JS_DEF_LINE = (
    # `function f`, `class C`, `interface I`, `type T =`, `enum E`, `namespace N`
    r"\b(?:function\s*\*?|class|interface|enum|namespace|module)\s+{n}\b|\btype\s+{n}\s*(?:<|=|$)",
    # `f = function`, `f: () =>`, `'f': async function*`, `x.f = class`, `f = async x =>` (not `f = (function…`,
    # an immediately invoked function whose result is unknown, nor `f = ({…})`, an object)
    r"{n}['\"]?\s*[:=]\s*(?:async\s+)?(?:function\b|class\b|[A-Za-z_$][\w$]*\s*=>|\((?=.*=>|\s*$))",
    # method shorthand and signatures: `f(`, `async *f<T>(`, `get f()`, `static f(`
    (r"^\s*(?:(?:static|async|get|set|public|private|protected|readonly|abstract|override|declare)\s+|\*\s*)*"
     r"['\"#]?{n}['\"]?\s*[?!]?\s*[<(]"),
)


def _js_defines(line: str, name: str) -> bool:
    """Does this JS/TS source line define ``name`` as a function, class or type (not merely mention it)?

    ctags' JavaScript parser also tags object literals held in variables, prototype assignments of non-functions
    and type-only import specifiers as classes, methods and aliases; those are not definitions."""
    n = re.escape(name)
    return any(re.search(p.format(n=n), line) for p in _JS_DEF_LINE)


_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _kotlin_defines(line: str, name: str, kind: str) -> bool:
    """Does this Kotlin line declare ``name`` (``fun``, ``class``, ``object``, ``interface``, ``typealias``)?

    ctags' Kotlin parser also tags lambda parameters (``{ a -> … }``) and ``for`` variables as methods, and garbles
    backticked names (``fun `a test`()`` comes out as bytes of memory): those are not definitions of the name."""
    if name not in line:
        return False
    n = re.escape(name)
    if kind == "method":
        return re.search(r"\bfun\b.*?(?:^|[\s.>])`?" + n + r"`?\s*[(<]", line) is not None
    if name == "Companion" and re.search(r"\bcompanion\s+object\b", line):
        return True
    return re.search(r"\b(?:class|object|interface|typealias)\s+`?" + n + r"\b", line) is not None


def _export(bare: Path, dest: Path) -> None:
    """Write the regular files of ``HEAD`` of the bare repository ``bare`` under ``dest`` (blobs missing from a
    partial mirror, symlinks and submodules are skipped)."""
    git = ["git", "--git-dir", str(bare)]
    tree = subprocess.run([*git, "ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True, timeout=600).stdout
    entries = []
    for rec in tree.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, typ, sha = meta.split()
        if typ == b"blob" and mode in (b"100644", b"100755"):
            entries.append((sha.decode(), path.decode("utf-8", "replace")))
    with subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for sha, path in entries:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
                continue
            body = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after the object
            out = dest / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(body)
        proc.stdin.close()


def ctags_defs(exe: str, root: Path, files: list[str], lang: str, dropped: list[Tag] | None = None) -> list[Tag]:
    """ctags' definitions of the kept kinds in ``files`` (relpaths under ``root``), de-duplicated; JS/TS tags on a
    line that does not define the name (:func:`_js_defines`) go to ``dropped`` instead."""
    dropped = [] if dropped is None else dropped
    lines: dict[str, list[str]] = {}
    if not files:
        return []
    cl = CTAGS_LANG[lang]
    cmd = [exe, "--output-format=json", "--fields=+n+K+l", "--extras=-F", f"--languages={cl}", "-f", "-", "-L", "-"]
    if lang == "javascript":
        cmd.insert(1, "--map-JavaScript=+.cjs")
    if lang in ("c", "cpp"):  # ctags maps ``.h`` to C++; here it is whatever the graph decided for the file
        cmd.insert(1, f"--map-{cl}=+.h")
    if lang == "typescript":
        cmd.insert(1, "--map-TypeScript=+.mts")
        cmd.insert(1, "--map-TypeScript=+.cts")
    proc = subprocess.run(cmd, input="\n".join(files) + "\n", capture_output=True, text=True, cwd=root,
                          timeout=1800, check=False)
    keep = KIND_MAP[lang]
    seen: set[tuple[str, int, str]] = set()
    out: list[Tag] = []
    macros: set[str] = set()
    for line in proc.stdout.splitlines():
        try:
            t = json.loads(line)
        except ValueError:
            continue
        if t.get("_type") != "tag" or t.get("language") != cl:
            continue
        kind, name = t.get("kind"), t.get("name", "")
        if kind == "macro":
            macros.add(name)
        # anonymous: JS ``AnonymousFunction…``, PHP ``AnonymousClass…``, C ``__anon…``, Kotlin ``<lambda>``
        if kind not in keep or not name or name.startswith(("AnonymousFunction", "AnonymousClass", "__anon", "<")):
            continue
        key = (t["path"], int(t["line"]), name)
        if key in seen:
            continue
        seen.add(key)
        tag = Tag(t["path"].removeprefix("./"), int(t["line"]), name, kind)
        if lang == "kotlin":
            # ctags' Kotlin parser garbles backticked names (``fun `a test`()`` comes out as bytes of memory): a name
            # that does not occur on its line is not a definition of that name
            src = lines.get(tag.path)
            if src is None:
                src = lines[tag.path] = (root / tag.path).read_text("utf-8", "replace").splitlines()
            if not (0 < tag.line <= len(src) and _kotlin_defines(src[tag.line - 1], name, kind)):
                dropped.append(tag)
                continue
        if lang in ("javascript", "typescript"):
            src = lines.get(tag.path)
            if src is None:
                src = lines[tag.path] = (root / tag.path).read_text("utf-8", "replace").splitlines()
            if not (0 < tag.line <= len(src) and _js_defines(src[tag.line - 1], name)):
                dropped.append(tag)
                continue
        out.append(tag)
    if lang in ("c", "cpp"):
        # ``TEST_BEGIN(test_x) {…}`` / ``JEMALLOC_ATTR(malloc) void *f(…)``: ctags reads the invocation of an
        # upper-case macro of the corpus at the start of a line as a function named after the macro; that is not a
        # definition of that name
        def macro_call(t: Tag) -> bool:
            if t.kind != "function" or t.name not in macros or not _MACRO_NAME.fullmatch(t.name):
                return False
            src = lines.get(t.path)
            if src is None:
                src = lines[t.path] = (root / t.path).read_text("utf-8", "replace").splitlines()
            return 0 < t.line <= len(src) and re.match(r"\s*" + t.name + r"\s*\(", src[t.line - 1]) is not None

        kept = [t for t in out if not macro_call(t)]
        dropped.extend(t for t in out if macro_call(t))
        out = kept
    return out


def measure(lang: str, exe: str, repos: tuple[str, ...] | None = None, workers: int | None = None) -> Result:
    """Coverage of ``lang`` over its corpora (those found); ``Result.corpora`` is empty when none is present."""
    from m1nd.graph.schema import KIND_NAMES, KINDS
    from m1nd.ingest.pipeline import build_graph_parts

    res = Result(lang)
    keep = KIND_MAP[lang]
    file_kind = KINDS["file"]
    for repo in repos or CORPORA[lang]:
        root = locate(repo)
        if root is None:
            continue
        res.corpora.append(repo)
        opts = {"exclude": STDLIB_EXCLUDE} if repo == STDLIB else {}
        parts, wr, _git, _stats = build_graph_parts(root, workers=workers, git_window_days=1, **opts)
        # the graph's file languages (a ``.h`` file is C or C++ by its text, not by its name)
        files = sorted(n.source_path for n in parts.nodes
                       if n.kind == file_kind and n.lang in FILE_LANGS[lang])
        res.files += len(files)
        by_file: dict[str, list[tuple[str, str, int, int]]] = defaultdict(list)
        for n in parts.nodes:
            kind = KIND_NAMES[n.kind]
            if kind not in ("file", "dir"):
                by_file[n.source_path].append((n.label, kind, n.line_start, n.line_end))
        dropped: list[Tag] = []
        tags = ctags_defs(exe, root, files, lang, dropped)
        res.not_defs += len(dropped)
        for tag in tags:
            res.tags += 1
            ok = keep[tag.kind]
            hit = exact = False
            for label, kind, ls, le in by_file.get(tag.path, ()):
                if label == tag.name and kind in ok and ls <= tag.line <= le:
                    hit = True
                    exact = exact or ls == tag.line
            if hit:
                res.covered += 1
                res.exact += exact
            else:
                res.misses.append((repo, tag))
                res.missed_kinds[tag.kind] += 1
    return res


def format_table(results: list[Result]) -> str:
    rows = ["| language | corpora | files | ctags defs | covered | exact line | missed by kind | dropped (not defs) |",
            "|---|---|---:|---:|---:|---:|---|---:|"]
    for r in results:
        if not r.corpora:
            rows.append(f"| {r.lang} | (no corpus found) | | | | | | |")
            continue
        mk = ", ".join(f"{k} {n}" for k, n in r.missed_kinds.most_common())
        rows.append(f"| {r.lang} | {', '.join(r.corpora)} | {r.files} | {r.tags} | {100 * r.share:.1f} % "
                    f"({r.covered}) | {100 * r.exact / max(r.tags, 1):.1f} % | {mk} | {r.not_defs} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--lang", action="append", choices=sorted(CORPORA), help="only these languages")
    ap.add_argument("--misses", type=int, default=20, help="misses listed per language (default 20)")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    exe = ctags_path()
    if exe is None:
        print("Universal Ctags (with JSON output) not found: apt-get install universal-ctags", file=sys.stderr)
        return 2
    results = [measure(lang, exe, workers=args.workers) for lang in (args.lang or sorted(CORPORA))]
    print(format_table(results))
    for r in results:
        if r.misses and args.misses:
            print(f"\n## {r.lang}: {len(r.misses)} missed")
            for repo, t in r.misses[: args.misses]:
                print(f"  {repo}  {t.path}:{t.line}  {t.kind} {t.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
