"""`Directory`: the worker's `Runtime` with its full function table (every `functions.*`
surface) by default, and the two entry points the CLI, the worker and the tests use:
`context()` and `invoke()`.

It sits above the surfaces it assembles; the layers below type their state against `Runtime`.
"""

from __future__ import annotations

from typing import Any

from .config import Settings
from .context import CallInfo, Context
from .functions import build_table
from .invocation import invoke, new_context
from .port import EnginePort
from .runtime import Runtime
from .table import FunctionTable


class Directory(Runtime):
    def __init__(
        self,
        settings: Settings | None = None,
        engine: EnginePort | None = None,
        table: FunctionTable | None = None,
    ) -> None:
        super().__init__(settings, engine, table if table is not None else build_table())

    def context(self, info: CallInfo | None = None) -> Context:
        return new_context(self, info)

    async def invoke(self, function_id: str, data: Any, info: CallInfo | None = None) -> Any:
        """Run one function of the table; raise DirectoryError (coded) on any failure."""
        return await invoke(self, function_id, data, info)
