"""A configuration file the user names (`--config` or `III_CONFIG`) that is missing, unreadable
or unparseable stops `call` and `serve` with a clear message and a non-zero exit (issue 17,
defect 5) — it never runs with defaults that write into `./skills` of the current directory."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(120)]


def env_of(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(home), "LOG_LEVEL": "info", "OTEL_ENABLED": "false"})
    env.update(extra)
    return env


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"ws://127.0.0.1:{port}"


def bad_configs(tmp_path: Path) -> dict[str, Path]:
    broken = tmp_path / "broken.yaml"
    broken.write_text("skills_folder: [unclosed\n")
    listy = tmp_path / "list.yaml"
    listy.write_text("- skills_folder\n")
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    invalid = tmp_path / "invalid.yaml"
    invalid.write_text("download_timeout_ms: -5\n")
    return {"missing": tmp_path / "typo.yaml", "broken": broken, "list": listy, "folder": folder,
            "invalid": invalid}


def run(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "cwd"
    work.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "iii_directory", *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=90)


@pytest.mark.parametrize("kind", ["missing", "broken", "list", "folder", "invalid"])
@pytest.mark.parametrize("via", ["flag", "env"])
def test_call_refuses_a_named_config_it_cannot_use(tmp_path: Path, kind: str, via: str) -> None:
    path = bad_configs(tmp_path)[kind]
    home = tmp_path / "home"
    home.mkdir()
    payload = json.dumps({"id": "ns/doc", "content": "# Doc\n\nBody.\n"})
    if via == "flag":
        done = run(tmp_path, env_of(home), "call", "directory::skills::create", payload, "--config", str(path))
    else:
        done = run(tmp_path, env_of(home, III_CONFIG=str(path)), "call", "directory::skills::create", payload)
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert set(error) == {"code", "message"}
    assert str(path) in error["message"] or kind == "invalid"
    assert not (tmp_path / "cwd" / "skills").exists(), "ran with defaults and wrote into ./skills"


@pytest.mark.parametrize("kind", ["missing", "broken", "invalid"])
@pytest.mark.parametrize("via", ["flag", "env"])
def test_serve_refuses_a_named_config_it_cannot_use(tmp_path: Path, kind: str, via: str) -> None:
    path = bad_configs(tmp_path)[kind]
    home = tmp_path / "home"
    home.mkdir()
    url = closed_port_url()
    if via == "flag":
        done = run(tmp_path, env_of(home), "serve", "--url", url, "--config", str(path))
    else:
        done = run(tmp_path, env_of(home, III_CONFIG=str(path)), "serve", "--url", url)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("iii-directory: ") and ("config" in last)
    assert str(path) in last or kind == "invalid"
