"""`iii-directory-console` (issue 34 item 15): the Directory page on 127.0.0.1 against the worker
and the in-process test engine over the current directory's folders, its address printed.

The command runs as a subprocess in a temporary project; the browser test drives the page it
serves with playwright-core (skipped like the click-through when Chromium or the npm packages
are missing, failed when `CI` is set).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from iii_directory.testing.console_app import main, usage_problem, vendor_dir
from iii_directory.testing.page_server import VENDOR_MODULES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from test_click_through import ARTIFACTS, require_prerequisites  # noqa: E402
VENDOR = HERE / "harness" / ".vendor"
START_TIMEOUT_S = 60.0

pytestmark = pytest.mark.timeout(180)


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "skills" / "demo").mkdir(parents=True)
    (project / "skills" / "demo" / "hello.md").write_text("# Demo skill\n\nSay hello.\n")
    (project / "agents").mkdir()
    (project / "config.yaml").write_text("auto_download: false\nfilter_unregistered: false\n")
    return project


def fake_vendor(root: Path) -> Path:
    vendor = root / "vendor"
    vendor.mkdir()
    for name in VENDOR_MODULES:
        (vendor / name).write_text("export default {};\n")
    return vendor


@pytest.fixture
def console_command(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """Start the command in a temporary project; yield (the printed page URL, the project)."""
    project = make_project(tmp_path)
    vendor = request.param(tmp_path) if callable(getattr(request, "param", None)) else fake_vendor(tmp_path)
    env = dict(os.environ, HOME=str(tmp_path / "home"), PYTHONUNBUFFERED="1")
    log = (tmp_path / "console.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "iii_directory.testing.console_app", "--port", "0", "--vendor", str(vendor),
                             "--config", str(project / "config.yaml")], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=log, text=True)
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline() if proc.stdout else ""), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    try:
        assert first and first[0].startswith("Directory page: http://127.0.0.1:"), (first, (tmp_path / "console.log").read_text())
        yield first[0].split(": ", 1)[1].strip(), project
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        log.close()


def fetch(url: str, body: dict[str, object] | None = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, res.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_command_serves_the_page_the_assets_and_the_bridge(console_command: tuple[str, Path]) -> None:
    page_url, _project = console_command
    base = page_url.split("/harness/")[0]
    status, html = fetch(page_url.split("#")[0])
    assert status == 200 and b'<script type="importmap">' in html and b"/harness/host.js" in html
    assert fetch(f"{base}/harness/host.js")[0] == 200
    assert fetch(f"{base}/vendor/react.js")[0] == 200
    assert fetch(f"{base}/ui/iii-directory/page.js")[0] == 200
    status, raw = fetch(f"{base}/bridge/trigger", {"function_id": "directory::skills::list", "payload": {}})
    answer = json.loads(raw)
    assert status == 200 and [s["id"] for s in answer["result"]["skills"]] == ["demo/hello"]


def test_the_command_has_no_test_routes_and_refuses_other_origins(console_command: tuple[str, Path]) -> None:
    page_url, _project = console_command
    base = page_url.split("/harness/")[0]
    assert fetch(f"{base}/control/files/read?path=skills/demo/hello.md")[0] == 404
    foreign = fetch(f"{base}/bridge/trigger", {"function_id": "directory::skills::list", "payload": {}},
                    {"Origin": "http://elsewhere.example"})
    assert foreign[0] == 403
    assert fetch(f"{base}/harness/", headers={"Host": "elsewhere.example"})[0] == 403


def test_usage_problems_are_one_sentence_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--vendor", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("iii-directory-console: ") and "react.js" in err and "tests/ui/setup.sh" in err
    assert usage_problem(70000, fake_vendor(tmp_path)) == "--port must be 0–65535, not 70000"
    assert usage_problem(0, tmp_path / "vendor") is None
    assert vendor_dir(None, {"III_DIRECTORY_CONSOLE_VENDOR": "/x"}) == Path("/x")
    assert vendor_dir("/y", {"III_DIRECTORY_CONSOLE_VENDOR": "/x"}) == Path("/y")


@pytest.mark.browser
@pytest.mark.parametrize("console_command", [lambda _root: VENDOR], indirect=True)
def test_the_browser_page_through_the_command(console_command: tuple[str, Path]) -> None:
    require_prerequisites()
    page_url, project = console_command
    env = dict(os.environ, III_UI_CONSOLE_URL=page_url, III_UI_PROJECT=str(project), III_UI_ARTIFACTS=str(ARTIFACTS))
    result = subprocess.run(["node", "--test", "--test-reporter=spec", str(HERE / "console_command.e2e.mjs")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=150, check=False)
    output = result.stdout.decode("utf-8", "replace")
    assert result.returncode == 0, output[-4000:]
