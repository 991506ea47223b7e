"""What ``tools/list`` costs a host per tool profile (issue 15 item 1).

For each profile a real ``m1nd serve --tools PROFILE`` answers ``tools/list`` over stdio; the bench reports the tool
count, the characters of the ``result`` JSON and approximate tokens (characters / 4, the usual rule of thumb for
English and JSON with a BPE tokenizer), and times the round trip. The core profile must stay at most 12 tools and
16,000 characters.

Run with timing and the table:  pytest bench/test_tools_list_bench.py -s
As correctness checks (CI):     pytest bench/test_tools_list_bench.py --benchmark-disable
"""

from __future__ import annotations

import json
import sys

import pytest

from m1nd.tools.profiles import PROFILES
from test_mcp_bench import LineServer

CHARS_PER_TOKEN = 4
SIZES: dict[str, tuple[int, int]] = {}


@pytest.mark.parametrize("profile", PROFILES)
def test_tools_list_size(benchmark, tmp_path, profile: str) -> None:
    server = LineServer({"M1ND_HOME": str(tmp_path / "home"), "M1ND_WORKSPACE": str(tmp_path),
                         "M1ND_EMBEDDER": "hashing", "SKBUILD_EDITABLE_VERBOSE": "0", "M1ND_TOOLS": profile})
    try:
        server.initialize()
        reply = benchmark(server.request, "tools/list", {})
    finally:
        assert server.close() == 0
    result = json.dumps(reply["result"], separators=(",", ":"), ensure_ascii=False)
    tools = len(reply["result"]["tools"])
    SIZES[profile] = (tools, len(result))
    benchmark.extra_info.update({"tools": tools, "chars": len(result),
                                 "approx_tokens": len(result) // CHARS_PER_TOKEN})
    if profile == "core":
        assert tools <= 12 and len(result) <= 16_000
    if len(SIZES) == len(PROFILES):
        sys.stderr.write("\ntools/list per profile: profile  tools  chars  ~tokens\n")
        for name, (n, chars) in SIZES.items():
            sys.stderr.write(f"  {name:<13} {n:>5} {chars:>7} {chars // CHARS_PER_TOKEN:>7}\n")
