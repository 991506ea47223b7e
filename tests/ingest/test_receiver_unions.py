"""Receivers that may hold one of several types (issue 12 item 5): a name, an attribute or a returned value bound to
values of several known types is their union; ``self`` in a mixin or a base stands for every type derived from it.
A call edge means "may call" (as in a class-hierarchy analysis): when every possible type is known, the call links to
the method definition of each (once when they share it, inherited from a common base, say; the weight shared among
them when they differ); when one is not known there is no edge, and when all of them lie outside the graph the call is
settled without a guess. ``run`` and ``count`` are defined by unrelated classes too, so a name-based guess would
link them: every edge below comes from the receiver's types."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/loops.py": """
        class Loop:
            def run(self):
                pass


        class SelectorLoop(Loop):
            pass


        class ProactorLoop(Loop):
            pass


        class OwnLoop(Loop):
            def run(self):
                pass


        class StubLoop(Loop):
            def _nope(self):
                raise NotImplementedError

            start = run = _nope
        """,
    "pkg/other.py": """
        class Runner:
            def run(self):
                pass

            def count(self, x):
                pass
        """,
    "pkg/use.py": """
        from .loops import Loop, OwnLoop, ProactorLoop, SelectorLoop, StubLoop


        def agree(flag):
            loop = SelectorLoop()
            if flag:
                loop = ProactorLoop()
            loop.run()


        def differ(flag):
            loop = SelectorLoop()
            if flag:
                loop = OwnLoop()
            loop.run()


        def partly_unknown(flag, given):
            loop = SelectorLoop()
            if flag:
                loop = given
            loop.run()


        def stored(flag):
            loop = SelectorLoop()
            if flag:
                loop = StubLoop()
            loop.run()


        def outside(flag):
            items = []
            if flag:
                items = ""
            items.count(1)


        def pick(flag):
            if flag:
                return SelectorLoop()
            return ProactorLoop()


        def pick_differ(flag):
            if flag:
                return SelectorLoop()
            return OwnLoop()


        def returned():
            pick(True).run()
            pick_differ(True).run()


        class Holder:
            def __init__(self, flag):
                self.loop = SelectorLoop()
                if flag:
                    self.reset()

            def reset(self):
                self.loop = ProactorLoop()

            def go(self):
                self.loop.run()


        class Mixin:
            def setUp(self):
                self.loop = self.create_loop()

            def go(self):
                self.loop.run()

            def go_direct(self):
                self.create_loop().run()


        class SelectorCase(Mixin):
            def create_loop(self):
                return SelectorLoop()


        class ProactorCase(Mixin):
            def create_loop(self):
                return ProactorLoop()


        class SplitMixin:
            def setUp(self):
                self.loop = self.create_loop()

            def go(self):
                self.loop.run()


        class SplitA(SplitMixin):
            def create_loop(self):
                return SelectorLoop()


        class SplitB(SplitMixin):
            def create_loop(self):
                return OwnLoop()
        """,
}

U = "file::pkg/use.py"
RUN = "file::pkg/loops.py::class::Loop::fn::run"
OWN_RUN = "file::pkg/loops.py::class::OwnLoop::fn::run"
OTHER_RUN = "file::pkg/other.py::class::Runner::fn::run"
OTHER_COUNT = "file::pkg/other.py::class::Runner::fn::count"
RUNS = {RUN, OWN_RUN, OTHER_RUN}


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_unions") / "repo", FILES))


def test_union_of_locals_agreeing_on_the_method(g) -> None:
    # SelectorLoop and ProactorLoop both inherit Loop.run
    assert g.targets(f"{U}::fn::agree", "calls") & RUNS == {RUN}


def test_union_that_disagrees_links_each_and_partly_unknown_none(g) -> None:
    # OwnLoop overrides run: two definitions, either may be called, the weight shared between them
    assert g.targets(f"{U}::fn::differ", "calls") & RUNS == {RUN, OWN_RUN}
    whole = g.edge(f"{U}::fn::agree", RUN, "calls").w0
    assert g.edge(f"{U}::fn::differ", RUN, "calls").w0 == g.edge(f"{U}::fn::differ", OWN_RUN, "calls").w0 < whole
    # a parameter of unknown type: no edge at all, not even to the known alternative's method, and no guess
    assert not g.targets(f"{U}::fn::partly_unknown", "calls") & RUNS
    # StubLoop replaces run with a stored callable (``start = run = _nope``): not Loop.run there
    assert not g.targets(f"{U}::fn::stored", "calls") & RUNS


def test_union_outside_the_graph_is_settled(g) -> None:
    # a list or a str: count is a builtin's method, not Runner.count by name (the only count of the graph)
    assert OTHER_COUNT not in g.targets(f"{U}::fn::outside", "calls")


def test_union_of_returned_types(g) -> None:
    calls = g.targets(f"{U}::fn::returned", "calls")
    assert calls & RUNS == {RUN, OWN_RUN}  # pick_differ(...).run(): either
    assert g.edge(f"{U}::fn::returned", RUN, "calls").count == 2
    assert g.edge(f"{U}::fn::returned", OWN_RUN, "calls").count == 1


def test_attribute_assigned_in_several_methods(g) -> None:
    assert g.targets(f"{U}::class::Holder::fn::go", "calls") & RUNS == {RUN}


def test_self_in_a_mixin_stands_for_every_derived_type(g) -> None:
    # the loop each derived case creates: a SelectorLoop or a ProactorLoop, both with Loop.run
    assert g.targets(f"{U}::class::Mixin::fn::go", "calls") & RUNS == {RUN}
    assert g.targets(f"{U}::class::Mixin::fn::go_direct", "calls") & RUNS == {RUN}
    # one derived case creates an OwnLoop: two definitions, either may be called
    assert g.targets(f"{U}::class::SplitMixin::fn::go", "calls") & RUNS == {RUN, OWN_RUN}
