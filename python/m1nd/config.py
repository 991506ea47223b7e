"""Settings read from the environment (and CLI flags, which override them).

Nothing here touches the disk beyond resolving paths; directories are created by the store when first used.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from m1nd.errors import InvalidInputError


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidInputError(f"environment variable {name}={raw!r} is not an integer",
                                recover=f"unset {name} or set it to a whole number") from None


def home_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """``--home`` > ``$M1ND_HOME`` > ``~/.m1nd``."""
    raw = override or os.environ.get("M1ND_HOME") or "~/.m1nd"
    return Path(raw).expanduser().absolute()


def config_file(home: Path) -> Path:
    """``$M1ND_CONFIG`` > ``$M1ND_HOME/config.toml``."""
    raw = os.environ.get("M1ND_CONFIG")
    return Path(raw).expanduser().absolute() if raw else home / "config.toml"


def config_values(home: Path) -> dict[str, object]:
    """Top-level keys of the config file (``tools = "graph"``, ``agent = "me"``); {} when there is none."""
    path = config_file(home)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise InvalidInputError(f"cannot read the config file {path}: {e.strerror}",
                                recover="fix its permissions, or set M1ND_CONFIG to another file") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InvalidInputError(f"config file {path} is not valid TOML: {e}",
                                recover='fix the file; keys are written like tools = "core"') from None


def setting(name: str, flag: str | None, env: str, home: Path, default: str | None = None) -> tuple[str | None, str]:
    """A server setting and where it came from: the command-line flag > ``$env`` > the config file's ``name`` key
    > ``default``."""
    if flag:
        return flag, f"--{name}"
    if os.environ.get(env):
        return os.environ[env], env
    value = config_values(home).get(name)
    if value is not None:
        if not isinstance(value, str):
            raise InvalidInputError(f"config file {config_file(home)}: '{name}' must be a string (got {value!r})",
                                    recover=f'write it as {name} = "..."')
        return value, f"'{name}' in {config_file(home)}"
    return default, "default"


def busy_timeout_ms() -> int:
    return max(0, _int_env("M1ND_BUSY_TIMEOUT_MS", 10000))


def memory_db_path(home: Path) -> Path:
    raw = os.environ.get("M1ND_MEMORY_DB")
    return Path(raw).expanduser().absolute() if raw else home / "memory.db"


def memory_url(flag: str | None = None) -> str | None:
    """The memory's server store, ``--memory-url`` > ``$M1ND_MEMORY_URL``; None keeps the ``memory.db`` file."""
    raw = flag if flag is not None else os.environ.get("M1ND_MEMORY_URL", "")
    raw = raw.strip()
    if not raw:
        return None
    from m1nd.store.pg_url import is_postgres_url, redact

    if not is_postgres_url(raw):
        raise InvalidInputError(f"memory store address {redact(raw)!r} is not a postgresql:// URL",
                                recover="use postgresql://user[:password]@host[:port]/database, or unset "
                                        "M1ND_MEMORY_URL / drop --memory-url to keep the local memory.db")
    return raw


def git_toplevel(path: Path) -> Path | None:
    """The git work tree containing ``path``, or None (no git, not a repo, git failing)."""
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return Path(out.stdout.strip()).absolute()


def workspace_key(override: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """The project root that selects a workspace: ``--workspace`` > ``$M1ND_WORKSPACE`` > git top-level > cwd."""
    raw = override or os.environ.get("M1ND_WORKSPACE")
    if raw:
        return Path(raw).expanduser().absolute()
    base = (cwd or Path.cwd()).absolute()
    return git_toplevel(base) or base


def team_project(key: Path) -> str:
    """The name under which a workspace's trails and learned weights are shared on a server store (issue 18): the
    same project checked out on several machines must get the same name, whatever its local path.
    ``$M1ND_TEAM_PROJECT`` > the git ``origin`` remote (without credentials and a trailing ``.git``) > the
    workspace directory's name."""
    raw = os.environ.get("M1ND_TEAM_PROJECT", "").strip()
    if raw:
        return raw
    try:
        out = subprocess.run(["git", "-C", str(key), "remote", "get-url", "origin"], capture_output=True, text=True,
                             timeout=10, check=False)
        remote = out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        remote = ""
    if remote:
        remote = re.sub(r"^[a-z+]+://[^@/]*@", lambda m: m.group(0).split("//")[0] + "//", remote)
        return re.sub(r"\.git$", "", remote.rstrip("/"))
    return key.name or "root"


def workspace_dir(home: Path, key: Path) -> Path:
    """``$M1ND_HOME/workspaces/<slug>-<h8>`` (spec graph.md §1)."""
    slug = re.sub(r"[^a-z0-9-]+", "-", key.name.lower()).strip("-") or "root"
    h8 = hashlib.sha256(str(key).encode("utf-8")).hexdigest()[:8]
    return home / "workspaces" / f"{slug}-{h8}"


@dataclass(frozen=True)
class Settings:
    home: Path
    workspace_key: Path
    busy_timeout_ms: int
    watch: bool = False  # a serving workspace re-ingests its roots' changed files (m1nd serve --watch)
    memory_url: str | None = None  # a postgresql:// address: the memory lives on that server (issue 18)

    @property
    def workspace_dir(self) -> Path:
        return workspace_dir(self.home, self.workspace_key)

    @property
    def graph_db(self) -> Path:
        return self.workspace_dir / "graph.db"

    @property
    def memory_db(self) -> Path:
        return memory_db_path(self.home)

    @property
    def memory_store(self) -> str | Path:
        """Where the knowledge memory lives: the server address when one is set, else the ``memory.db`` file."""
        return self.memory_url or self.memory_db


def load_settings(*, home: str | None = None, workspace: str | None = None,
                  memory_url_flag: str | None = None) -> Settings:
    return Settings(home=home_dir(home), workspace_key=workspace_key(workspace), busy_timeout_ms=busy_timeout_ms(),
                    memory_url=memory_url(memory_url_flag))
