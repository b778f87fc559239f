"""`iii-directory serve` as a real subprocess against the test engine: it connects, registers,
answers, keeps retrying while the engine is down, refuses a malformed URL, and exits cleanly on
SIGTERM."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from wire_harness import serve_env, serve_subprocess

from iii_directory.config import Settings, config_id
from iii_directory.functions import build_table
from iii_directory.testing.engine import TestEngine

pytestmark = [pytest.mark.wire, pytest.mark.timeout(120),
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_log(log: Path, text: str, timeout: float = 30.0) -> str:
    with anyio.fail_after(timeout):
        while text not in (content := log.read_text(encoding="utf-8", errors="replace")):
            await anyio.sleep(0.05)
    return content


async def test_serve_subprocess_connects_registers_answers_and_stops_on_sigterm(
        settings: Settings, roots: dict[str, Path], tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    async with TestEngine(functions_debounce_s=0.05) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        async with serve_subprocess(engine.url, roots["home"], tmp_path, log) as process:
            await engine.wait_for(lambda: engine.worker("iii-directory") is not None
                                  and engine.function("directory::engine::functions::info") is not None
                                  and engine.function("directory::on-config-change") is not None,
                                  timeout=60)
            async with engine.client() as client:
                info = await client.call("directory::engine::functions::info",
                                         {"function_id": "directory::on-config-change"})
                assert info["worker_name"] == "iii-directory"
                assert info["metadata"] == {"internal": True}
            conn = engine.worker("iii-directory")
            assert conn is not None and conn.pid == process.pid
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(20):
                code = await process.wait()
    content = log.read_text(encoding="utf-8", errors="replace")
    assert code == 0, content
    assert "connected to engine" in content
    assert "shutting down" in content and "iii-directory stopped" in content


async def test_serve_keeps_retrying_while_the_engine_is_down(roots: dict[str, Path], tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    url = f"ws://127.0.0.1:{_free_port()}/"
    with log.open("wb") as sink:
        process = await anyio.open_process([sys.executable, "-m", "iii_directory", "serve", "--url", url],
                                           stdout=sink, stderr=subprocess.STDOUT, env=serve_env(roots["home"]),
                                           cwd=str(tmp_path))
        try:
            content = await _wait_log(log, "retrying in")
            assert "unreachable" in content
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(20):
                assert await process.wait() == 0
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "not a url", "ws://"])
def test_serve_refuses_a_malformed_url(url: str, roots: dict[str, Path], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "iii_directory", "serve", "--url", url],
                          capture_output=True, text=True, env=serve_env(roots["home"]), cwd=str(tmp_path), timeout=60)
    assert done.returncode == 2
    assert "malformed engine URL" in done.stderr or "engine URL is empty" in done.stderr


def test_serve_url_falls_back_to_iii_url(roots: dict[str, Path], tmp_path: Path) -> None:
    env = serve_env(roots["home"])
    env["III_URL"] = "ftp://wrong"
    done = subprocess.run([sys.executable, "-m", "iii_directory", "serve"], capture_output=True, text=True,
                          env=env, cwd=str(tmp_path), timeout=60)
    assert done.returncode == 2 and "ftp://wrong" in done.stderr


async def _serve_once(engine: TestEngine, roots: dict[str, Path], tmp_path: Path, log: Path) -> dict[str, tuple]:
    """Start `serve`, wait for its registrations, stop it; the registered frames by function id."""
    async with serve_subprocess(engine.url, roots["home"], tmp_path, log) as process:
        content = await _wait_log(log, " functions, ", timeout=60)
        count = int(content.split("registered ", 1)[1].split(" functions", 1)[0])
        conn = engine.worker("iii-directory")
        assert conn is not None

        def owned() -> dict[str, tuple]:
            return {key[1]: (e.description, e.request_format, e.response_format, e.metadata)
                    for key, e in engine.functions.items() if e.owner is conn}

        await engine.wait_for(lambda: len(owned()) == count, timeout=30)
        frames = owned()
        async with engine.client() as client:  # a handler still answers (its models build on use)
            info = await client.call("directory::engine::functions::info",
                                     {"function_id": "directory::kits::apply"})
            assert info["worker_name"] == "iii-directory"
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(20):
            await process.wait()
    return frames


async def test_serve_registers_the_frames_the_function_table_generates(
        settings: Settings, roots: dict[str, Path], tmp_path: Path) -> None:
    """`serve` sends the published frames (`data/schemas.json`), and they are exactly the
    frames the table's models generate."""
    async with TestEngine(functions_debounce_s=0.05) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        frames = await _serve_once(engine, roots, tmp_path, tmp_path / "serve.log")
    generated = {spec.id: spec.registration() for spec in build_table().functions.values()}
    assert set(frames) == set(generated)
    for function_id, (description, request, response, metadata) in frames.items():
        frame = generated[function_id]
        assert (description, request, response, metadata) == (
            frame["description"], frame["request_format"], frame.get("response_format"), frame["metadata"]
        ), function_id
