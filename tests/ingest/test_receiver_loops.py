"""Loop variables over containers of known elements (issue 12 item 5): ``for x in (A(), B())``, a comprehension, a
local list filled with ``append`` / ``add`` (``enumerate`` too). A container changed any other way (``extend``,
``items[i] = …``, ``+=``, passed to a call that may fill it), bound to something else, or a module's list has
elements of unknown type. ``run`` is defined by an unrelated class too, so a name-based guess would link it: every
edge below comes from the element types. Also: after ``cls = self.theclass``, ``cls(...)`` is no instance of the
enclosing type: it calls the class the attribute holds."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/jobs.py": """
        class Job:
            def run(self):
                pass


        class QuickJob(Job):
            pass
        """,
    "pkg/other.py": """
        class Engine:
            def run(self):
                pass
        """,
    "pkg/use.py": """
        from pkg.jobs import Job, QuickJob


        def literal():
            for job in (Job(), QuickJob()):
                job.run()


        def comprehension(n):
            jobs = [Job() for _ in range(n)]
            for job in jobs:
                job.run()
            return len(jobs)


        def appended(n):
            jobs = []
            for _ in range(n):
                jobs.append(QuickJob())
            for i, job in enumerate(jobs):
                job.run()


        def appended_only():
            fresh = []
            fresh.append(Job())
            for job in fresh:
                job.run()


        def filled_elsewhere(fill):
            jobs = [Job()]
            fill(jobs)
            for job in jobs:
                job.run()


        def extended(more):
            jobs = [Job()]
            jobs.extend(more)
            for job in jobs:
                job.run()


        def rebound(given):
            jobs = [Job()]
            jobs = given
            for job in jobs:
                job.run()


        JOBS = [Job()]


        def module_list():
            for job in JOBS:
                job.run()


        class Case:
            theclass = Job

            def go(self):
                cls = self.theclass
                for job in (cls(), cls()):
                    job.run()
        """,
}

U = "file::pkg/use.py"
RUN = "file::pkg/jobs.py::class::Job::fn::run"
RUNS = {RUN, "file::pkg/other.py::class::Engine::fn::run"}


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_loops") / "repo", FILES))


@pytest.mark.parametrize("fn", ["literal", "comprehension", "appended", "appended_only"])
def test_loop_over_known_elements(g, fn: str) -> None:
    assert g.targets(f"{U}::fn::{fn}", "calls") & RUNS == {RUN}


@pytest.mark.parametrize("fn", ["filled_elsewhere", "extended", "rebound", "module_list"])
def test_containers_of_unknown_elements(g, fn: str) -> None:
    assert not g.targets(f"{U}::fn::{fn}", "calls") & RUNS


def test_a_local_cls_calls_what_it_holds(g) -> None:
    from m1nd.ingest.extract import extract_file

    text = (
        "class Case:\n    def go(self):\n        cls = self.theclass\n        for job in (cls(),):\n"
        "            job.run()\n"
    )
    refs = extract_file("pkg/x.py", text.encode(), "python")["references"]
    # not ``@:run`` (an instance of Case): calling the class the attribute holds
    assert [r[1] for r in refs if r[0] == "typed_call"] == ["@>theclass():run"]
    assert g.targets(f"{U}::class::Case::fn::go", "calls") & RUNS == {RUN}
