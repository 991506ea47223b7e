"""File discovery for one ingest root (graph.md §10).

``walk(root)`` lists the files to ingest: inside a git work tree the list comes from ``git ls-files --cached`` and
``git ls-files --others --exclude-standard`` (so ``.gitignore`` is honoured), otherwise from an ``os.scandir`` walk
that honours the ``.gitignore`` files it meets. On top of that list the same rules always apply, in this order:

1. relpaths containing ``::`` or ``#`` are skipped with a warning (they would break external ids, §3);
2. always-skipped directories (``.git node_modules __pycache__ ...``) anywhere in the path, and the conventional
   output directories (``build env dist vendor target``) unless git tracks the file;
3. hidden files / directories (a path component starting with ``.``) unless ``include_dotfiles`` or one of the
   ``dotfile_patterns`` (gitignore-style: ``x/**``, ``x/*``, exact names) matches;
4. lockfiles; files whose language cannot be detected (see :func:`detect_lang`);
5. symlinks (never followed) and anything that is not a regular file;
6. files larger than ``max_file_bytes`` (``skipped["large"]``);
7. the caller's gitignore-style ``exclude`` patterns, applied last.

Binary / encoding checks need the file bytes, which the orchestrator reads exactly once: :func:`read_text`
returns ``None`` for a binary or undecodable file and the caller counts it in ``skipped["binary"]`` (``walk``
itself never reads file contents, so its ``skipped["binary"]`` is always 0).
"""

from __future__ import annotations

import logging
import os
import re
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from m1nd.ingest._git import run_git

log = logging.getLogger(__name__)

ALWAYS_SKIPPED_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".next",
    }
)
#: conventional output / dependency directories: skipped unless git tracks the file (a project may well keep
#: sources in ``build/`` or vendored code in ``vendor/``: what is committed is part of the project, issue 14)
UNTRACKED_SKIPPED_DIRS = frozenset({"env", "target", "dist", "build", "vendor"})
LOCKFILES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "Cargo.lock",
        "poetry.lock",
        "uv.lock",
        "go.sum",
    }
)

#: extension (lower case, no dot) -> language
EXT_LANG: dict[str, str] = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "c",  # C++ when its text says so (the extractor's blob then says "cpp")
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hh": "cpp",
    "hpp": "cpp",
    "hxx": "cpp",
    "h++": "cpp",
    "inl": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "rake": "ruby",
    "gemspec": "ruby",
    "php": "php",
    "kt": "kotlin",
    "kts": "kotlin",
    "md": "markdown",
    "markdown": "markdown",
    "toml": "config",
    "yaml": "config",
    "yml": "config",
    "json": "config",
    "ini": "config",
    "cfg": "config",
}
#: exact basenames that are config files although their extension says nothing (``go.mod`` is needed by Go
#: module resolution, §7)
NAME_LANG: dict[str, str] = {".env.example": "config", "go.mod": "config"}
#: common source extensions without a bundled grammar: ingested as lang "other" (regex fallback, §6)
OTHER_EXTS = frozenset(
    {
        "swift",
        "scala",
        "sc",
        "sh",
        "bash",
        "zsh",
        "lua",
        "pl",
        "pm",
        "dart",
        "ex",
        "exs",
        "erl",
        "hrl",
        "hs",
        "ml",
        "mli",
        "clj",
        "cljs",
        "groovy",
        "zig",
        "nim",
        "jl",
        "r",
        "m",
        "mm",
        "fs",
        "fsx",
        "vb",
        "ps1",
        "elm",
        "v",
        "cr",
        "d",
    }
)

_NUL_WINDOW = 8192


@dataclass(slots=True, frozen=True)
class WalkedFile:
    relpath: str  # POSIX, NFC, relative to the root
    abspath: Path
    size: int
    mtime_ns: int
    lang: str


@dataclass(slots=True)
class WalkResult:
    files: list[WalkedFile]
    skipped: dict[str, int] = field(default_factory=lambda: {"large": 0, "binary": 0, "ignored": 0})
    warnings: list[str] = field(default_factory=list)
    source: str = "scandir"  # "git" when the list came from git ls-files


def detect_lang(relpath: str) -> str | None:
    """Language of a file from its name (graph.md §6 / §8), or None when it is not ingested."""
    base = relpath.rsplit("/", 1)[-1]
    got = NAME_LANG.get(base)
    if got is not None:
        return got
    dot = base.rfind(".")
    if dot <= 0:  # no extension, or a bare dotfile like ".bashrc"
        return None
    ext = base[dot + 1 :].lower()
    got = EXT_LANG.get(ext)
    if got is not None:
        return got
    if ext in OTHER_EXTS:
        return "other"
    return None


# ----------------------------------------------------------------------------------------------- gitignore


class GitignoreMatcher:
    """A small gitignore-style pattern matcher.

    Supported: ``*`` (anything but ``/``), ``**`` (any number of directories), ``?``, ``[...]`` classes,
    a trailing ``/`` (directories only), a leading ``/`` or any inner ``/`` (anchored at the root; otherwise the
    pattern matches a name at any depth), ``!`` negation (the last matching pattern wins), ``#`` comments and
    blank patterns (ignored). A pattern that matches a directory matches every path below it.
    """

    __slots__ = ("_rules",)

    def __init__(self, patterns: Iterable[str]) -> None:
        self._rules: list[tuple[bool, bool, re.Pattern[str]]] = []
        for raw in patterns:
            pat = raw.strip()
            if not pat or pat.startswith("#"):
                continue
            neg = pat.startswith("!")
            if neg:
                pat = pat[1:]
            dir_only = pat.endswith("/")
            pat = pat.rstrip("/")
            if not pat:
                continue
            anchored = "/" in pat
            pat = pat.lstrip("/")
            body = _glob_to_regex(pat)
            rx = re.compile(("^" if anchored else "^(?:.*/)?") + body + "$")
            self._rules.append((neg, dir_only, rx))

    def __bool__(self) -> bool:
        return bool(self._rules)

    def prunes_dir(self, reldir: str) -> bool:
        """True when everything below directory ``reldir`` is matched for sure (no negation could re-include)."""
        if not self._rules or any(neg for neg, _, _ in self._rules):
            return False
        parts = reldir.split("/")
        dirs = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        return any(rx.match(d) for _, _, rx in self._rules for d in dirs)

    def matches(self, relpath: str) -> bool:
        """True when the file ``relpath`` (or one of its parent directories) is matched (after negations)."""
        return bool(self.decide(relpath))

    def decide(self, relpath: str, *, is_dir: bool = False) -> bool | None:
        """True (ignored), False (re-included by a negation) or None (no pattern speaks of ``relpath``)."""
        if not self._rules:
            return None
        parts = relpath.split("/")
        dirs = ["/".join(parts[:i]) for i in range(1, len(parts))]
        state = None
        for neg, dir_only, rx in self._rules:
            hit = any(rx.match(d) for d in dirs) or ((is_dir or not dir_only) and rx.match(relpath) is not None)
            if hit:
                state = not neg
        return state


class GitignoreFiles:
    """The ``.gitignore`` files of a tree walked without git: each applies below its own directory, and a deeper
    file's verdict overrides a shallower one's (as git does)."""

    def __init__(self) -> None:
        self._by_dir: list[tuple[str, GitignoreMatcher]] = []

    def load(self, absdir: str, reldir: str) -> None:
        try:
            with open(os.path.join(absdir, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                m = GitignoreMatcher(fh.read().splitlines())
        except OSError:
            return
        if m:
            self._by_dir.append((reldir, m))
            self._by_dir.sort(key=lambda dm: dm[0].count("/") + bool(dm[0]))

    def ignored(self, relpath: str, *, is_dir: bool = False) -> bool:
        verdict = None
        for d, m in self._by_dir:
            if d and not relpath.startswith(d + "/"):
                continue
            got = m.decide(relpath[len(d) + 1:] if d else relpath, is_dir=is_dir)
            if got is not None:
                verdict = got
        return bool(verdict)


def _glob_to_regex(pat: str) -> str:
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            if pat.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
                continue
            if pat.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 2)
            if j == -1:
                out.append(re.escape(c))
            else:
                cls = pat[i + 1 : j]
                if cls.startswith("!"):
                    cls = "^" + cls[1:]
                out.append("[" + cls.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pat[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


# ----------------------------------------------------------------------------------------------------- walk


def _git_list(root: Path, warnings: list[str]) -> tuple[list[str], set[str]] | None:
    """Root-relative paths from git and the subset git tracks, or None when the root is not (usefully) inside a
    git work tree."""
    rc, out, err = run_git(root, "ls-files", "--cached", "-z")
    if rc != 0:
        if rc == -1:
            log.debug("git unavailable for walk: %s", err)
        return None
    tracked = [os.fsdecode(p) for p in out.split(b"\0") if p]
    rc, out, err = run_git(root, "ls-files", "--others", "--exclude-standard", "-z")
    if rc != 0:
        return None
    others = [os.fsdecode(p) for p in out.split(b"\0") if p]
    if not tracked and not others:
        rc2, _, _ = run_git(root, "check-ignore", "-q", ".")
        if rc2 == 0:
            warnings.append("the root is ignored by its git repository; listing files with a directory walk")
            return None
    return tracked + others, set(tracked)


def _scandir_list(root: Path, prune_hidden: bool, excl: GitignoreMatcher | None = None) -> list[str]:
    """Files under ``root`` without git: the ``.gitignore`` files found on the way are honoured."""
    out: list[str] = []
    ignores = GitignoreFiles()
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        absdir, reldir = stack.pop()
        ignores.load(absdir, reldir)
        try:
            it = os.scandir(absdir)
        except OSError as e:
            log.debug("cannot list %s: %s", absdir, e)
            continue
        with it:
            for entry in it:
                name = entry.name
                rel = f"{reldir}/{name}" if reldir else name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if name in ALWAYS_SKIPPED_DIRS or name in UNTRACKED_SKIPPED_DIRS \
                            or (prune_hidden and name.startswith(".")):
                        continue
                    if excl is not None and excl.prunes_dir(rel):
                        continue
                    if ignores.ignored(rel, is_dir=True):
                        continue
                    stack.append((entry.path, rel))
                elif not ignores.ignored(rel):
                    out.append(rel)
    return out


def walk(
    root: Path,
    *,
    include_dotfiles: bool = False,
    dotfile_patterns: Iterable[str] = (),
    exclude: Iterable[str] = (),
    max_file_bytes: int = 1 << 20,
) -> WalkResult:
    """List the ingestible files under ``root`` (graph.md §10); files are sorted by relpath.

    Parameters
    ----------
    root
        An existing directory (the ingest root; may be a subdirectory of a git work tree).
    include_dotfiles, dotfile_patterns
        Hidden files and directories are skipped unless ``include_dotfiles`` or a gitignore-style
        ``dotfile_patterns`` entry matches them.
    exclude
        gitignore-style patterns applied last.
    max_file_bytes
        Larger files are skipped and counted in ``skipped["large"]``.
    """
    root = Path(root)
    warnings: list[str] = []
    skipped = {"large": 0, "binary": 0, "ignored": 0}
    dot_matcher = GitignoreMatcher(dotfile_patterns)
    excl_matcher = GitignoreMatcher(exclude)

    listed = _git_list(root, warnings)
    source = "git"
    tracked: set[str] = set()
    if listed is not None:
        rels, tracked = listed
    else:
        source = "scandir"
        rels = _scandir_list(
            root,
            prune_hidden=not include_dotfiles and not dot_matcher,
            excl=excl_matcher if excl_matcher else None,
        )

    files: dict[str, WalkedFile] = {}
    for raw in rels:
        if raw.endswith("/"):  # embedded repository / directory entry listed by git
            skipped["ignored"] += 1
            continue
        rel = unicodedata.normalize("NFC", raw)
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes in the file name (surrogate escapes)
            warnings.append(
                f"skipped {rel.encode('utf-8', 'replace').decode()!r}: the path is not valid UTF-8"
            )
            continue
        if "::" in rel or "#" in rel:
            warnings.append(f"skipped {rel!r}: a path containing '::' or '#' cannot be given a node id")
            continue
        parts = rel.split("/")
        if any(p in ALWAYS_SKIPPED_DIRS for p in parts[:-1]) or (
                raw not in tracked and any(p in UNTRACKED_SKIPPED_DIRS for p in parts[:-1])):
            skipped["ignored"] += 1
            continue
        if not include_dotfiles and any(p.startswith(".") for p in parts) and not dot_matcher.matches(rel):
            skipped["ignored"] += 1
            continue
        base = parts[-1]
        lang = None if base in LOCKFILES else detect_lang(rel)
        if lang is None:
            skipped["ignored"] += 1
            continue
        abspath = root.joinpath(*raw.split("/"))
        try:
            st = os.lstat(abspath)
        except OSError:  # listed by git but deleted from the work tree
            skipped["ignored"] += 1
            continue
        if not stat.S_ISREG(st.st_mode):  # symlinks are never followed
            skipped["ignored"] += 1
            continue
        if excl_matcher and excl_matcher.matches(rel):
            skipped["ignored"] += 1
            continue
        if st.st_size > max_file_bytes:
            skipped["large"] += 1
            continue
        if rel in files:
            warnings.append(f"skipped a second file normalising to {rel!r}")
            continue
        files[rel] = WalkedFile(rel, abspath, st.st_size, st.st_mtime_ns, lang)

    out = [files[k] for k in sorted(files)]
    return WalkResult(files=out, skipped=skipped, warnings=warnings, source=source)


def read_text(abspath: Path | str) -> tuple[bytes, str] | None:
    """Read a file once: ``(bytes, text)`` or None when it is binary or not text.

    Binary = a NUL byte in the first 8 KiB, or more than 1 % U+FFFD characters after UTF-8 decoding with
    ``errors="replace"`` (graph.md §10). ``OSError`` propagates (the file vanished or is unreadable).
    """
    with open(abspath, "rb") as fh:
        data = fh.read()
    if b"\0" in data[:_NUL_WINDOW]:
        return None
    text = data.decode("utf-8", errors="replace")
    if text and "\ufffd" in text and text.count("\ufffd") * 100 > len(text):
        return None
    return data, text
