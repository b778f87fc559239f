"""`iii-directory-console [--port N]`: the Directory page on localhost with no engine and no
console installed (docs/console-command.md).

It starts the in-process test engine, the console stand-in, the worker exactly as
`iii-directory serve` runs (over the skills, agents and kits folders its configuration names;
by default those of the current directory) and the page server, prints the page's address and
serves until interrupted. React comes from a directory of ES modules (`--vendor`), because the
package ships no third-party code and the process fetches nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import anyio

VENDOR_ENV = "III_DIRECTORY_CONSOLE_VENDOR"
CHECKOUT_VENDOR = Path("tests") / "ui" / "harness" / ".vendor"
"""Where `bash tests/ui/setup.sh` writes the React modules in a source checkout."""
BOOT_TIMEOUT_S = 30.0
USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iii-directory-console",
        description="Serve the Directory page on 127.0.0.1 against the worker and the in-process test engine.")
    parser.add_argument("--port", type=int, default=0, help="port of the page on 127.0.0.1 (default: one the OS picks)")
    parser.add_argument("--vendor", default=None,
                        help=f"directory holding React as ES modules (default: ${VENDOR_ENV}, else ./{CHECKOUT_VENDOR})")
    parser.add_argument("--config", default=os.environ.get("III_CONFIG"), help="the worker's YAML configuration, as for serve")
    return parser


def vendor_dir(option: str | None, environ: Mapping[str, str] = os.environ) -> Path:
    """The React module directory: the option, then the environment, then the checkout's build."""
    return Path(option or environ.get(VENDOR_ENV) or CHECKOUT_VENDOR).expanduser()


def usage_problem(port: int, vendor: Path) -> str | None:
    """Why the command cannot start, in one sentence, or None."""
    from .page_server import VENDOR_MODULES, missing_vendor_modules

    if not 0 <= port <= 65535:
        return f"--port must be 0–65535, not {port}"
    missing = missing_vendor_modules(vendor)
    if missing:
        return (f"{vendor} does not hold React as ES modules (missing {', '.join(missing)}; "
                f"expected {', '.join(VENDOR_MODULES)}): run `bash tests/ui/setup.sh` in a checkout, or pass --vendor")
    return None


async def serve(port: int, vendor: Path, config_path: str | None, announce: Callable[[str], None]) -> None:
    """Run engine, stand-in, worker and page server until cancelled; `announce` gets the URL."""
    from ..ui.assets import ASSETS
    from ..worker import Worker
    from .console import ConsoleStandIn
    from .engine import TestEngine
    from .page_server import PageServer

    async with TestEngine() as engine, ConsoleStandIn(engine) as console, anyio.create_task_group() as tg:
        worker = Worker(engine.url, config_path=config_path)
        tg.start_soon(worker.run)
        with anyio.fail_after(BOOT_TIMEOUT_S):
            await worker.ready.wait()
        await engine.wait_for(lambda: len(console.assets) == len(ASSETS), timeout=BOOT_TIMEOUT_S)
        server = PageServer(console, vendor, port=port)
        await tg.start(server.run)
        announce(server.page_url)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    vendor = vendor_dir(args.vendor)
    problem = usage_problem(args.port, vendor)
    if problem:
        print(f"iii-directory-console: {problem}", file=sys.stderr)
        return USAGE_ERROR

    def announce(url: str) -> None:
        print(f"Directory page: {url}", flush=True)
        print("Serving the worker over this directory's skills, agents and kits; Ctrl+C stops it.", flush=True)

    try:
        anyio.run(serve, args.port, vendor, args.config, announce)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(f"iii-directory-console: cannot serve on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
