"""Python re-exports through ``__init__.py`` and ``__all__`` (issue 12 item 4): a package's star imports export what
the imported module's ``__all__`` lists, and its own ``__all__`` turns names that arrive through star imports into
``reexports``."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.ingest.extract import extract_file

FILES = {
    "pkg/__init__.py": """
        from .core import Engine
        from .util import *
        from .extra import Extra as Extra

        __all__ = ["Engine", "helper", "Extra"]
        """,
    "pkg/core.py": """
        class Engine:
            def run(self):
                pass
        """,
    "pkg/util.py": """
        __all__ = ["helper"]
        __all__ += ["shared"]

        def helper():
            pass

        def shared():
            pass

        def internal():
            pass
        """,
    "pkg/extra.py": """
        class Extra:
            pass
        """,
    "other/internal_user.py": """
        def internal():
            pass
        """,
    "app.py": """
        from pkg import Engine, helper
        from pkg.util import *
        import pkg

        def main():
            Engine().run()
            helper()
            shared()
            pkg.helper()
            internal()
        """,
}


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    return build(write_files(tmp_path_factory.mktemp("pyall") / "repo", FILES))


def test_dunder_all_is_read() -> None:
    src = b'__all__ = ["a", "b"]\n__all__ += ("c",)\n'
    assert extract_file("m.py", src, "python")["extra"]["all"] == ["a", "b", "c"]
    # a computed __all__ is not a list the resolver can trust: every name counts
    assert "all" not in extract_file("m.py", b"__all__ = names()\n", "python")["extra"]


def test_init_reexports_names_of_its_star_imports(g) -> None:
    init = "file::pkg/__init__.py"
    assert g.has(init, "file::pkg/util.py::fn::helper", "reexports")  # star import + listed in __all__
    assert g.has(init, "file::pkg/core.py::class::Engine", "reexports")
    assert not g.has(init, "file::pkg/util.py::fn::internal", "reexports")


def test_calls_through_the_package(g) -> None:
    main = "file::app.py::fn::main"
    assert g.edge(main, "file::pkg/util.py::fn::helper", "calls").w0 == g.edge(
        main, "file::pkg/core.py::class::Engine", "calls").w0  # both bound by the import, not guessed
    assert g.has(main, "file::pkg/util.py::fn::shared", "calls")  # ``__all__ +=`` counts
    # ``internal`` is not in util's __all__: the star import does not bind it, so it is not taken from util
    # with an import's certainty (the graph-wide guess sees two candidates and leaves the call unlinked)
    assert not g.has(main, "file::pkg/util.py::fn::internal", "calls")
    assert_invariants(g)
