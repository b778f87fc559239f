"""The installable section: matching workers of the registry that are NOT installed (docs/rules/search.md §8).

Per batch, concurrently with the installed search; any failure yields an empty section.
1. list queries (≤ 6): the batch queries, then their BM25 terms round-robin;
2. `GET /w?search=<q>` for each, concurrently (cached by the registry client);
3. candidates in registry order, installed namespaces dropped; round-robin, budget 6;
4. each candidate's full record, concurrently;
5. the pool of contracts (internal, already-installed and excluded ids dropped; first owner wins);
6. ranked per query (judge, else BM25 ⊕ ad-hoc dense), round-robin, budget 6 functions;
7. grouped under at most 2 owners with the `compose::add` install payload.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from ..exclusions import is_excluded
from ..sources.registry import RegistryClient
from ..sources.registry_records import api_entries
from .call import SearchCall
from .ranking.corpus import DocumentSet, tool_documents, tool_from_schema
from .judge import Candidate, function_candidate
from .ranking.query import Query
from .ranking.select import round_robin
from .ranking.text import slim_description

log = logging.getLogger(__name__)

MAX_LIST_QUERIES = 6  # spec: docs/rules/search.md §8
CANDIDATE_BUDGET = 6  # spec: docs/rules/search.md §8
FUNCTION_BUDGET = 6  # spec: docs/rules/search.md §8
MAX_INSTALLABLES = 2  # spec: docs/rules/search.md §8
INSTALL_FUNCTION = "compose::add"


def list_queries(queries: Sequence[Query]) -> list[str]:
    """Every query first, in order; then, round-robin over the queries' terms (in term order),
    each term not yet present, until 6. `["send an email message"]` → `["send an email message",
    "send", "email", "message"]`."""
    result: list[str] = []
    for query in queries:
        if query.text not in result:
            result.append(query.text)
    terms = [list(dict.fromkeys(q.terms)) for q in queries]
    for term in round_robin(terms, sum(len(t) for t in terms)):
        if len(result) >= MAX_LIST_QUERIES:
            break
        if term not in result:
            result.append(term)
    return result[:MAX_LIST_QUERIES]


@dataclass(frozen=True)
class Listed:
    name: str
    version: str
    description: str


@dataclass(frozen=True)
class Contract:
    function_id: str
    owner: str
    description: str
    parameters: Any


def listed_workers(page: Any) -> list[Listed]:
    workers = page.get("workers") if isinstance(page, Mapping) else None
    rows = []
    for worker in workers if isinstance(workers, list) else []:
        if isinstance(worker, Mapping) and isinstance(worker.get("name"), str) and worker["name"]:
            rows.append(Listed(worker["name"], worker.get("version") or "",
                               worker.get("description") or ""))
    return rows


def pool_contracts(owner: str, record: Mapping[str, Any], installed_ids: frozenset[str],
                   pool: dict[str, Contract]) -> None:
    """Add one worker's public contracts to `pool` (first owner wins)."""
    detail = record.get("detail") if isinstance(record.get("detail"), Mapping) else {}
    body = record.get("body") if isinstance(record.get("body"), Mapping) else {}
    for entry in api_entries(detail, body, "functions"):
        if not isinstance(entry, Mapping):
            continue
        function_id = next((entry[k] for k in ("name", "function_id", "id")
                            if isinstance(entry.get(k), str) and entry[k]), None)
        if function_id is None or function_id in pool or function_id in installed_ids:
            continue
        if is_excluded(function_id, entry.get("metadata")):
            continue
        description = entry.get("description") if isinstance(entry.get("description"), str) else ""
        schema = entry.get("request_schema") or {"type": "object"}
        pool[function_id] = Contract(function_id, owner, description, schema)


async def search_registry(call: SearchCall, queries: Sequence[Query]) -> list[dict[str, Any]]:
    """The installable entries of one batch; `[]` on any failure."""
    if not queries or not call.settings.registry_search:
        return []
    try:
        return await _search(call, queries)
    except Exception as exc:  # noqa: BLE001 - registry trouble never fails a search
        log.info("registry search failed: %s", exc)
        return []


async def _search(call: SearchCall, queries: Sequence[Query]) -> list[dict[str, Any]]:
    client = call.ctx.directory.service(RegistryClient)
    settings = call.settings
    variants = list_queries(queries)
    pages: list[list[Listed] | None] = [None] * len(variants)

    async def fetch_list(position: int, text: str) -> None:
        try:
            pages[position] = listed_workers(await client.list_workers(settings, search=text))
        except Exception as exc:  # noqa: BLE001 - a failed variant is skipped
            log.debug("registry list %r failed: %s", text, exc)

    missing: list[tuple[int, str]] = []
    for position, text in enumerate(variants):
        cached = client.cached_list(settings, search=text)
        if cached is not None:
            pages[position] = listed_workers(cached)
        else:
            missing.append((position, text))
    if missing:  # only variants the cache lacks cost a task (and a request)
        async with anyio.create_task_group() as group:
            for position, text in missing:
                group.start_soon(fetch_list, position, text)

    installed = call.corpus.raw_namespaces
    lists = [[w for w in page if w.name not in installed] for page in pages if page]
    candidates = round_robin(lists, CANDIDATE_BUDGET, key=lambda w: w.name)
    if not candidates:
        return []

    records: list[Mapping[str, Any] | None] = [None] * len(candidates)

    async def fetch_record(position: int, name: str) -> None:
        try:
            records[position] = await client.worker_record(settings, name)
        except Exception as exc:  # noqa: BLE001 - a failed card is skipped
            log.debug("registry card %s failed: %s", name, exc)

    absent: list[tuple[int, str]] = []
    for position, worker in enumerate(candidates):
        record = client.cached_record(settings, worker.name)
        if record is not None:
            records[position] = record
        else:
            absent.append((position, worker.name))
    if absent:
        async with anyio.create_task_group() as group:
            for position, name in absent:
                group.start_soon(fetch_record, position, name)

    pool: dict[str, Contract] = {}
    workers: dict[str, Listed] = {}
    for worker, record in zip(candidates, records):
        if record is None:
            continue
        workers[worker.name] = _with_version(worker, record)
        pool_contracts(worker.name, record, call.corpus.raw_ids, pool)
    if not pool:
        return []
    ranked = await rank_pool(call, pool, queries)
    return assemble(ranked, pool, workers)


def _with_version(worker: Listed, record: Mapping[str, Any]) -> Listed:
    if worker.version:
        return worker
    detail = record.get("detail") if isinstance(record.get("detail"), Mapping) else {}
    version = detail.get("version") or detail.get("latest_version")
    return Listed(worker.name, version if isinstance(version, str) else "", worker.description)


async def rank_pool(call: SearchCall, pool: Mapping[str, Contract],
                    queries: Sequence[Query]) -> list[str]:
    """Contract ids ranked per query (judge when active, else local), round-robin, budget 6."""
    tools = [tool_from_schema(c.function_id, c.description, c.parameters) for c in pool.values()]
    tools.sort(key=lambda tool: tool.name)
    documents = DocumentSet(tool_documents(tools))
    candidates: dict[str, Candidate] = {
        tool.name: function_candidate(tool.name, tool.description, tool.parameter_names)
        for tool in tools
    }
    lanes = await call.judged("functions", documents, queries, candidates, 16, side=False)
    if lanes is None:
        lanes, _ = await call.local_rank(documents, queries)
    return round_robin([[doc_id for doc_id, _ in lane] for lane in lanes], FUNCTION_BUDGET)


def assemble(ranked: Sequence[str], pool: Mapping[str, Contract],
             workers: Mapping[str, Listed]) -> list[dict[str, Any]]:
    """Group ranked contracts under their owners; a new entry only while fewer than 2 exist."""
    entries: dict[str, dict[str, Any]] = {}
    for function_id in ranked:
        contract = pool[function_id]
        entry = entries.get(contract.owner)
        if entry is None:
            if len(entries) >= MAX_INSTALLABLES:
                continue
            worker = workers[contract.owner]
            entry = {
                "name": worker.name,
                "version": worker.version,
                "description": slim_description(worker.description),
                "functions": [],
                "install": {"function": INSTALL_FUNCTION, "payload": {"worker": worker.name}},
            }
            entries[contract.owner] = entry
        entry["functions"].append({"function_id": function_id,
                                   "description": slim_description(contract.description)})
    return list(entries.values())


def merge_installables(batches: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Across batches: a worker seen earlier keeps its entry and gains new function ids; new
    workers are appended."""
    merged: dict[str, dict[str, Any]] = {}
    for batch in batches:
        for entry in batch:
            current = merged.get(entry["name"])
            if current is None:
                merged[entry["name"]] = {**entry, "functions": list(entry["functions"])}
                continue
            known = {f["function_id"] for f in current["functions"]}
            current["functions"].extend(f for f in entry["functions"] if f["function_id"] not in known)
    return list(merged.values())
