"""A throwaway PostgreSQL server for tests and benchmarks (issue 18, item 5): ``initdb`` in a temporary directory.

Uses the server binaries of Debian's ``postgresql`` package (``pg_config --bindir``, else
``/usr/lib/postgresql/*/bin``), listens on 127.0.0.1 at a free port with ``trust`` authentication, and can be
stopped, killed and restarted mid-test (the fault tests). Running as root, the server runs as the ``postgres``
user through ``runuser`` (PostgreSQL refuses to run as root). ``available()`` says whether a server can be started
here; suites skip with its reason when not.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def bindir() -> Path | None:
    exe = shutil.which("pg_config")
    if exe:
        out = subprocess.run([exe, "--bindir"], capture_output=True, text=True, check=False)
        d = Path(out.stdout.strip())
        if (d / "postgres").exists():
            return d
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


def pgvector_bindir() -> Path | None:
    """The server binaries of the ``pgserver`` wheel (PostgreSQL 16 with the pgvector extension), when installed:
    Debian has no pgvector package, and this is how the pgvector path is tested (issue 18 item 2)."""
    import warnings

    try:
        with warnings.catch_warnings():  # pgserver asks platformdirs for a runtime dir at import; none here
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
            import pgserver
    except ImportError:
        return None
    d = Path(pgserver.__file__).parent / "pginstall" / "bin"
    return d if (d / "postgres").exists() else None


def available(bin: Path | None = None) -> tuple[bool, str]:
    d = bin or bindir()
    if d is None:
        return False, "no PostgreSQL server binaries (install Debian's postgresql package)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return False, "running as root without runuser: PostgreSQL cannot be started"
    return True, ""


def start_or_skip(*, pgvector: bool = False) -> PgCluster:
    """A new server for a fixture: skipped where none can start, failed in CI, where the PostgreSQL suites must run
    (issue 18 item 5). ``pgvector``: the pgserver wheel's server, which has the extension; ``pgserver`` ships
    wheels for CPython 3.11 and 3.12 only, so on a newer Python its suites skip, in CI too."""
    import sys

    import pytest

    if pgvector:
        b = pgvector_bindir()
        if b is None:
            why = "no pgvector server (pip install pgserver: PostgreSQL 16 with pgvector)"
            if os.environ.get("CI") and sys.version_info < (3, 13):
                pytest.fail(f"pgvector is required in CI on this Python: {why}")
            pytest.skip(why)
        return PgCluster(bin=b)
    ok, why = available()
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI: {why}")
        pytest.skip(why)
    return PgCluster()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    """One PostgreSQL server on a fresh data directory; ``url`` names its ``m1nd`` database."""

    def __init__(self, base: Path | None = None, *, bin: Path | None = None) -> None:
        ok, why = available(bin)
        if not ok:
            raise RuntimeError(why)
        self.bin = bin or bindir()
        assert self.bin is not None
        self.base = Path(tempfile.mkdtemp(prefix="m1nd-pg-", dir=base))
        self.data = self.base / "data"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            os.chmod(self.base, 0o755)
            shutil.chown(self.base, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-instructions", "-N")
        # fsync off is safe for the tests' crashes (a killed server's writes are in the OS page cache); a
        # synchronous commit stays on, or an acknowledged commit could vanish with the killed process.
        conf = self.data / "postgresql.conf"
        with open(conf, "a") as f:
            f.write(f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = "
                    f"'{self.base}'\nfsync = off\nfull_page_writes = off\n"
                    "max_connections = 200\nshared_buffers = 64MB\n")
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "m1nd")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/m1nd"

    def _admin(self) -> str:
        return self.url.rsplit("/", 1)[0] + "/postgres"

    def new_database(self, name: str) -> str:
        """A fresh, empty database ``name`` (dropped first if it exists); its URL."""
        import psycopg

        with psycopg.connect(self._admin(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + "/" + name

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self._admin(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def _cmd(self, tool: str, *args: str) -> list[str]:
        cmd = [str(self.bin / tool), *args]
        return ["runuser", "-u", "postgres", "--", *cmd] if self.as_root else cmd

    def _run(self, tool: str, *args: str) -> None:
        out = subprocess.run(self._cmd(tool, *args), capture_output=True, text=True, timeout=120, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"{tool} failed: {out.stderr.strip() or out.stdout.strip()}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.base / "server.log"), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        """SIGKILL the postmaster (a crash); its backends exit when they notice. ``start`` recovers it."""
        pid = self.pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
        # Backends left behind keep the shared memory; wait until they are gone before a restart.
        time.sleep(0.5)

    def close(self) -> None:
        try:
            if self.pid() is not None:
                self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.base, ignore_errors=True)
