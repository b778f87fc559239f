"""The standalone engine adapter used by `iii-directory call` and the bench: the catalog file
plus this worker's own functions stand in for the engine catalog."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .port import StandaloneEngine
from .published import own_records
from .table import FunctionTable


class CatalogEngine(StandaloneEngine):
    def add_own_functions(self, table: FunctionTable) -> None:
        """Add the table's functions from their published frames (`published.own_records`:
        a deferred table imports no surface for it)."""
        own = []
        for record in own_records(table.functions):
            own.append({
                "function_id": record["id"],
                "worker_name": "iii-directory",
                "description": record.get("description"),
                "request_schema": record.get("request_format"),
                "response_schema": record.get("response_format"),
                "metadata": record.get("metadata"),
            })
        self.add_functions(own)


def standalone_engine(catalog: Iterable[Mapping[str, Any]]) -> CatalogEngine:
    return CatalogEngine(catalog)
