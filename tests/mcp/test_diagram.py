"""Pictures (issue 15 item 7): ``m1nd graph NODE --depth N --format mermaid|dot|svg``, ``--format`` on ``impact`` and
``why``, and the ``diagram`` MCP tool (graph profile) returning Mermaid text. SVG is rendered by Graphviz when its
``dot`` program is installed and checked as XML with the expected labels."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from test_server_support import (  # noqa: F401 — fixtures are used by name
    anyio_backend,
    full_env,
    ingest_fixture,
    write_fixture_repo,
)

from m1nd.diagram import graphviz

ACQUIRE = "file::shop/pool.py::class::SessionPool::fn::acquire"
CONNECT = "file::shop/db.py::fn::connect"
PLACE_ORDER = "file::shop/orders.py::fn::place_order"


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("diagram")
    repo = write_fixture_repo(root / "repo")
    env = {"M1ND_HOME": str(root / "home"), "M1ND_WORKSPACE": str(repo), "M1ND_EMBEDDER": "hashing",
           "SKBUILD_EDITABLE_VERBOSE": "0"}
    ingest_fixture(env, repo)
    return env


def m1nd(env: dict[str, str], *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    e = full_env(env)
    if path is not None:
        e["PATH"] = path
    return subprocess.run([sys.executable, "-m", "m1nd", *args], capture_output=True, text=True, env=e, timeout=300)


def mermaid_graph(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Node ids -> labels and the edges of a Mermaid flowchart as m1nd writes it; every edge must join two declared
    nodes."""
    assert text.splitlines()[:1] == ["---"] and "flowchart LR" in text
    nodes = dict(re.findall(r'^\s+(n\d+)\["([^"]*)"\]$', text, re.M))
    edges = re.findall(r'^\s+(n\d+) -\.?->\|"([^"]*)"\| (n\d+)$', text, re.M)
    assert nodes and edges
    for a, _, b in edges:
        assert a in nodes and b in nodes
    return nodes, [(a, rel, b) for a, rel, b in edges]


def labelled(nodes: dict[str, str], edges: list[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    name = {k: v.split("<br/>")[0] for k, v in nodes.items()}
    return {(name[a], rel, name[b]) for a, rel, b in edges}


def test_graph_command_mermaid_neighbourhood(shop: dict[str, str]) -> None:
    one = m1nd(shop, "graph", ACQUIRE)
    assert one.returncode == 0, one.stderr
    nodes, edges = mermaid_graph(one.stdout)
    assert ("acquire", "calls", "connect") in labelled(nodes, edges)
    assert ("place_order", "calls", "acquire") in labelled(nodes, edges)
    assert "release" not in {v.split("<br/>")[0] for v in nodes.values()}  # two hops away
    two = m1nd(shop, "graph", ACQUIRE, "--depth", "2")
    nodes2, edges2 = mermaid_graph(two.stdout)
    assert len(nodes2) > len(nodes)
    assert ("place_order", "calls", "release") in labelled(nodes2, edges2)


def test_graph_command_dot_to_a_file(shop: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "acquire.dot"
    r = m1nd(shop, "graph", ACQUIRE, "--format", "dot", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and f"wrote {out}" in r.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("digraph m1nd {") and text.rstrip().endswith("}")
    ids = dict(re.findall(r'^\s+(n\d+) \[label="([^"\\]*)', text, re.M))
    edges = re.findall(r'^\s+(n\d+) -> (n\d+) \[label="([^"]*)"', text, re.M)
    assert ("acquire", "connect", "calls") in {(ids[a], ids[b], rel) for a, b, rel in edges}


def test_impact_and_why_draw_their_results(shop: dict[str, str]) -> None:
    imp = m1nd(shop, "impact", CONNECT, "--direction", "reverse", "--format", "mermaid")
    assert imp.returncode == 0, imp.stderr
    nodes, edges = mermaid_graph(imp.stdout)
    names = {v.split("<br/>")[0] for v in nodes.values()}
    assert {"connect", "acquire"} <= names and "blast radius of" in imp.stdout
    why = m1nd(shop, "why", PLACE_ORDER, CONNECT, "--format", "mermaid")
    assert why.returncode == 0, why.stderr
    nodes, edges = mermaid_graph(why.stdout)
    assert ("place_order", "calls", "acquire") in labelled(nodes, edges)
    assert ("acquire", "calls", "connect") in labelled(nodes, edges)
    text = m1nd(shop, "why", PLACE_ORDER, CONNECT)  # without --format: the text rendering, unchanged
    assert text.returncode == 0 and text.stdout.startswith("1. strength")


@pytest.mark.skipif(graphviz() is None, reason="Graphviz's `dot` is not installed (Debian: apt install graphviz); "
                                                "SVG rendering cannot be checked here")
def test_svg_renders_through_graphviz(shop: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "acquire.svg"
    r = m1nd(shop, "graph", ACQUIRE, "--depth", "2", "--format", "svg", "--out", str(out))
    assert r.returncode == 0, r.stderr
    root = ET.fromstring(out.read_bytes())  # well-formed XML
    assert root.tag.endswith("svg")
    texts = {t.text for t in root.iter() if t.tag.endswith("text") and t.text}
    assert {"acquire", "connect", "place_order", "calls"} <= texts
    imp = m1nd(shop, "impact", CONNECT, "--format", "svg")
    assert imp.returncode == 0 and ET.fromstring(imp.stdout.encode()).tag.endswith("svg")


def test_svg_without_graphviz_is_a_clear_error(shop: dict[str, str], tmp_path: Path, monkeypatch, capsys) -> None:
    from m1nd.cli.app import run

    out = tmp_path / "x.svg"
    for k, v in shop.items():
        monkeypatch.setenv(k, v)
    # the CLI in this process, with no `dot` to be found (a subprocess with a stripped PATH would also lose the
    # shell and compilers an editable install rebuilds with)
    monkeypatch.setattr("m1nd.diagram.shutil.which", lambda _name: None)
    code = run(["graph", ACQUIRE, "--format", "svg", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert "Error (graphviz_missing)" in err and "apt install graphviz" in err
    assert "--format mermaid" in err and "Traceback" not in err
    assert not out.exists()
