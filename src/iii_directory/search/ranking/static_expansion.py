"""Static query expansion for the static lane: a request word the catalog never uses
is looked up among the catalog's own words in the static table's space (`_rank.static`), and its
nearest catalog words join the BM25 query of a lane whose lexical lane came out empty — the
lexical lane then finds a document through a synonym or another form of the word (`reading` →
`read`, `raining` → `precipitation`).

The rule (`CatalogWords.neighbours`): for each prose word of the request (`answerability.
request_words`) that is at least `MIN_LETTERS` (3) long, not ordinary English (vocabulary id ≥
`answerability.ORDINARY_RANK`) and not already a word of the catalog, its first `NEIGHBOURS` (2)
catalog words by static cosine, each only at cosine ≥ `NEIGHBOUR_COSINE` (0.70). The catalog's
words are its documents' raw BM25 tokens (`answerability.catalog_stats(...).words`), alphabetic,
`MIN_LETTERS` or longer, not ordinary English; their vectors are encoded once per catalog, when
the static index is built (eval catalog: 811 words).

Only an empty lexical lane is expanded, and only by close neighbours: wider cosines and every
lane expanded added false positives or cost first places (docs/record/search-quality.md,
"Figures from the search/ docstrings").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIN_LETTERS = 3  # chosen: shorter words are abbreviations the table knows badly
NEIGHBOURS = 2  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
NEIGHBOUR_COSINE = 0.70  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)


def informative(word: str, vocabulary: Mapping[str, int], ordinary_rank: int) -> bool:
    """An alphabetic word of `MIN_LETTERS` or more that is not ordinary English."""
    return (len(word) >= MIN_LETTERS and word.isalpha()
            and vocabulary.get(word, ordinary_rank) >= ordinary_rank)


@dataclass(frozen=True)
class CatalogWords:
    """The catalog's informative words, every raw word it uses, and a static index of the
    informative words' vectors (row i is `words[i]`)."""

    words: tuple[str, ...]
    known: frozenset[str]
    index: Any

    @classmethod
    def build(cls, encoder: Any, documents: Any) -> CatalogWords:
        """Encode the informative words of `documents` (a `corpus.DocumentSet`) with `encoder`
        (a `_rank.static.StaticEncoder`)."""
        from _rank.static import StaticIndex

        from .answerability import ORDINARY_RANK, catalog_stats, tokenizer_words

        vocabulary = tokenizer_words()
        known = catalog_stats(documents).words
        words = tuple(sorted(w for w in known if informative(w, vocabulary, ORDINARY_RANK)))
        index = StaticIndex(encoder.dimension)
        if words:
            index.add(encoder.encode(list(words)))
        return cls(words, frozenset(known), index)

    def neighbours(self, encoder: Any, text: str) -> list[str]:
        """The expansion of request `text`: catalog words near its unknown words (module
        docstring), first seen first, without repeats."""
        from .answerability import ORDINARY_RANK, request_words, tokenizer_words

        if not self.words:
            return []
        vocabulary = tokenizer_words()
        out: list[str] = []
        for word in dict.fromkeys(request_words(text)):
            if word in self.known or not informative(word, vocabulary, ORDINARY_RANK):
                continue
            for row, cosine in self.index.search(encoder.encode_one(word), NEIGHBOURS):
                if cosine >= NEIGHBOUR_COSINE and self.words[row] not in out:
                    out.append(self.words[row])
        return out


def expanded_terms(terms: Sequence[str], neighbours: Sequence[str]) -> list[str]:
    """The request's terms followed by its expansion words."""
    return list(terms) + [word for word in neighbours if word not in terms]
