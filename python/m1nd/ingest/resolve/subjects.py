"""``tests`` edges (graph.md §8): a test file's subject file by naming convention, test functions to
the functions they name or call."""

from __future__ import annotations

from m1nd.graph.schema import IMPORTS, TESTS
from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import (
    CLASSLIKE,
    CODE_FAMILIES,
    JS_EXTS,
    K_FILE,
    K_FN,
    NOTFOUND,
    FileState,
    common_prefix_len,
)


class TestSubjects(ResolverCore):
    """Links tests to what they test."""

    def tests_edges(self) -> None:
        for f in self.files.values():
            if f.fam in CODE_FAMILIES:
                self.tests_of_file(f)

    def tests_of_file(self, f: FileState) -> None:
        """The ``tests`` edges whose source is ``f`` or one of its test functions (an incremental patch re-runs
        this for the files it re-resolves)."""
        by_base = self.basename_index
        subject_files: list[int] = []
        if f.blob.get("is_test"):
            main_subject = self._subject_file(f, by_base)
            if main_subject >= 0:
                subject_files.append(main_subject)
            for target, rel, _ in f.import_edges:
                if rel != IMPORTS:
                    continue
                tf = target if self.kind[target] == K_FILE else self.file_of[target]
                if tf >= 0 and tf != f.idx and self.kind[tf] == K_FILE and tf not in subject_files:
                    subject_files.append(tf)
            for tf in subject_files:
                self.edge(f.idx, tf, TESTS, 1.0)
        else:
            # test functions inside a regular file (Rust `#[cfg(test)] mod tests`): the file is the subject
            if not any(i >= 0 and self.is_test[i] for i in f.syms):
                return
            subject_files.append(f.idx)
        # test functions -> subject functions (first subject file holding the name wins)
        for idx in f.syms:
            if idx < 0 or not self.is_test[idx] or self.kind[idx] != K_FN:
                continue
            stripped = _strip_test_name(self.label[idx])
            if not stripped:
                continue
            best: list[int] = []
            for sf in subject_files:
                found = self._fns_by_lower(sf).get(stripped)
                if found:
                    best = found
                    break
            if len(best) > 1:
                best = self._prefer_container(best, f, idx)
            if len(best) == 1:
                self.edge(idx, best[0], TESTS, 1.0)

    def _prefer_container(self, cands: list[int], f: FileState, test_fn: int) -> list[int]:
        """Several same-named subject functions: keep those whose container is named like the test's subject
        (``TestPool.test_get`` / ``test_pool.py`` -> a method of ``Pool``)."""
        hints = set()
        p = self.parent[test_fn]
        if self.kind[p] in CLASSLIKE:
            h = _strip_test_name(self.label[p])
            if h:
                hints.add(h)
        for n in _subject_basenames(f.base, f.fam):
            hints.add(n.split(".", 1)[0].lower())
        hints = {h.replace("_", "") for h in hints}
        kept = [c for c in cands if self.label[self.parent[c]].lower().replace("_", "") in hints] or cands
        if len({self.parent[c] for c in kept}) == 1:
            return kept[:1]  # redefinitions / overloads in one container are one logical function
        return kept

    def _fns_by_lower(self, file_idx: int) -> dict[str, list[int]]:
        """Non-test functions of a file by lower-cased name (memoised)."""
        memo = self.fns_lower_memo
        got = memo.get(file_idx)
        if got is None:
            got = {}
            kind, label, is_test = self.kind, self.label, self.is_test
            for s in self.file_by_idx[file_idx].syms:
                if s >= 0 and kind[s] == K_FN and not is_test[s]:
                    got.setdefault(label[s].lower(), []).append(s)
            memo[file_idx] = got
        return got

    def _subject_file(self, f: FileState, by_base: dict[str, list[int]]) -> int:
        names = _subject_basenames(f.base, f.fam)
        if not names:
            return NOTFOUND
        cands = []
        for n in names:
            for idx in by_base.get(n, ()):
                g = self.file_by_idx[idx]
                if idx != f.idx and not g.blob.get("is_test") and g.fam == f.fam:
                    cands.append(idx)
        if not cands:
            return NOTFOUND
        mine = f.dir.split("/") if f.dir else []
        best, best_d, tie = NOTFOUND, 1 << 30, False
        for c in sorted(set(cands)):
            cd = self.file_by_idx[c].dir
            other = cd.split("/") if cd else []
            shared = common_prefix_len(mine, other)
            dist = len(mine) + len(other) - 2 * shared
            if dist < best_d:
                best, best_d, tie = c, dist, False
            elif dist == best_d:
                tie = True
        return NOTFOUND if tie else best


def _strip_test_name(name: str) -> str:
    low = name.lower()
    for p in ("test_", "test"):
        if low.startswith(p):
            return low[len(p) :].lstrip("_")
    return ""


def _subject_basenames(base: str, fam: str) -> list[str]:
    if fam == "py":
        stem = base.rsplit(".", 1)[0]
        if stem.startswith("test_"):
            return [f"{stem[5:]}.py", f"{stem[5:]}.pyi"]
        if stem.endswith("_test"):
            return [f"{stem[:-5]}.py", f"{stem[:-5]}.pyi"]
        return []
    if fam == "go":
        return [base[:-8] + ".go"] if base.endswith("_test.go") else []
    if fam == "js":
        for marker in (".test.", ".spec."):
            if marker in base:
                stem = base.split(marker, 1)[0]
                return [stem + e for e in JS_EXTS]
        return []
    if fam == "java":
        for suf in ("Tests.java", "Test.java"):
            if base.endswith(suf) and len(base) > len(suf):
                return [base[: -len(suf)] + ".java"]
        return []
    if fam == "rs":
        if base.endswith("_test.rs"):
            return [base[:-8] + ".rs"]
        if base.startswith("test_"):
            return [base[5:]]
        return [base] if base not in ("mod.rs", "lib.rs", "main.rs") else []
    if fam in ("kt", "cs", "php"):  # ``PoolTest.kt`` / ``PoolTests.cs`` / ``PoolTest.php`` test ``Pool.*``
        stem, _, ext = base.rpartition(".")
        for suf in ("Tests", "Test"):
            if stem.endswith(suf) and len(stem) > len(suf):
                return [f"{stem[: -len(suf)]}.{ext}"]
        return []
    if fam == "rb":  # ``pool_spec.rb`` / ``pool_test.rb`` / ``test_pool.rb``
        stem = base.removesuffix(".rb")
        for suf in ("_spec", "_test"):
            if stem.endswith(suf):
                return [stem[: -len(suf)] + ".rb"]
        return [stem[5:] + ".rb"] if stem.startswith("test_") else []
    # ``pool_test.c`` / ``pool_unittest.cc`` / ``test_pool.c``: any C or C++ source of that stem
    if fam == "c":
        stem, _, _ext = base.rpartition(".")
        for suf in ("_unittest", "_test"):
            if stem.endswith(suf):
                stem = stem[: -len(suf)]
                break
        else:
            if not stem.startswith("test_"):
                return []
            stem = stem[5:]
        return [f"{stem}.{e}" for e in ("c", "cc", "cpp", "cxx", "h", "hpp")]
    return []
