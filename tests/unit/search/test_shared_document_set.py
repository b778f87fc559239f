"""Side-lane document sets are built once per distinct document tuple (bounded)."""

from __future__ import annotations

from iii_directory.search.ranking import corpus
from iii_directory.search.ranking.corpus import Document, DocumentSetCache


def _docs(*ids: str) -> tuple[Document, ...]:
    return tuple(Document(i, f"{i} sends email", f"{i} {i} sends email") for i in ids)


def test_equal_documents_share_one_set_and_rank_like_a_fresh_one() -> None:
    shared_document_set = DocumentSetCache().get
    first = shared_document_set(_docs("mail::send", "mail::list"))
    again = shared_document_set(_docs("mail::send", "mail::list"))
    assert again is first
    fresh = corpus.DocumentSet(_docs("mail::send", "mail::list"))
    assert again.bm25(["sends", "email"]) == fresh.bm25(["sends", "email"])


def test_changed_documents_build_a_new_set() -> None:
    shared_document_set = DocumentSetCache().get
    first = shared_document_set(_docs("mail::send"))
    changed = shared_document_set(_docs("mail::send", "mail::archive"))
    assert changed is not first
    assert changed.ids == ["mail::send", "mail::archive"]


def test_the_cache_is_bounded() -> None:
    cache = DocumentSetCache()
    for n in range(corpus.SHARED_SETS + 5):
        cache.get(_docs(f"w{n}::f"))
    assert len(cache) == corpus.SHARED_SETS
