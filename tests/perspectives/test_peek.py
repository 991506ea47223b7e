"""perspective_peek: real excerpts inside the ingested roots, refusals everywhere else (perspectives.md §6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from m1nd.errors import M1ndError
from m1nd.perspectives import peek as pk

from .conftest import Client, all_routes, route_to, write_files

SESSION_POOL = "file::src/shop/session_pool.py::class::SessionPool"
SESSION_FILE = "file::src/shop/session_pool.py"
DB_FILE = "file::src/shop/db.py"


def _route(c: Client, pid: str, version: int, target: str) -> dict:
    r = route_to(all_routes(c, pid, version), target)
    assert r is not None, f"no route to {target}"
    return r


def _anchored_at(c: Client, anchor: str) -> str:
    return c.ok("perspective_start", query="session pool", anchor_node=anchor)["perspective_id"]


def test_peek_a_symbol_returns_its_span(client: Client) -> None:
    pid = _anchored_at(client, SESSION_FILE)
    r = _route(client, pid, 1, SESSION_POOL)
    out = client.ok("perspective_peek", perspective_id=pid, route_id=r["route_id"], route_set_version=1)
    c = out["content"]
    assert out["target_node"] == SESSION_POOL and out["provenance_stale"] is False
    assert c["file_path"] == "src/shop/session_pool.py"
    assert c["excerpt"].startswith("class SessionPool(Pool):")
    assert "def release(self, session):" in c["excerpt"]
    assert c["truncated"] is False and c["encoding_replaced"] is False
    assert c["span_lines"] == c["line_end"] - c["line_start"] + 1


def test_peek_windows_and_limits(client: Client, shop_repo: Path) -> None:
    pid = _anchored_at(client, SESSION_FILE)
    cls = _route(client, pid, 1, SESSION_POOL)
    small = client.ok("perspective_peek", perspective_id=pid, route_id=cls["route_id"], route_set_version=1,
                      max_lines=5)["content"]
    assert small["truncated"] is True and small["line_end"] - small["line_start"] + 1 == 5
    ctx = client.ok("perspective_peek", perspective_id=pid, route_id=cls["route_id"], route_set_version=1,
                    max_lines=5, context_lines=2)["content"]
    assert ctx["line_start"] == small["line_start"] - 2 and ctx["line_end"] == small["line_end"] + 2
    lines = (shop_repo / "src/shop/session_pool.py").read_text().splitlines()
    assert ctx["excerpt"].split("\n") == lines[ctx["line_start"] - 1: ctx["line_end"]]
    # a file route shows its first lines
    db = _route(client, pid, 1, DB_FILE)
    f = client.ok("perspective_peek", perspective_id=pid, route_id=db["route_id"], route_set_version=1,
                  max_lines=5)["content"]
    assert f["line_start"] == 1 and f["line_end"] == 5 and f["excerpt"].startswith('"""Database connections."""')
    # character cap: cut at a newline and marked
    big = "\n".join(f"    value_{i} = {i}  # a long line of padding text" for i in range(300))
    (shop_repo / "src/shop/db.py").write_text('"""Database connections."""\n' + big + "\n")
    cut = client.ok("perspective_peek", perspective_id=pid, route_id=db["route_id"], route_set_version=1,
                    max_lines=200, max_chars=200)
    assert cut["content"]["truncated"] is True and cut["content"]["excerpt"].endswith("\n…")
    assert len(cut["content"]["excerpt"]) <= 200
    assert cut["provenance_stale"] is True  # the file changed after ingest


def test_peek_refuses_directories(client: Client) -> None:
    pid = _anchored_at(client, SESSION_FILE)
    d = _route(client, pid, 1, "dir::src/shop")
    assert d["target_kind"] == "dir"
    assert d["peek_available"] is False
    e = client.err("perspective_peek", perspective_id=pid, route_id=d["route_id"], route_set_version=1)
    assert e["code"] == "not_peekable" and "directories have no content" in e["message"]


def test_peek_deleted_file_is_not_found(client: Client, shop_repo: Path) -> None:
    pid = _anchored_at(client, SESSION_FILE)
    db = _route(client, pid, 1, DB_FILE)
    (shop_repo / "src/shop/db.py").unlink()
    e = client.err("perspective_peek", perspective_id=pid, route_id=db["route_id"], route_set_version=1)
    assert e["code"] == "not_found" and e["message"] == "'src/shop/db.py' no longer exists; re-ingest"


def test_peek_binary_file_is_not_peekable(client: Client, shop_repo: Path) -> None:
    pid = _anchored_at(client, SESSION_FILE)
    db = _route(client, pid, 1, DB_FILE)
    (shop_repo / "src/shop/db.py").write_bytes(b"\x00\x01binary")
    e = client.err("perspective_peek", perspective_id=pid, route_id=db["route_id"], route_set_version=1)
    assert e["code"] == "not_peekable" and e["message"] == "binary file"


def test_peek_refuses_a_symlink_pointing_outside(client: Client, shop_repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("PASSWORD = 'hunter2'\n")
    pid = _anchored_at(client, SESSION_FILE)
    db = _route(client, pid, 1, DB_FILE)
    target = shop_repo / "src/shop/db.py"
    target.unlink()
    os.symlink(secret, target)
    e = client.err("perspective_peek", perspective_id=pid, route_id=db["route_id"], route_set_version=1)
    assert e["code"] == "path_denied"
    assert e["message"] == "refusing to read 'src/shop/db.py': it resolves outside the ingested root"
    assert "hunter2" not in str(e)


def test_peek_refuses_a_symlinked_directory_escaping(client: Client, shop_repo: Path, tmp_path: Path) -> None:
    outside = write_files(tmp_path / "outside", {"settings.toml": "token = 'secret'\n"})
    pid = _anchored_at(client, SESSION_FILE)
    cfg = _route(client, pid, 1, "file::config/settings.toml")
    (shop_repo / "config/settings.toml").unlink()
    (shop_repo / "config").rmdir()
    os.symlink(outside, shop_repo / "config")
    e = client.err("perspective_peek", perspective_id=pid, route_id=cfg["route_id"], route_set_version=1)
    assert e["code"] == "path_denied" and "resolves outside the ingested root" in e["message"]


def _poison_source_path(ws, ext_id: str, source_path: str) -> None:
    """Make a node's stored source path hostile (as a corrupted or malicious graph.db would) and publish it."""
    db = ws.graph.store.db
    with db.write():
        db.execute("UPDATE nodes SET source_path = ? WHERE ext_id = ?", (source_path, ext_id))
        ws.graph.store.bump("graph_generation")


@pytest.mark.parametrize(("source_path", "why"), [
    ("../outside/secret.py", "'..' segments are not allowed"),
    ("src/../../outside/secret.py", "'..' segments are not allowed"),
    ("/etc/passwd", "absolute paths are not allowed"),
    ("src\\shop\\db.py", "NUL bytes and backslashes are not allowed in a source path"),
], ids=["dotdot", "inner-dotdot", "absolute", "backslash"])
def test_peek_refuses_paths_outside_the_roots(client: Client, shop_ws, tmp_path: Path, source_path: str,
                                              why: str) -> None:
    write_files(tmp_path / "outside", {"secret.py": "KEY = 1\n"})
    _poison_source_path(shop_ws, DB_FILE, source_path)
    pid = _anchored_at(client, SESSION_FILE)
    db = _route(client, pid, 1, DB_FILE)
    e = client.err("perspective_peek", perspective_id=pid, route_id=db["route_id"], route_set_version=1)
    assert e["code"] == "path_denied"
    assert e["message"] == f"refusing to read '{source_path}': {why}"


def test_peek_refuses_a_node_of_an_unknown_root(client: Client, shop_ws) -> None:
    db = shop_ws.graph.store.db
    with db.write():
        db.execute("UPDATE nodes SET root_id = NULL WHERE ext_id = ?", (DB_FILE,))
        shop_ws.graph.store.bump("graph_generation")
    pid = _anchored_at(client, SESSION_FILE)
    r = _route(client, pid, 1, DB_FILE)
    e = client.err("perspective_peek", perspective_id=pid, route_id=r["route_id"], route_set_version=1)
    assert e["code"] == "path_denied" and "not inside an ingested root" in e["message"]


# -- the checks themselves ------------------------------------------------------------------------------------
@pytest.mark.parametrize("rel", ["../x.py", "a/../../x.py", "/abs/x.py", "a\\b.py", "a\0b.py", ".."])
def test_check_relpath_refuses(rel: str) -> None:
    with pytest.raises(M1ndError) as e:
        pk.check_relpath(rel)
    assert e.value.code == "path_denied"


def test_resolve_inside_accepts_plain_and_inner_symlinks(tmp_path: Path) -> None:
    root = write_files(tmp_path / "root", {"a/b.py": "x = 1\n"})
    os.symlink(root / "a/b.py", root / "a/link.py")  # a symlink that stays inside is fine
    assert pk.resolve_inside(str(root), "a/b.py") == os.path.realpath(root / "a/b.py")
    assert pk.resolve_inside(str(root), "a/link.py") == os.path.realpath(root / "a/b.py")
    # a root that is itself reached through a symlink still works
    os.symlink(root, tmp_path / "alias")
    assert pk.resolve_inside(str(tmp_path / "alias"), "a/b.py") == os.path.realpath(root / "a/b.py")
    # a sibling directory sharing the root's name as a prefix is outside
    write_files(tmp_path / "root2", {"c.py": "y = 2\n"})
    os.symlink(tmp_path / "root2/c.py", root / "c.py")
    with pytest.raises(M1ndError):
        pk.resolve_inside(str(root), "c.py")


def test_excerpt_windows() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101))
    sym = pk.excerpt(text, is_file=False, line_start=10, line_end=20, max_lines=40, max_chars=2000, context=0)
    assert (sym["line_start"], sym["line_end"], sym["truncated"], sym["span_lines"]) == (10, 20, False, 11)
    assert sym["excerpt"].split("\n")[0] == "line 10" and sym["excerpt"].split("\n")[-1] == "line 20"
    long = pk.excerpt(text, is_file=False, line_start=10, line_end=90, max_lines=5, max_chars=2000, context=3)
    assert (long["line_start"], long["line_end"], long["truncated"]) == (7, 17, True)
    f = pk.excerpt(text, is_file=True, line_start=1, line_end=100, max_lines=40, max_chars=2000, context=5)
    assert (f["line_start"], f["line_end"], f["truncated"], f["span_lines"]) == (1, 40, True, 100)
    cut = pk.excerpt(text, is_file=True, line_start=1, line_end=100, max_lines=200, max_chars=200, context=0)
    assert cut["truncated"] and cut["excerpt"].endswith("\n…") and len(cut["excerpt"]) <= 200
    assert cut["excerpt"][:-2].split("\n")[-1] == f"line {cut['line_end']}"


def test_read_file_replaces_bad_utf8(tmp_path: Path) -> None:
    p = tmp_path / "x.py"
    p.write_bytes(b"name = '\xff\xfe'\n")
    text, replaced = pk.read_file(str(p), "x.py")
    assert replaced is True and "\ufffd" in text
