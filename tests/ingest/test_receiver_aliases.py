"""Module-level aliases (issue 12 item 5): ``PyLock = _PyLock`` at a module's top level, bound nowhere else in the
module scope, is another name of ``_PyLock`` for the modules that import it or call ``locks.PyLock()``; on the same
terms ``default_lock = _PyLock()`` holds a ``_PyLock`` for ``locks.default_lock.release()``. An alias
of something outside the graph (``Lock = _ext.allocate_lock``) makes the receiver an outside type (no guess). A
name bound only by such assignments, under ``try`` / ``if`` or twice, is the union of what they name (``None``
aside): a call may call each one (an edge to each graph definition), and when all lie outside the graph it is
settled. Star imports that give different classes (one per platform) are ambiguous as names; as receivers they stand
for either class, so a method both share links once and one they override differently links each override.
``release``, ``acquire``, ``run`` and ``close`` are also defined by ``Guard`` in the same package, so a name-based
guess would link them: every edge below comes from the alias rule."""

from __future__ import annotations

import copy

import pytest

LOCKS = """
import _ext_thread


class _PyLock:
    def release(self):
        pass

    def locked(self):
        pass


class _PyLock2(_PyLock):
    def release(self):
        pass


Lock = _ext_thread.allocate_lock
PyLock = _PyLock
Again = PyLock
try:
    CLock = _ext_thread.CLock
except ImportError:
    CLock = None
Twice = _PyLock
Twice = _PyLock2
default_lock = _PyLock()
if _ext_thread:
    maybe_lock = _PyLock()
reset_lock = _PyLock()


def reset():
    global reset_lock
    reset_lock = None
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/locks.py": LOCKS,
    "pkg/other.py": """
        class Guard:
            def acquire(self):
                pass

            def release(self):
                pass

            def run(self):
                pass

            def close(self):
                pass
        """,
    "pkg/base_loop.py": """
        class BaseLoop:
            def run(self):
                pass

            def close(self):
                pass
        """,
    "pkg/posix_loop.py": """
        from pkg.base_loop import BaseLoop

        __all__ = ["Loop"]


        class _PosixLoop(BaseLoop):
            def close(self):
                pass


        Loop = _PosixLoop
        """,
    "pkg/win_loop.py": """
        from pkg.base_loop import BaseLoop

        __all__ = ["Loop"]


        class _WinLoop(BaseLoop):
            def close(self):
                pass


        Loop = _WinLoop
        """,
    "pkg/loops.py": """
        import sys

        if sys.platform == "win32":
            from pkg.win_loop import *
        else:
            from pkg.posix_loop import *
        """,
    "pkg/use.py": """
        from pkg import locks, loops
        from pkg.locks import PyLock


        def use_alias():
            locks.PyLock().release()
            PyLock().release()
            locks.Again().release()


        def use_external():
            lk = locks.Lock()
            lk.acquire()


        def use_conditional():
            locks.CLock().release()


        def use_twice():
            locks.Twice().release()


        def use_variable():
            locks.default_lock.release()


        def use_imported_variable():
            from pkg.locks import default_lock

            default_lock.release()


        def use_unsure_variables():
            locks.maybe_lock.release()
            locks.reset_lock.release()


        def use_loop():
            loop = loops.Loop()
            loop.run()
            loop.close()


        class LockTests:
            def go(self):
                self.lock_class().release()


        class PyLockTests(LockTests):
            lock_class = locks.PyLock


        class CLockTests(LockTests):
            try:
                lock_class = locks.CLock
            except AttributeError:
                lock_class = None
        """,
}

U = "file::pkg/use.py"
L = "file::pkg/locks.py"
PY_RELEASE = f"{L}::class::_PyLock::fn::release"
GUARD = "file::pkg/other.py::class::Guard"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_aliases") / "repo", FILES))


def test_alias_of_a_class_links_its_methods(g) -> None:
    calls = g.targets(f"{U}::fn::use_alias", "calls")
    assert PY_RELEASE in calls  # locks.PyLock(), the imported PyLock and an alias of the alias
    assert f"{GUARD}::fn::release" not in calls
    assert f"{L}::class::_PyLock" in calls  # the constructor call itself


def test_alias_of_an_outside_name_is_an_outside_type(g) -> None:
    # Lock names something outside the graph: acquire is its method, not Guard's (the only one by that name)
    assert f"{GUARD}::fn::acquire" not in g.targets(f"{U}::fn::use_external", "calls")


def test_module_variable_holding_an_instance(g) -> None:
    # ``default_lock = _PyLock()`` at the top level: ``locks.default_lock.release()`` and the imported name
    for fn in ("use_variable", "use_imported_variable"):
        calls = g.targets(f"{U}::fn::{fn}", "calls")
        assert PY_RELEASE in calls and f"{GUARD}::fn::release" not in calls, fn
    # bound under ``if`` / re-bound through ``global``: no type, no edge
    assert PY_RELEASE not in g.targets(f"{U}::fn::use_unsure_variables", "calls")


def test_conditional_or_repeated_binding_is_a_union(g) -> None:
    # ``CLock = _ext_thread.CLock`` under ``try``, else None: an outside type, no edge and no guess
    calls = g.targets(f"{U}::fn::use_conditional", "calls")
    assert PY_RELEASE not in calls and f"{GUARD}::fn::release" not in calls
    # ``Twice = _PyLock`` then ``Twice = _PyLock2``: either class, each one's release may be called
    calls = g.targets(f"{U}::fn::use_twice", "calls")
    assert {PY_RELEASE, f"{L}::class::_PyLock2::fn::release", f"{L}::class::_PyLock", f"{L}::class::_PyLock2"} <= calls
    assert f"{GUARD}::fn::release" not in calls
    # the weight is shared between the two possible callees
    whole = g.edge(f"{U}::fn::use_alias", PY_RELEASE, "calls").w0
    assert g.edge(f"{U}::fn::use_twice", PY_RELEASE, "calls").w0 < whole


def test_conditional_alias_beside_a_star_import_is_no_alias() -> None:
    # ``from posix import *`` may bind ``fspath`` too: ``if ...: fspath = _fspath`` is not all it can be
    from m1nd.ingest.extract import extract_file

    src = b"from _ext_posix import *\nfrom _ext import sep\nif sep:\n    fspath = _fspath\nelse:\n    fspath = sep\n"
    assert "fspath" not in (extract_file("m.py", src, "python").get("extra") or {}).get("aliases", {})
    assert "fspath" in extract_file("m.py", src.split(b"\n", 1)[1], "python")["extra"]["aliases"]


def test_star_imports_that_differ_stand_for_either_class(g) -> None:
    calls = g.targets(f"{U}::fn::use_loop", "calls")
    assert "file::pkg/base_loop.py::class::BaseLoop::fn::run" in calls  # both inherit run
    # each overrides close: either may be called, one edge to each
    closes = {c for c in calls if c.endswith("::fn::close")}
    assert closes == {"file::pkg/posix_loop.py::class::_PosixLoop::fn::close",
                      "file::pkg/win_loop.py::class::_WinLoop::fn::close"}
    # the name itself is ambiguous: no call edge to one platform's class picked by import order
    assert not {c for c in calls if c.endswith("::class::_PosixLoop") or c.endswith("::class::_WinLoop")}


def test_class_attribute_assigned_under_try_counts(g) -> None:
    # the C / Python twins: CLockTests assigns lock_class under ``try`` (CLock: outside the graph, or None),
    # PyLockTests the graph's class; the mixin's call may call either, and only the graph's one has a node
    assert g.targets(f"{U}::class::LockTests::fn::go", "calls") == {PY_RELEASE}


def _extract_all(files: dict[str, str]) -> dict[str, dict]:
    import textwrap

    from m1nd.ingest.extract import extract_file

    out = {}
    for rel, text in files.items():
        blob = extract_file(rel, textwrap.dedent(text).encode(), "python")
        blob.pop("terms", None)
        for d in blob.get("definitions") or ():
            d.pop("terms", None)
        out[rel] = blob
    return out


@pytest.mark.parametrize(
    "edit",
    [
        ("PyLock = _PyLock\n", "PyLock = _PyLock2\n"),  # the alias names another class
        ("class _PyLock:\n", "class _PyLock:\n    def acquire(self):\n        pass\n\n"),  # its target grows
        ("Again = PyLock\n", ""),  # an alias removed
        ("default_lock = _PyLock()\n", "default_lock = _PyLock2()\n"),  # a variable's type changes
        ("    def locked(self):\n", "    def zq_unused(self):\n        pass\n\n    def locked(self):\n"),  # patched
        ("    def locked(self):\n", "    def locked(self):\n        self.state = _PyLock2()\n"),  # an attribute
    ],
)
def test_incremental_patch_matches_a_full_resolution(edit: tuple[str, str]) -> None:
    from m1nd.ingest.resolve import resolve
    from m1nd.ingest.resolve.incremental import TrackedResolver

    extracts = _extract_all(FILES)
    r = TrackedResolver(copy.deepcopy(extracts), None, {}, None).run()
    rel = "pkg/locks.py"
    assert edit[0] in LOCKS
    extracts.update(_extract_all({rel: LOCKS.replace(edit[0], edit[1], 1)}))
    got = r.patch(copy.deepcopy({rel: extracts[rel]}), {rel: 5_000})
    full = resolve(dict(extracts), mtimes={rel: 5_000})
    want_edges = {(e.src, e.dst, e.relation): (e.w0, e.count) for e in full.edges}
    if got is None:  # the patch may decline (then the caller resolves in full), never differ
        assert not r.broken
        return
    live = set(range(len(r.ext))) - r.dead
    assert r.edges_from(live) == want_edges
    assert (r.unresolved, r.ambiguous) == (full.unresolved_refs, full.ambiguous_refs)
