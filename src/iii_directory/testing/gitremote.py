"""Real git repositories served over HTTPS on 127.0.0.1 for tests.

Repositories are made with `git init` / `git commit` / `git push` into bare repositories and
served by git's own smart-HTTP CGI (`git http-backend`) behind a threaded HTTPS server using
the fixed loopback identity of `iii_directory.testing.tls`. The worker clones them with the
production URL policy unchanged (`https://` is allowed); git trusts the test certificate only
through its standard `GIT_SSL_CAINFO` variable, which a test sets in its own process:

    with GitRemote() as remote:
        monkeypatch.setenv("GIT_SSL_CAINFO", str(remote.ca_file))
        url = remote.create("skills-repo", {"skills/frontend/index.md": "# Frontend\\n"})
        remote.commit("skills-repo", {"skills/frontend/index.md": "# v2\\n"})
        remote.fail("hang")            # accept requests and never answer (timeouts)
        remote.heal()

`create` also takes `symlinks={"skills/x/evil.md": "/etc/passwd"}` to commit symbolic links.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .loopback import LoopbackHTTPServer, LoopbackService, QuietHandler
from .tls import write_identity


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Fixture",
        "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
        "GIT_COMMITTER_NAME": "Fixture",
        "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
        "GIT_TERMINAL_PROMPT": "0",
    })
    return env


class _TLSServer(LoopbackHTTPServer):
    def __init__(self, handler: type[BaseHTTPRequestHandler], context: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.context = context

    def finish_request(self, request: Any, client_address: Any) -> None:
        """TLS handshake in the per-connection thread, so a slow client blocks no one."""
        try:
            request.settimeout(30)
            wrapped = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        super().finish_request(wrapped, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


class GitRemote(LoopbackService):
    thread_name = "git-remote"

    def __init__(self, root: Path | None = None) -> None:
        super().__init__()
        self._owned_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="iii-gitremote-")) if root is None else root
        self.root.mkdir(parents=True, exist_ok=True)
        self.served = self.root / "served"
        self.work = self.root / "work"
        self.served.mkdir(exist_ok=True)
        self.work.mkdir(exist_ok=True)
        self.ca_file, self._key_file = write_identity(self.root / "tls")
        self.requests: list[tuple[str, str]] = []
        self._mode: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def _serve(self) -> _TLSServer:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_file, self._key_file)
        remote = self

        class Handler(_CGIHandler):
            owner = remote

        return _TLSServer(Handler, context)

    def _closed(self) -> None:
        if self._owned_root:
            shutil.rmtree(self.root, ignore_errors=True)

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}.git"

    @property
    def env(self) -> dict[str, str]:
        """What the cloning process needs to trust this server."""
        return {"GIT_SSL_CAINFO": str(self.ca_file)}

    # -- behaviour ---------------------------------------------------------------------------

    def fail(self, mode: str | int) -> None:
        """`"hang"` (accept and never answer) or an HTTP status for every request."""
        self._mode = str(mode)

    def heal(self) -> None:
        self._mode = None

    # -- repositories --------------------------------------------------------------------------

    def _git(self, *args: str, cwd: Path) -> str:
        result = subprocess.run(
            ["git", *args], cwd=cwd, env=_git_env(self.root), capture_output=True, text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def create(self, name: str, files: Mapping[str, str | bytes], *, branch: str = "main",
               symlinks: Mapping[str, str] | None = None, message: str = "initial") -> str:
        """A new repository `name` with one commit on `branch`; returns its clone URL."""
        bare = self.served / f"{name}.git"
        work = self.work / name
        if bare.exists() or work.exists():
            raise ValueError(f"repository {name} already exists")
        bare.mkdir(parents=True)
        self._git("init", "--quiet", "--bare", str(bare), cwd=self.root)
        self._git("symbolic-ref", "HEAD", f"refs/heads/{branch}", cwd=bare)
        work.mkdir(parents=True)
        self._git("init", "--quiet", str(work), cwd=self.root)
        self._git("checkout", "--quiet", "-b", branch, cwd=work)
        self._git("config", "core.symlinks", "true", cwd=work)
        self._write(work, files, (), symlinks or {})
        self._git("add", "--all", cwd=work)
        self._git("commit", "--quiet", "--allow-empty", "-m", message, cwd=work)
        self._git("push", "--quiet", str(bare), f"{branch}:{branch}", cwd=work)
        return self.url(name)

    def commit(self, name: str, files: Mapping[str, str | bytes] | None = None, *,
               branch: str = "main", remove: Iterable[str] = (),
               symlinks: Mapping[str, str] | None = None, message: str = "update") -> None:
        """Commit changes on `branch` (created from the current one when new) and push."""
        work = self.work / name
        bare = self.served / f"{name}.git"
        self._git("checkout", "--quiet", "-B", branch, cwd=work)
        self._write(work, files or {}, remove, symlinks or {})
        self._git("add", "--all", cwd=work)
        self._git("commit", "--quiet", "--allow-empty", "-m", message, cwd=work)
        self._git("push", "--quiet", "--force", str(bare), f"{branch}:{branch}", cwd=work)

    @staticmethod
    def _write(work: Path, files: Mapping[str, str | bytes], remove: Iterable[str],
               symlinks: Mapping[str, str]) -> None:
        for rel, content in files.items():
            path = work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.write_bytes(content)
        for rel in remove:
            path = work / rel
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        for rel, target in symlinks.items():
            path = work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() or path.is_symlink():
                path.unlink()
            os.symlink(target, path)


class _CGIHandler(QuietHandler):
    """Forwards each request to `git http-backend` (CGI) and relays its answer."""

    owner: GitRemote

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size_line = self.rfile.readline().strip()
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def serve(self, method: str) -> None:
        owner = self.owner
        owner.requests.append((method, self.path))
        body = self._read_body()
        mode = owner._mode
        if mode == "hang":
            owner.hang()
            self.close_connection = True
            return
        if mode is not None and mode.isdigit():
            self._reply(int(mode), {"Content-Type": "text/plain"}, b"mock failure\n")
            return
        parts = urlsplit(self.path)
        env = _git_env(owner.root)
        env.update({
            "GIT_PROJECT_ROOT": str(owner.served),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REQUEST_METHOD": method,
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
        })
        for header, variable in (("Git-Protocol", "HTTP_GIT_PROTOCOL"),
                                 ("Content-Encoding", "HTTP_CONTENT_ENCODING")):
            if self.headers.get(header):
                env[variable] = self.headers[header]
        result = subprocess.run(["git", "http-backend"], input=body, env=env,
                                capture_output=True, check=False)
        raw = result.stdout
        split_at, sep_len = raw.find(b"\r\n\r\n"), 4
        if split_at < 0:
            split_at, sep_len = raw.find(b"\n\n"), 2
        if split_at < 0:
            self._reply(500, {"Content-Type": "text/plain"}, result.stderr or b"cgi failed\n")
            return
        status = 200
        headers: dict[str, str] = {}
        for line in raw[:split_at].decode("latin-1").splitlines():
            if ":" not in line:
                continue
            key, value = line.split(":", 1)
            if key.strip().lower() == "status":
                status = int(value.strip().split()[0])
            else:
                headers[key.strip()] = value.strip()
        self._reply(status, headers, raw[split_at + sep_len:])

    def _reply(self, status: int, headers: Mapping[str, str], data: bytes) -> None:
        try:
            self.send_response(status)
            for key, value in headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (OSError, socket.timeout):
            self.close_connection = True
