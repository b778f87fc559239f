"""`iii-directory` command line: serve, call, schema, --manifest.

* `serve [--url URL] [--config PATH]` — connect to the engine and serve (URL: `--url`, else
  `III_URL`, else `ws://127.0.0.1:49134`).
* `call FUNCTION_ID [PAYLOAD_JSON | -] [--config PATH] [--catalog PATH]` — run one function
  in-process through the standalone engine adapter; the JSON result goes to stdout (exit 0), an
  error as JSON `{"code", "message"}` to stderr (exit 1).
* `schema [FUNCTION_ID]` — the published schemas as JSON.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import DESCRIPTION, WORKER_NAME, __version__
from .encoder.native_threads import limit_blas_threads
from .errors import DirectoryError

if TYPE_CHECKING:
    from .config import Settings
    from .plain_settings import PlainSettings

# The configuration (pydantic), the event loop (anyio), the protocol (websockets) and the
# surfaces are imported by the command that uses them; a `call` of a file-backed read function
# needs none of them (`quick_call.py`); `serve` starts its encoder preload once it has
# registered (`worker.py`).

SUPPORTED_TARGETS = (
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "armv7-unknown-linux-gnueabihf",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "aarch64-pc-windows-msvc",
)

log = logging.getLogger("iii_directory")


def example_catalog_path() -> Path:
    """The example catalog shipped in the package (the default for `call --catalog`)."""
    from importlib import resources

    return Path(str(resources.files("iii_directory") / "data" / "example_catalog.json"))


def call_seed(config_path: str | None) -> dict[str, Any]:
    """The `--config` file's values, with `registry_search` off unless it says otherwise: `call`
    runs offline, so the installable-workers lane of search asks the registry only when the
    configuration turns it on explicitly."""
    from .config_base import read_seed

    seed = dict(read_seed(config_path) or {})
    seed.setdefault("registry_search", False)
    return seed


def standalone_settings(config_path: str | None) -> Settings:
    """Defaults + the `--config` file (`call_seed`), as the settings model."""
    from .config import load_settings

    return load_settings(call_seed(config_path))


def quick_settings(config_path: str | None) -> PlainSettings | Settings:
    """`standalone_settings` as a plain object when the file's values are exact
    (`plain_settings`), else as the model (which coerces or words the error)."""
    from .plain_settings import plain_settings

    seed = call_seed(config_path)
    plain = plain_settings(seed)
    if plain is not None:
        return plain
    from .config import load_settings

    return load_settings(seed)


_CATALOG_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "description": (str,), "worker_name": (str,), "namespace": (str,),
    "request_schema": (dict, bool), "parameters": (dict, bool), "response_schema": (dict, bool),
    "metadata": (dict,), "registered_triggers": (list,),
}
"""Optional catalog-record fields and the JSON types each may hold (null is always allowed)."""

_JSON_TYPE_NAMES = {str: "a string", dict: "an object", bool: "a boolean", list: "an array"}


def catalog_record_problem(record: Any) -> str | None:
    """Why one `--catalog` record cannot stand in for an engine function record, or None."""
    if not isinstance(record, dict):
        return "is not a JSON object"
    function_id = record.get("function_id") or record.get("name")
    if not isinstance(function_id, str) or not function_id.strip():
        return "needs a non-empty string function_id (or name)"
    for field, types in _CATALOG_FIELD_TYPES.items():
        value = record.get(field)
        if value is not None and not isinstance(value, types):
            expected = " or ".join(_JSON_TYPE_NAMES[t] for t in types)
            return f"field {field} must be {expected}"
    return None


def load_catalog(path: str | None) -> list[dict[str, Any]]:
    """The `--catalog` records (default: the shipped example); any problem is a bare
    DirectoryError naming the file and the first bad record."""
    target = Path(path) if path else example_catalog_path()
    if not target.exists():
        if path:
            raise DirectoryError.plain(f"catalog file not found: {path}")
        return []
    try:
        records = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DirectoryError.plain(f"catalog file {target} unreadable: {exc}") from None
    except RecursionError:
        raise DirectoryError.plain(
            f"catalog file {target} unreadable: it nests deeper than the JSON decoder allows"
        ) from None
    if not isinstance(records, list):
        raise DirectoryError.plain(f"catalog file {target} must hold a JSON array of function records")
    for index, record in enumerate(records):
        problem = catalog_record_problem(record)
        if problem:
            raise DirectoryError.plain(f"catalog file {target}: record {index} {problem}")
    return records


def _read_payload(raw: str | None) -> Any:
    if raw is None:
        return {}
    if raw == "-":
        raw = sys.stdin.read()
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise DirectoryError.plain(f"payload is not valid JSON: {exc}") from None
    except RecursionError:
        from .protocol.nesting import too_deep_message

        raise DirectoryError.plain(too_deep_message()) from None


async def run_call(function_id: str, payload: Any, config: str | None, catalog: str | None) -> Any:
    from .directory import Directory
    from .functions import deferred_table
    from .standalone import standalone_engine

    settings = standalone_settings(config)
    engine = standalone_engine(load_catalog(catalog))
    directory = Directory(settings=settings, engine=engine, table=deferred_table())
    engine.add_own_functions(directory.table)
    return await directory.invoke(function_id, payload)


def call_function(function_id: str, payload: Any, config: str | None, catalog: str | None) -> Any:
    """The answer of one function: a file-backed read function on the short path
    (`quick_call.py`: no models, no event loop), any other through the standalone directory
    (`run_call`). Both check the configuration, then the catalog, then the request."""
    from . import quick_call

    if quick_call.available(function_id):
        settings = quick_settings(config)
        return quick_call.answer(function_id, payload, settings, load_catalog(catalog))
    import anyio

    return anyio.run(run_call, function_id, payload, config, catalog)


_FREEZE_AT_EXIT = False
"""Whether this process has registered `skip_final_collections`' exit hook."""


def skip_final_collections() -> None:
    """At the process's exit, before the interpreter's last collections, move every object
    still alive to the permanent generation (`gc.freeze`, run by `atexit`), so those collections
    do not walk the whole heap the imports built: 24 M of the 418 M instructions of `call
    directory::skills::list` (docs/startup.md, "One source for the plain settings"). Objects
    still go away by reference counting as the modules are cleared; only cyclic garbage is left
    to the operating system, as with any exit. Registered once however often a process calls."""
    global _FREEZE_AT_EXIT
    if _FREEZE_AT_EXIT:
        return
    import atexit
    import gc

    atexit.register(gc.freeze)
    _FREEZE_AT_EXIT = True


def cmd_call(args: argparse.Namespace) -> int:
    from .config_base import InvalidSettings, SeedUnreadable
    from .protocol.frames import scrub_surrogates

    skip_final_collections()

    try:
        payload = _read_payload(args.payload)
        result = call_function(args.function_id, payload, args.config, args.catalog)
    except DirectoryError as exc:
        print(scrub_surrogates(json.dumps(exc.to_wire(), ensure_ascii=False)), file=sys.stderr)
        return 1
    except InvalidSettings as exc:
        print(json.dumps({"code": "invocation_failed", "message": str(exc)}, ensure_ascii=False), file=sys.stderr)
        return 1
    except SeedUnreadable as exc:
        print(json.dumps({"code": "invocation_failed", "message": str(exc)}, ensure_ascii=False), file=sys.stderr)
        return 1
    except RecursionError:
        print(json.dumps({"code": "invocation_failed", "message": "payload nests too deeply to process"}),
              file=sys.stderr)
        return 1
    print(scrub_surrogates(json.dumps(result, ensure_ascii=False, indent=2)))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from .functions import build_table, deferred_table
    from .published import registration

    if args.function_id:
        spec = deferred_table().functions.get(args.function_id)
        if spec is None:
            print(json.dumps({"code": "function_not_found",
                              "message": f"Function '{args.function_id}' not found"}), file=sys.stderr)
            return 1
        print(json.dumps(registration(spec), indent=2))
        return 0
    table = build_table()
    doc = {
        "functions": [registration(spec) for spec in table.functions.values()],
        "trigger_types": [t.registration() for t in table.trigger_types],
    }
    print(json.dumps(doc, indent=2))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """`serve`: the cyclic garbage collector is off from here until the worker settles its heap
    (`worker.settle_heap`, after the first search answer, or `worker.START_UP_GC_OFF_S`): start-up
    imports and builds allocate millions of objects and few cycles, and its ~140 collections
    cost ~30 ms of CPU that the registration and a warm restart's first answer waited for."""
    gc.disable()
    from .worker import serve_main

    return serve_main(url=args.url, config=args.config)


def manifest() -> dict[str, Any]:
    from .config import Settings

    return {
        "name": WORKER_NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "default_config": Settings().model_dump(mode="json"),
        "supported_targets": list(SUPPORTED_TARGETS),
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="iii-directory", description=DESCRIPTION)
    parser.add_argument("--manifest", action="store_true", help="print the worker manifest as JSON and exit")
    parser.add_argument("--version", action="version", version=f"iii-directory {__version__}")
    sub = parser.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="connect to the engine and serve the directory functions")
    serve.add_argument("--url", default=None, help="engine WebSocket URL (default: $III_URL or ws://127.0.0.1:49134)")
    serve.add_argument("--config", default=os.environ.get("III_CONFIG"), help="YAML configuration seed")
    serve.set_defaults(func=cmd_serve)

    call = sub.add_parser("call", help="run one function in-process, with no engine")
    call.add_argument("function_id")
    call.add_argument("payload", nargs="?", default=None, help="JSON payload, or - for stdin")
    call.add_argument("--config", default=os.environ.get("III_CONFIG"), help="YAML configuration")
    call.add_argument("--catalog", default=None,
                      help="JSON array of function records standing in for the engine catalog "
                           "(default: the shipped example catalog)")
    call.set_defaults(func=cmd_call)

    schema = sub.add_parser("schema", help="print the published schemas")
    schema.add_argument("function_id", nargs="?")
    schema.set_defaults(func=cmd_schema)
    return parser


QUIET_LIBRARIES = ("httpx", "httpcore", "watchfiles")
"""Libraries that log every request or file event at INFO: one line per registry GET and per
skills-folder change. They log at WARNING and above unless `LOG_LEVEL` is `debug`."""


def configure_logging(environ: Mapping[str, str] | None = None) -> None:
    """Root logging at `$LOG_LEVEL` (default `info`) on stderr; the `QUIET_LIBRARIES` at
    WARNING or the root level, whichever is higher, below `debug`."""
    level_name = (os.environ if environ is None else environ).get("LOG_LEVEL", "info").upper()
    logging.basicConfig(
        level=level_name,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(level if level <= logging.DEBUG else max(level, logging.WARNING))


def main(argv: list[str] | None = None) -> int:
    limit_blas_threads()  # before anything imports numpy (encoder/native_threads.py)
    configure_logging()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.manifest:
        print(json.dumps(manifest(), indent=2))
        return 0
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        code = int(args.func(args))
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # the reader of stdout went away (`… | head`): quiet exit, as other filters do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
