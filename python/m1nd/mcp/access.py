"""Who may reach the HTTP transport: the bind address, the Host and Origin checks, and bearer tokens.

On loopback (the default) the server trusts the machine: no token is needed, and ``Host``/``Origin`` must name a
loopback address, which stops a web page from reaching the server through DNS rebinding (issue 14). Beyond
loopback (``--host 0.0.0.0`` or a LAN address, issue 18) every request must carry ``Authorization: Bearer
<token>`` from ``m1nd token create``, and the traffic must be encrypted: TLS from ``--tls-cert``/``--tls-key``, or a
TLS-terminating proxy in front (then ``--allow-plain-http`` acknowledges that the hop to the proxy is private).
``--auth`` asks for tokens on loopback too, for a proxy on the same machine. ``--allow-host NAME`` adds the DNS
names clients use (the proxy's public name, say) to the accepted ``Host``/``Origin`` values. Host values that are IP
literals are accepted on a public bind: a rebinding attack needs a name, and a name must be listed.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from m1nd.errors import M1ndError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_NAME_RE = re.compile(r"^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")


class HostRefused(M1ndError):
    code = "invalid_argument"


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def check_host(host: str, *, tls: bool = False, plain_ok: bool = False) -> tuple[str, bool]:
    """The address to bind for ``--host`` and whether it is public (not loopback).

    A public address needs TLS or ``plain_ok`` (a TLS proxy in front); tokens are then always required (the
    caller turns them on). Host names are refused: bind an address, list names with ``--allow-host``."""
    h = host.strip()
    if h.lower() == "localhost":
        return "127.0.0.1", False
    addr = _ip(h)
    if addr is None:
        raise HostRefused(f"refusing to serve on --host {host}: give an IP address to bind (127.0.0.1 or ::1 for "
                          "this machine only, 0.0.0.0 or :: for every interface)",
                          recover="pass --host 127.0.0.1, or --host 0.0.0.0 with tokens and TLS; clients' DNS "
                                  "names go in --allow-host NAME")
    if addr.is_loopback:
        return str(addr), False
    if not (tls or plain_ok):
        raise HostRefused(f"refusing to serve on --host {host}: beyond loopback only over TLS with bearer tokens "
                          "(agents on this machine connect to http://127.0.0.1:<port>/mcp)",
                          recover="pass --tls-cert FILE --tls-key FILE (and create tokens with 'm1nd token create "
                                  "AGENT'), or put a TLS proxy in front and add --allow-plain-http; or bind "
                                  "--host 127.0.0.1")
    return str(addr), True


def _host_name(value: str) -> str | None:
    """The host part of a ``Host`` header or an origin's netloc, lower-cased; None when malformed."""
    try:
        parts = urlsplit("//" + value.strip())
        parts.port  # noqa: B018 — raises ValueError on a bad port
    except ValueError:
        return None
    return parts.hostname


@dataclass(frozen=True)
class Access:
    """The checks of one running HTTP server. ``tokens`` is a :class:`m1nd.auth.TokenService` when tokens are
    required (always on a public bind), else None."""

    public: bool = False
    tokens: Any = None
    names: frozenset[str] = field(default_factory=frozenset)

    def name_allowed(self, name: str | None) -> bool:
        if not name:
            return False
        name = name.lower()
        if name in LOOPBACK_NAMES or name in self.names:
            return True
        return self.public and _ip(name) is not None

    def host_allowed(self, host: str | None) -> bool:
        """The ``Host`` header names this server (a DNS-rebinding page sends its own name)."""
        return host is not None and self.name_allowed(_host_name(host))

    def origin_allowed(self, origin: str | None) -> bool:
        """A browser's ``Origin``, when sent, is http(s) on an accepted name."""
        if origin is None:
            return True
        try:
            parts = urlsplit(origin.strip())
            parts.port  # noqa: B018
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and not parts.path and self.name_allowed(parts.hostname)

    def agent_for(self, authorization: str | None) -> str | None:
        """The agent a bearer token acts as; None when tokens are required and this one is missing or refused."""
        if self.tokens is None:
            return None
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.tokens.verify(token.strip())


def check_names(names: tuple[str, ...] | list[str]) -> frozenset[str]:
    """Validate ``--allow-host`` values (DNS names or IP addresses)."""
    out = set()
    for raw in names:
        n = raw.strip().lower().strip("[]")
        if not (_NAME_RE.match(n) or _ip(n) is not None):
            raise HostRefused(f"--allow-host {raw!r} is not a host name or IP address",
                              recover="pass a name such as m1nd.example.com (no scheme, no port)")
        out.add(n)
    return frozenset(out)
