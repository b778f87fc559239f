"""What the configuration needs without its pydantic model: folder resolution
(docs/rules/surfaces.md §2.2), the YAML configuration file a user names, and the two errors a
configuration raises. `config` (the `Settings` model) and `plain_settings` (the same values as a
plain object, for the file-backed `call` path) both build on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

CONFIG_ID = "iii-directory"


class InvalidSettings(ValueError):
    """A configuration value that fails validation; the message names the field."""


class SeedUnreadable(Exception):
    """The configuration file the user named (`--config` / `III_CONFIG`) cannot be used."""


def compose_default(rel: str) -> str:
    """`<III_COMPOSE_DIR>/<rel>` (absolute, `.` dropped) when that variable is set at startup."""
    base = os.environ.get("III_COMPOSE_DIR", "").strip()
    if not base:
        return rel
    return os.path.normpath(os.path.join(os.path.abspath(base), rel))


def registry_base(value: str) -> str:
    """`registry_url` as the settings hold it: trimmed, without trailing `/`; ValueError unless
    it starts with `http://` or `https://`."""
    value = value.strip()
    if not value.startswith(("http://", "https://")):
        raise ValueError("registry_url must be an http(s) URL")
    return value.rstrip("/")


def web_base(registry_url: str, registry_web_url: str | None) -> str:
    """`registry_web_url` trimmed of blanks and trailing `/` when it is non-blank, else
    `registry_url` (without trailing `/`) with a leading `api.` host label dropped."""
    custom = (registry_web_url or "").strip()
    if custom:
        return custom.rstrip("/")
    scheme, _, rest = registry_url.rstrip("/").partition("://")
    return f"{scheme}://{rest.removeprefix('api.')}"


def home_dir() -> str | None:
    return os.environ.get("HOME") or os.environ.get("USERPROFILE") or None


def resolve_path(raw: str) -> Path:
    """Absolute as is; `~` / `~/rest` against HOME (else USERPROFILE); relative against
    `III_COMPOSE_DIR` when set, else the process cwd; `.` components removed."""
    if raw == "~" or raw.startswith(("~/", "~\\")):
        home = home_dir()
        if home is None:
            return Path(raw)
        return Path(os.path.normpath(os.path.join(home, raw[2:]) if raw != "~" else home))
    if os.path.isabs(raw):
        return Path(raw)
    base = os.environ.get("III_COMPOSE_DIR", "").strip() or os.getcwd()
    return Path(os.path.normpath(os.path.join(os.path.abspath(base), raw)))


def project_root() -> Path:
    """Directory of `III_COMPOSE_FILE`, else `III_COMPOSE_DIR`, else the cwd (docs/rules/surfaces.md §2.2)."""
    compose_file = os.environ.get("III_COMPOSE_FILE", "").strip()
    if compose_file:
        return Path(os.path.abspath(compose_file)).parent
    compose_dir = os.environ.get("III_COMPOSE_DIR", "").strip()
    return Path(os.path.abspath(compose_dir or os.getcwd()))


def config_id() -> str:
    """`III_CONFIG_NAME` when set, else `iii-directory`."""
    return os.environ.get("III_CONFIG_NAME", "").strip() or CONFIG_ID


def read_seed(path: str | None) -> dict[str, Any] | None:
    """Read the YAML configuration file the user named; None when none was named.

    A named file that is missing, unreadable, not YAML or not a mapping raises
    `SeedUnreadable` with a message naming the path: running on with the built-in defaults
    would send writes to `./skills` of whatever directory the worker started in (issue 17;
    this replaces the spec's `relying on existing configuration entry` warning). An empty
    file is an empty seed."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            value = yaml.safe_load(handle)
    except FileNotFoundError:
        raise SeedUnreadable(f"config file {path} does not exist (named by --config or III_CONFIG)") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SeedUnreadable(f"config file {path} cannot be read: {reason}") from None
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise SeedUnreadable(f"config file {path} is not valid YAML: {detail}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SeedUnreadable(
            f"config file {path} must hold a YAML mapping of settings, not a {type(value).__name__}"
        )
    return value
