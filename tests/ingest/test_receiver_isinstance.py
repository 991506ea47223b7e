"""``isinstance`` narrowing (issue 12 item 5): inside ``if isinstance(x, T):`` (or an ``elif``), and after
``if not isinstance(x, T): raise`` (``return`` / ``continue`` / ``break``) in an enclosing block, ``x`` is an
instance of ``T`` or of a type derived from it, unless it is assigned again. The call links to the definition of the
method each of these types has (once when they share it; a class-hierarchy analysis's "may call"). ``run`` and
``stop`` are defined by unrelated classes too, so a name-based guess would link them: every edge below comes from
the test."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/jobs.py": """
        class Job:
            def run(self):
                pass

            def stop(self):
                pass


        class QuickJob(Job):
            pass


        class OwnJob(Job):
            def stop(self):
                pass
        """,
    "pkg/other.py": """
        class Engine:
            def run(self):
                pass

            def stop(self):
                pass
        """,
    "pkg/use.py": """
        from pkg.jobs import Job, QuickJob


        def inside(x):
            if isinstance(x, Job):
                x.run()
                x.stop()


        def guard(x):
            if not isinstance(x, (Job, QuickJob)):
                raise TypeError(x)
            x.run()


        def in_loop(items):
            for x in items:
                if not isinstance(x, Job):
                    continue
                x.run()


        def rebound(x, other):
            if isinstance(x, Job):
                x = other
                x.run()


        def rebound_in_loop(x, others):
            if not isinstance(x, Job):
                return
            for x in others:
                x.run()


        def builtin(x):
            if isinstance(x, str):
                x.run()
        """,
}

U = "file::pkg/use.py"
RUN = "file::pkg/jobs.py::class::Job::fn::run"
STOP = "file::pkg/jobs.py::class::Job::fn::stop"
OWN_STOP = "file::pkg/jobs.py::class::OwnJob::fn::stop"
OTHER = {"file::pkg/other.py::class::Engine::fn::run", "file::pkg/other.py::class::Engine::fn::stop"}
ALL = {RUN, STOP, OWN_STOP} | OTHER


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_isinstance") / "repo", FILES))


def test_inside_the_if_block(g) -> None:
    # run: one definition for Job and its derived types; stop: OwnJob overrides it, either may be called
    assert g.targets(f"{U}::fn::inside", "calls") & ALL == {RUN, STOP, OWN_STOP}
    assert g.edge(f"{U}::fn::inside", STOP, "calls").w0 < g.edge(f"{U}::fn::inside", RUN, "calls").w0


def test_after_an_early_exit_guard(g) -> None:
    assert g.targets(f"{U}::fn::guard", "calls") & ALL == {RUN}
    assert g.targets(f"{U}::fn::in_loop", "calls") & ALL == {RUN}


def test_assigned_again_is_not_narrowed(g) -> None:
    assert not g.targets(f"{U}::fn::rebound", "calls") & {RUN, STOP, OWN_STOP}
    assert not g.targets(f"{U}::fn::rebound_in_loop", "calls") & {RUN, STOP, OWN_STOP}


def test_builtin_type_is_settled(g) -> None:
    # a str: not Engine.run by name (the only other run)
    assert not g.targets(f"{U}::fn::builtin", "calls") & ALL
