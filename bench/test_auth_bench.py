"""The per-request cost of bearer tokens (issue 18 item 4): the server checks every request against ``tokens.db``.

``verify`` of a valid token among 1,000 issued ones (one primary-key lookup + a SHA-256 comparison under the
repository's lock), beside the refusal of a forged token with a valid id (same work) and of a malformed one
(no lookup).

Run with timing:            pytest bench/test_auth_bench.py -s
As correctness checks (CI): pytest bench/test_auth_bench.py --benchmark-disable
"""

from __future__ import annotations

from pathlib import Path

import pytest

from m1nd.auth import TokenService

ISSUED = 1000


@pytest.fixture(scope="module")
def tokens(tmp_path_factory) -> tuple[TokenService, list[str]]:
    svc = TokenService(Path(tmp_path_factory.mktemp("auth-bench-home")))
    made = [svc.create(f"agent-{i}")[0] for i in range(ISSUED)]
    yield svc, made
    svc.close()


def test_verify_valid_token(benchmark, tokens) -> None:
    svc, made = tokens
    token = made[ISSUED // 2]
    assert benchmark(svc.verify, token) == f"agent-{ISSUED // 2}"


def test_refuse_forged_token(benchmark, tokens) -> None:
    svc, made = tokens
    forged = made[7][:-4] + ("AAAA" if not made[7].endswith("AAAA") else "BBBB")
    assert benchmark(svc.verify, forged) is None


def test_refuse_malformed_token(benchmark, tokens) -> None:
    svc, _ = tokens
    assert benchmark(svc.verify, "not-a-token") is None
