"""The canonical corpus of the live catalog (docs/rules/search.md §3.3–§3.5) and its lexical index.

A `Tool` is one searchable function: its id, slim description and slimmed parameters. The
corpus is the sorted tuple of tools, fingerprinted by the SHA-256 of its compact JSON. A
`DocumentSet` is any rankable collection of documents (the corpus, a registry pool, the installed
skills, the registered triggers) with its BM25 index built once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import _rank

from ...exclusions import is_excluded
from . import word_lists
from .text import bm25_document, searchable_text, slim_description
from .text_memo import text_memo
from .views import ViewVectors
from .vocabulary import normal_terms

BM25_K1 = 1.2  # spec: docs/rules/search.md §5.1
BM25_B = 0.75  # spec: docs/rules/search.md §5.1


def namespace_of(function_id: str) -> str | None:
    """The text before the first `::`; None for ids without a namespace."""
    head, sep, _ = function_id.partition("::")
    return head if sep and head else None


def sort_keys(value: Any) -> Any:
    """`value` with every object's keys sorted, recursively."""
    if isinstance(value, Mapping):
        return {key: sort_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sort_keys(item) for item in value]
    return value


def slim_parameters(parameters: Any) -> dict[str, Any]:
    """`{"type": "object", "properties": {<key>: {} …}, "required": <array, if an array>}`."""
    schema = parameters if isinstance(parameters, Mapping) else {}
    properties = schema.get("properties")
    keys = list(properties) if isinstance(properties, Mapping) else []
    slim: dict[str, Any] = {"type": "object", "properties": {str(key): {} for key in keys}}
    required = schema.get("required")
    if isinstance(required, list):
        slim["required"] = required
    return sort_keys(slim)


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Tool:
    """One canonical function: `name`, slim `description`, slim `parameters`."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    @property
    def parameter_names(self) -> list[str]:
        properties = self.parameters.get("properties")
        return sorted(properties) if isinstance(properties, Mapping) else []

    @property
    def searchable(self) -> str:
        """The dense document and reranker passage (§3.4)."""
        return searchable_text(self.name, self.description, self.parameter_names)

    @property
    def dense_text(self) -> str:
        """The document the dense lane embeds: `"{name} {slim description}"` (chosen for this
        project). Argument names stay in the BM25 document only: to a sentence encoder they are
        noise
        (docs/record/search-quality.md, "Figures from the search/ docstrings")."""
        return f"{self.name} {self.description}"

    @property
    def bm25(self) -> str:
        return bm25_document(self.name, self.searchable)

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def tool_from_schema(name: str, description: Any, parameters: Any) -> Tool:
    """A ToolSchema `{name, description, parameters}` made canonical."""
    text = description if isinstance(description, str) else ""
    return Tool(name=name, description=slim_description(text), parameters=slim_parameters(parameters))


def canonical_corpus(tools: Iterable[Tool]) -> tuple[Tool, ...]:
    """Excluded tools removed; sorted by name, ties by the full serialised JSON."""
    kept = [tool for tool in tools if not is_excluded(tool.name)]
    kept.sort(key=lambda tool: (tool.name, compact_json(tool.record())))
    return tuple(kept)


def fingerprint(tools: Sequence[Tool]) -> str:
    """SHA-256 hex of the compact JSON of the corpus (fields `name, description, parameters`)."""
    payload = compact_json([tool.record() for tool in tools])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Document:
    """A rankable document: `id`, the `searchable` text (dense lane, judge, reranker) and the
    `lexical` text (BM25)."""

    id: str
    searchable: str
    lexical: str


def index_terms(terms: Iterable[str]) -> list[str]:
    """The terms BM25 indexes and scores: the §4 terms minus single letters, each made its
    normal term (stem or concept, `vocabulary.normal_term`) — both chosen for this project. A
    lone letter is what possessives and contractions leave behind (`user's` → `s`, `don't` →
    `t`, `3D` → `d`); it carries no meaning but counted toward the two-term minimum and, on the
    dev split, made a no-match request (`renew my driver's license`) look like a two-term match
    for every document containing some `'s`. Digits stay."""
    return normal_terms(t for t in terms if len(t) > 1 or t.isdigit())


FILLER_TERMS = frozenset(normal_terms(word_lists.words("filler")))
"""Words of a request that say how or when, not what (chosen for this project;
data/words/filler.json)."""


@text_memo(share=0.08, hot=True)
def _query_terms(terms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(query_terms(terms))


def query_terms(terms: Iterable[str]) -> list[str]:
    """The `index_terms` a request is matched with, less pure numbers and `FILLER_TERMS` (both
    chosen for this project). A number in a request is a value (`order 7781`, `Python 3`, `21
    degrees`), not vocabulary, yet it counted toward the two-term minimum: on the dev split `3D
    print the bracket` matched `Execute a Python 3 snippet … printed output`. Filler words made
    two-term matches of their own (`start a live video call right now` → `cron::trigger`, "Run a
    scheduled job right now"). Documents keep both."""
    return [t for t in index_terms(terms) if not t.isdigit() and t not in FILLER_TERMS]


@functools.lru_cache(maxsize=16384)
def document_terms(lexical: str) -> tuple[str, ...]:
    """`index_terms(tokenize(lexical))`: the terms BM25 indexes for one document text. A pure
    function of the text, so remembered (the side lanes re-index the same skill and trigger
    documents whenever one of them changes; tokenizing them again was most of that cost)."""
    return tuple(index_terms(_rank.tokenize(lexical)))


@dataclass
class DocumentSet:
    """Documents in a fixed order with their BM25 index, built once."""

    documents: tuple[Document, ...]
    index: _rank.BM25Index = field(init=False)
    positions: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.index = _rank.BM25Index(
            [list(document_terms(d.lexical)) for d in self.documents], BM25_K1, BM25_B)
        self.positions = {}
        for position, document in enumerate(self.documents):
            self.positions.setdefault(document.id, position)

    def __len__(self) -> int:
        return len(self.documents)

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.documents]

    @functools.cached_property
    def term_sets(self) -> tuple[frozenset[str], ...]:
        """Each document's indexed terms as a set (`document_terms`), in document order: made
        once per set for the answerability evidence, which reads them for every hit."""
        return tuple(frozenset(document_terms(d.lexical)) for d in self.documents)

    def bm25(self, terms: Sequence[str], min_matched: int = 2,
             k: int | None = None) -> list[tuple[str, float, int]]:
        """Raw BM25 `(id, score, matched distinct terms)` of the query's `index_terms`: score > 0,
        at least `min_matched` distinct query terms, by score descending, ties in document
        order; the first `k` (all when None)."""
        normal = _query_terms(tuple(terms))
        if not normal or not self.documents:
            return []
        hits = self.index.search(list(normal), k, min_matched)
        return [(self.documents[i].id, score, matched) for i, score, matched in hits if score > 0.0]


SHARED_SETS = 16  # chosen: bounds memory; more than the document sets in use at once
"""Document sets a `DocumentSetCache` keeps (least recently used dropped first)."""


class DocumentSetCache:
    """The `DocumentSet` of exactly these documents, built once while it stays among the last
    `SHARED_SETS` (16) asked for; one per `Directory` (`directory.service(DocumentSetCache)`).

    The side lanes rebuild their documents on every call (skills from disk, triggers from the
    engine) though they rarely change between calls, and the BM25 index build was the largest
    CPU cost of a search call's skills lane. Equal document tuples share one set, which nothing
    mutates after it is built."""

    def __init__(self, directory: object | None = None, capacity: int = SHARED_SETS) -> None:
        self._sets: OrderedDict[tuple[Document, ...], DocumentSet] = OrderedDict()
        self._by_identity: OrderedDict[tuple[int, ...], tuple[tuple[object, ...], DocumentSet]] = \
            OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def of_entries(self, entries: Sequence[Any], document: Callable[[Any], Document]) -> DocumentSet:
        """`get(tuple(document(e) for e in entries))`, found first by the identity of the entries
        themselves: the skills lane hands over the very same (interned) entry objects while
        nothing changed, and hashing 135 entries and their documents field by field was most of
        what finding their set cost. The entries are kept with the set, so an id seen here
        cannot belong to another object meanwhile."""
        key = tuple(map(id, entries))
        with self._lock:
            found = self._by_identity.get(key)
            if found is not None:
                self._by_identity.move_to_end(key)
                return found[1]
        built = self.get(tuple(document(entry) for entry in entries))
        with self._lock:
            self._by_identity[key] = (tuple(entries), built)
            self._by_identity.move_to_end(key)
            while len(self._by_identity) > self._capacity:
                self._by_identity.popitem(last=False)
        return built

    def __len__(self) -> int:
        return len(self._sets)

    def get(self, documents: tuple[Document, ...]) -> DocumentSet:
        with self._lock:
            found = self._sets.get(documents)
            if found is not None:
                self._sets.move_to_end(documents)
                return found
        built = DocumentSet(documents)
        with self._lock:
            self._sets[documents] = built
            self._sets.move_to_end(documents)
            while len(self._sets) > self._capacity:
                self._sets.popitem(last=False)
        return built


def tool_documents(tools: Iterable[Tool]) -> tuple[Document, ...]:
    return tuple(Document(tool.name, tool.dense_text, tool.bm25) for tool in tools)


@dataclass
class Corpus:
    """An activated catalog: the canonical tools, their fingerprint and lexical index, and the
    raw id set the engine listed (excluded ids included; the judge is detected there)."""

    tools: tuple[Tool, ...]
    raw_ids: frozenset[str] = frozenset()
    fingerprint: str = field(init=False)
    documents: DocumentSet = field(init=False)
    by_id: dict[str, Tool] = field(init=False)
    descriptions: dict[str, str] = field(init=False)
    namespaces: frozenset[str] = field(init=False)
    raw_namespaces: frozenset[str] = field(init=False)
    views: ViewVectors = field(init=False, repr=False, compare=False)
    """The extra dense views of its functions (`views.py`), filled once embedded."""

    def __post_init__(self) -> None:
        self.fingerprint = fingerprint(self.tools)
        self.documents = DocumentSet(tool_documents(self.tools))
        self.by_id = {tool.name: tool for tool in self.tools}
        self.descriptions = {tool.name: tool.description for tool in self.tools}
        self.namespaces = frozenset(ns for ns in (namespace_of(t.name) for t in self.tools) if ns)
        self.views = ViewVectors(self.tools)
        self.relist(self.raw_ids)

    def relist(self, raw_ids: Iterable[str]) -> None:
        """Replace the raw id set (the engine's listing, excluded ids included) and its
        namespaces; the tools, and so the fingerprint, are unchanged."""
        self.raw_ids = frozenset(raw_ids)
        self.raw_namespaces = frozenset(ns for ns in (namespace_of(i) for i in self.raw_ids) if ns)

    @classmethod
    def build(cls, tools: Iterable[Tool], raw_ids: Iterable[str] = ()) -> Corpus:
        return cls(canonical_corpus(tools), frozenset(raw_ids))

    @classmethod
    def empty(cls) -> Corpus:
        return cls(())

    def __len__(self) -> int:
        return len(self.tools)

    def index_inputs(self) -> tuple[list[str], list[str]]:
        """Ids and dense documents, in corpus order, for the dense index."""
        return [tool.name for tool in self.tools], [tool.dense_text for tool in self.tools]
