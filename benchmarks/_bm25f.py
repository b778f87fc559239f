"""BM25F over the catalog's functions, for `fit_fusion.py --bm25f` (the shipped search does not use it; see docs/record/search-quality.md, "The first result:
what was tried").

The shipped lexical document of a function is one text, `Tool.bm25`: the id three times, the slim
description, the argument names, scored by Okapi BM25 with one length normalisation. `use(fields)`
makes every catalog built afterwards in this process (`Corpus`, through `corpus.tool_documents`)
score three fields instead — the id, the slim description (with `browser::fetch`'s boost words,
as `Tool.bm25` has them) and the argument names — by `_rank.BM25FIndex` with one `(weight, b)`
per field, with the same term pipeline (`corpus.index_terms`) and the same k1. Side lanes
(skills, triggers, registry contracts) keep their BM25 documents. `use(None)` restores BM25.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import _rank
from iii_directory.search.ranking import corpus as corpus_module
from iii_directory.search.ranking.corpus import Document, DocumentSet, Tool, index_terms
from iii_directory.search.ranking.text import BROWSER_FETCH_BOOST

Fields = tuple[tuple[float, float], ...] | None

_ORIGINAL_DOCUMENTS = corpus_module.tool_documents
_ORIGINAL_POST_INIT = DocumentSet.__post_init__
_FIELDS: Fields = None


@dataclass(frozen=True)
class FieldedDocument(Document):
    """A catalog document with its lexical fields (id, description, argument names)."""

    fields: tuple[str, ...] = ()


def lexical_fields(tool: Tool) -> tuple[str, str, str]:
    """The id, the slim description (plus the `browser::fetch` boost words), the argument names."""
    description = tool.description
    if tool.name == "browser::fetch":
        description = f"{description} {BROWSER_FETCH_BOOST}"
    return (tool.name, description, " ".join(tool.parameter_names))


def _fielded_documents(tools: Iterable[Tool]) -> tuple[Document, ...]:
    return tuple(FieldedDocument(tool.name, tool.dense_text, tool.bm25, lexical_fields(tool))
                 for tool in tools)


def _post_init(self: DocumentSet) -> None:
    fields = _FIELDS
    documents = self.documents
    if not (fields and documents and all(isinstance(d, FieldedDocument) for d in documents)):
        _ORIGINAL_POST_INIT(self)
        return
    self.index = _rank.BM25FIndex(
        [[index_terms(_rank.tokenize(text)) for text in d.fields] for d in documents],  # type: ignore[attr-defined]
        [w for w, _ in fields], [b for _, b in fields], corpus_module.BM25_K1)
    self.positions = {}
    for position, document in enumerate(documents):
        self.positions.setdefault(document.id, position)


def use(fields: Fields) -> None:
    """Score catalogs built from now on by BM25F with these `(weight, b)` of the id, description
    and argument fields; None: the shipped BM25 document."""
    global _FIELDS
    _FIELDS = fields
    if fields is None:
        corpus_module.tool_documents = _ORIGINAL_DOCUMENTS
        DocumentSet.__post_init__ = _ORIGINAL_POST_INIT  # type: ignore[method-assign]
    else:
        corpus_module.tool_documents = _fielded_documents
        DocumentSet.__post_init__ = _post_init  # type: ignore[method-assign]


def parse(pairs: list[str]) -> Fields:
    """`["3,0.75", "1,0.75", "1,0.75"]` → the fields; `["repetition"]` → None."""
    if pairs == ["repetition"]:
        return None
    if len(pairs) != 3:
        raise SystemExit("give three weight,b pairs (id, description, arguments) or 'repetition'")
    return tuple((float(w), float(b)) for w, b in (pair.split(",") for pair in pairs))
