"""``m1nd serve --http`` beyond loopback (issue 18, item 4): bearer tokens bound to agents, TLS, revocation.

A real server on 0.0.0.0 with a self-signed certificate (made by the openssl command), driven by the official SDK
client over HTTPS and by raw HTTPS requests; tokens made and revoked with the ``m1nd token`` commands."""

from __future__ import annotations

import http.client
import json
import shutil
import sqlite3
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from test_server_support import (  # noqa: F401 — fixtures are used by name
    HttpServerProcess,
    anyio_backend,
    fixture_repo,
    full_env,
    http_server,
    server_env,
)

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def m1nd(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "m1nd", *args], capture_output=True, text=True,
                          env=full_env(env), timeout=120)


def make_token(env: dict[str, str], agent: str) -> dict[str, Any]:
    out = m1nd(env, "token", "create", agent, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def cert(tmp_path: Path) -> tuple[Path, Path]:
    key, crt = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(crt)], check=True, capture_output=True, timeout=60)
    return crt, key


def local_url(srv: HttpServerProcess) -> str:
    u = urlsplit(srv.url)
    assert u.scheme == "https" and u.hostname == "0.0.0.0", srv.url
    return f"https://localhost:{u.port}/mcp"


def client(url: str, token: str, crt: Path) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, verify=ssl.create_default_context(
        cafile=str(crt)), timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(url, http_client=http), mode="legacy")


class Raw:
    def __init__(self, url: str, crt: Path) -> None:
        u = urlsplit(url)
        self.port = u.port
        self.ctx = ssl.create_default_context(cafile=str(crt))

    def post(self, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPSConnection("localhost", self.port, timeout=60, context=self.ctx)
        try:
            conn.request("POST", "/mcp", json.dumps(body).encode(), {
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()


def test_token_commands(server_env: dict[str, str]) -> None:
    made = make_token(server_env, "alice")
    assert made["token"].startswith("m1nd_") and made["agent"] == "alice" and made["state"] == "active"
    listed = json.loads(m1nd(server_env, "token", "list", "--json").stdout)["tokens"]
    assert [(t["id"], t["agent"], t["state"]) for t in listed] == [(made["id"], "alice", "active")]
    assert all("token" not in t for t in listed)
    # Only the digest is stored.
    db = Path(server_env["M1ND_HOME"]) / "tokens.db"
    with sqlite3.connect(db) as con:
        stored = [str(v) for row in con.execute("SELECT * FROM tokens") for v in row]
    assert made["token"] not in " ".join(stored) and made["token"].split("_", 2)[2] not in " ".join(stored)
    revoked = m1nd(server_env, "token", "revoke", made["id"], "--json")
    assert revoked.returncode == 0 and json.loads(revoked.stdout)["state"] == "revoked"
    # Bad input: clear errors, nothing written.
    for args, msg in ((("token", "revoke", "feedf00d"), "no token with id 'feedf00d'"),
                      (("token", "create", "bad name"), "agent name 'bad name'"),
                      (("token", "create", "bob", "--expires-days", "0"), "--expires-days must be in")):
        out = m1nd(server_env, *args)
        assert out.returncode != 0 and msg in out.stderr and "Traceback" not in out.stderr
    after = json.loads(m1nd(server_env, "token", "list", "--json").stdout)["tokens"]
    assert [(t["id"], t["state"]) for t in after] == [(made["id"], "revoked")]


@pytest.mark.parametrize(("args", "msg"), [
    ([], "beyond loopback only over TLS with bearer tokens"),
    (["--allow-plain-http"], "has no usable one"),
])
def test_public_bind_refused_without_tls_or_tokens(server_env: dict[str, str], args: list[str], msg: str) -> None:
    out = subprocess.run([sys.executable, "-m", "m1nd", "serve", "--http", "--host", "0.0.0.0", "--port", "0",
                          *args], capture_output=True, text=True, env=full_env(server_env), timeout=120)
    assert out.returncode == 2 and msg in out.stderr and out.stdout == ""
    assert "Traceback" not in out.stderr


def test_bad_certificate_refused(server_env: dict[str, str], tmp_path: Path) -> None:
    make_token(server_env, "alice")
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n")
    out = subprocess.run([sys.executable, "-m", "m1nd", "serve", "--http", "--host", "0.0.0.0", "--port", "0",
                          "--tls-cert", str(bogus)], capture_output=True, text=True, env=full_env(server_env),
                         timeout=120)
    assert out.returncode == 2 and "cannot load the TLS certificate" in out.stderr and "Traceback" not in out.stderr
    out = m1nd(server_env, "serve", "--tls-cert", str(bogus))
    assert out.returncode == 2 and "only apply with --http" in out.stderr


@pytest.mark.anyio
async def test_tokens_bind_agents_over_tls(http_server, server_env: dict[str, str], cert: tuple[Path, Path]) -> None:
    crt, key = cert
    alice, bob = make_token(server_env, "alice"), make_token(server_env, "bob")
    srv: HttpServerProcess = http_server(args=["--host", "0.0.0.0", "--tls-cert", str(crt), "--tls-key", str(key)])
    assert "bearer tokens required" in srv.stderr
    url = local_url(srv)
    raw = Raw(url, crt)

    # No token, a malformed one, a forged one: 401 with a Bearer challenge, nothing served.
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic YTpi"},
                    {"Authorization": "Bearer " + alice["token"][:-2] + "xx"}):
        status, h, body = raw.post(INIT, headers)
        assert status == 401 and h["www-authenticate"].startswith('Bearer realm="m1nd"'), (headers, body)

    async with client(url, alice["token"], crt) as a, client(url, bob["token"], crt) as b:
        # Calls without agent_id act as the token's agent.
        added = await a.call_tool("memory_add", {"title": "Pool note", "category": "insight", "private": True,
                                                 "content": "alice's private note about the session pool"})
        assert added.is_error is False, added.content[0].text
        mine = await a.call_tool("memory_search", {"query": "session pool private note"})
        assert mine.is_error is False and len(mine.structured_content["results"]) == 1
        assert mine.structured_content["results"][0]["owner"] == "alice"
        # Bob's token cannot see alice's private memory, nor claim to be alice.
        theirs = await b.call_tool("memory_search", {"query": "session pool private note"})
        assert theirs.is_error is False and theirs.structured_content["results"] == []
        claimed = await b.call_tool("memory_search", {"agent_id": "alice", "query": "session pool private note"})
        assert claimed.is_error is True and claimed.structured_content["error"]["code"] == "wrong_agent"
        same = await b.call_tool("memory_search", {"agent_id": "bob", "query": "session pool"})
        assert same.is_error is False

    # A session opened by alice cannot be used with bob's token.
    status, h, _ = raw.post(INIT, {"Authorization": f"Bearer {alice['token']}"})
    assert status == 200
    sid = h["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert raw.post(ping, {"Authorization": f"Bearer {alice['token']}", "Mcp-Session-Id": sid})[0] == 200
    assert raw.post(ping, {"Authorization": f"Bearer {bob['token']}", "Mcp-Session-Id": sid})[0] == 403

    # Revocation takes effect on the very next request of an open session.
    out = m1nd(server_env, "token", "revoke", alice["id"])
    assert out.returncode == 0, out.stderr
    assert raw.post(ping, {"Authorization": f"Bearer {alice['token']}", "Mcp-Session-Id": sid})[0] == 401
    assert raw.post(INIT, {"Authorization": f"Bearer {bob['token']}"})[0] == 200

    # Plain HTTP to the TLS port is not served.
    conn = http.client.HTTPConnection("127.0.0.1", urlsplit(url).port, timeout=30)
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        conn.request("POST", "/mcp", b"{}", {"Content-Type": "application/json"})
        conn.getresponse().read()
    conn.close()
    assert srv.stop() == 0


def test_auth_on_loopback_and_allowed_names(http_server, server_env: dict[str, str]) -> None:
    carol = make_token(server_env, "carol")
    srv: HttpServerProcess = http_server(args=["--auth", "--allow-host", "m1nd.example.com"])
    port = urlsplit(srv.url).port

    def post(headers: dict[str, str]) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request("POST", "/mcp", json.dumps(INIT).encode(), {
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
            r = conn.getresponse()
            r.read()
            return r.status
        finally:
            conn.close()

    bearer = {"Authorization": f"Bearer {carol['token']}"}
    assert post({}) == 401
    assert post(bearer) == 200
    assert post({**bearer, "Host": "m1nd.example.com"}) == 200
    assert post({**bearer, "Host": "m1nd.example.com", "Origin": "https://m1nd.example.com"}) == 200
    assert post({**bearer, "Host": "evil.example"}) == 403
    assert post({**bearer, "Host": "192.0.2.7"}) == 403  # IP literals pass only on a public bind
    assert srv.stop() == 0
