"""Test doubles for the search pipeline: a deterministic bag-of-words encoder, an exact vector
index, and a standalone engine that also serves scripted peers (judge, triggers)."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import _rank

try:
    import numpy as np
except ImportError:  # a BM25-only build (armv7, musl): tests using these doubles are marked dense
    np = None  # type: ignore[assignment]

from iii_directory.context import CallInfo
from iii_directory.directory import Directory
from iii_directory.port import EngineCallError, StandaloneEngine

DIM = 384


class FakeEncoder:
    """Hashes each BM25 term (plus `synonyms`) into one of 384 dimensions; L2-normalised.
    Texts sharing words get high cosines; `calls` / `texts` count the work done."""

    needs_dense_extra = True  # tests/conftest.py marks the tests using it `dense`

    def __init__(self, synonyms: Mapping[str, str] | None = None) -> None:
        self.synonyms = dict(synonyms or {})
        self.calls = 0
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in _rank.tokenize(text):
                term = self.synonyms.get(term, term)
                slot = int(hashlib.md5(term.encode()).hexdigest(), 16) % DIM
                out[row, slot] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out


class ExactIndex:
    """Brute-force inner product over normalised vectors: `search(queries, k) -> (ids, scores)`."""

    needs_dense_extra = True

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = np.asarray(vectors, dtype=np.float32)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        scores = np.asarray(queries, dtype=np.float32) @ self.vectors.T
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return order, np.take_along_axis(scores, order, axis=1)

    def cosines(self, query: np.ndarray, ids: Sequence[int]) -> np.ndarray:
        return self.vectors[list(ids)] @ np.asarray(query, dtype=np.float32)


Peer = Callable[[Any], Awaitable[Any]]


class PeerEngine(StandaloneEngine):
    """StandaloneEngine plus scripted peer functions (listed in the catalog too)."""

    def __init__(self, catalog: Iterable[Mapping[str, Any]] = ()) -> None:
        super().__init__(catalog)
        self.peers: dict[str, Peer] = {}
        self.calls: list[tuple[str, Any]] = []

    def add_peer(self, function_id: str, handler: Peer, *, listed: bool = True) -> None:
        self.peers[function_id] = handler
        if listed:
            self.add_functions([{"function_id": function_id, "description": f"Peer {function_id}."}])

    def remove_peer(self, function_id: str) -> None:
        self.peers.pop(function_id, None)
        self.functions.pop(function_id, None)

    async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
        self.calls.append((function_id, data))
        handler = self.peers.get(function_id)
        if handler is not None:
            return await handler(data)
        return await super().call(function_id, data, **kwargs)


def raise_error(code: str, message: str = "scripted failure") -> Peer:
    async def handler(_data: Any) -> Any:
        raise EngineCallError(code, message)
    return handler


SEARCH = "directory::search_functions"


def record(function_id: str, description: str, *params: str, **extra: Any) -> dict[str, Any]:
    return {"function_id": function_id, "description": description,
            "request_schema": {"type": "object", "properties": {p: {"type": "string"} for p in params}},
            **extra}


CATALOG = [
    record("mail::send", "Send an email message to recipients. Supports attachments.", "to", "subject", "body"),
    record("mail::inbox", "List email messages in the inbox.", "folder"),
    record("mail::bounce-hook", "Process email delivery bounces.", "payload", metadata={"internal": True}),
    record("sms::send", "Send an SMS text message to a phone number.", "to", "text"),
    record("calendar::event::create", "Create a calendar event with attendees.", "title", "start"),
    record("calendar::event::delete", "Delete a calendar event.", "event_id"),
    record("weather::forecast", "Get the weather forecast for a city.", "city", "days"),
    record("kv::set", "Store a value under a key.", "key", "value"),
    record("kv::get", "Read the value stored under a key.", "key"),
    record("engine::functions::list", "List every registered function.", "prefix"),
    record("engine::traces::list", "List recent engine traces.", "limit"),
    record("directory::search_functions", "Search functions.", "capabilities"),
    record("compose::add", "Install workers into the compose project.", "workers", "operation_id"),
    record("plainid", "A function without a namespace that sends email messages.", "x"),
]


def ids(response: dict[str, Any]) -> list[str]:
    return [f["function_id"] for w in response["workers"] for f in w["functions"]]


async def search(directory: Directory, *capabilities: str, session: str | None = None) -> dict[str, Any]:
    info = CallInfo(baggage=f"iii.session.id={session}") if session else None
    return await directory.invoke(SEARCH, {"capabilities": list(capabilities)}, info)


def hold_skills_fetch(monkeypatch: Any) -> Any:
    """Make every search wait inside its skills fetch (so inside its search slot) until the
    returned `anyio.Event` is set."""
    import anyio

    from iii_directory.search import service as service_module

    gate = anyio.Event()
    real = service_module.fetch_skills

    async def held(call: Any) -> Any:
        await gate.wait()
        return await real(call)

    monkeypatch.setattr(service_module, "fetch_skills", held)
    return gate
