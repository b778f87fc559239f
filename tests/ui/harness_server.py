"""The click-through harness server (console-ui.md §5.5–§5.6): the package's page server
(`iii_directory.testing.page_server`, the same one `iii-directory-console` runs) with the vendor
modules that `tests/ui/setup.sh` builds and the test control routes (files of the fixture
project, call fixtures, the fakes' switches).
"""

from __future__ import annotations

from pathlib import Path

from iii_directory.testing.console import ConsoleStandIn
from iii_directory.testing.page_server import Control, PageServer

HERE = Path(__file__).resolve().parent
VENDOR = HERE / "harness" / ".vendor"
"""React as ES modules, written by `node tests/ui/harness/build-vendor.mjs`."""


class HarnessServer(PageServer):
    def __init__(self, console: ConsoleStandIn, project: Path, controls: dict[str, Control],
                 vendor: Path = VENDOR) -> None:
        super().__init__(console, vendor, project=project, controls=controls)
