"""Several needs in one capability (issue 31): "find the paper, summarise it and email it to my
team" asks three things of three different services. Searched whole, its lane fills from the
service of the first need; searched as its clauses too, each need gets its own candidates.

`split_needs` cuts a capability at clause boundaries:

* at `;`, `then`, `so that`, `,` and `and` where a new clause starts (`starts_clause`): the
  next word is a known action (`vocabulary.ACTIONS`, `answerability.INTRINSIC_VERBS`) or is
  followed by an object word (`it`, `them`, `the`, `a`, `my` …), and is neither a stop word
  ("with the notes") nor an `-ing` form ("starting March 1") — "search and replace text" and
  "ana@x.io, raj@x.io and li@x.io" stay whole;
* a need is a piece of `MIN_WORDS` words or more that itself starts a clause: a bare verb
  ("read and write files"), context ("the PDF is just scanned images") and purpose ("so I can
  work in parallel") are not needs, and fewer than two needs is one.

At most `MAX_NEEDS` needs. The search service searches each need beside the whole capability (`service.SearchService`); a need
that the screening refuses (an intrinsic need such as "summarise it") is dropped there, and a
need's lane is always re-sorted by its verb (most needs lost on the real-world several-needs set
were another function of a service the answer held: docs/record/search-quality.md, "Several needs,
round two"); so is every lane's recall tail (`service.SearchService`): in lexical mode a need's
lane is short (the two-term minimum and coverage pruning) and its tail spends most of the budget,
in BM25 order, where the clause's object words outrank its verb ("email the customer a payment
reminder" put payment functions before `email::send`). In hybrid a need's lane weighs
its verb `NEED_ACTION_BONUS` (`need_action_bonus`): a need is one verb phrase, so its verb says
more about which sibling it wants than the whole capability's does (figures:
docs/record/search-quality.md, "Several needs, round three"). A need that the graded decision
empties keeps its recall tail (graded `low`, as every tail is) when its capability's own lane is
answered (`answered_needs`): the weak floor judges a capability, and a short clause of a
servable capability ("email it to legal@acme.eu") carries less evidence than the request does.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import TypeVar

import _rank

from .answerability import INTRINSIC_VERBS
from .query import Query, make_query
from .vocabulary import ACTIONS, normal_term

MAX_NEEDS = 6  # chosen: the longest chains in our case sets name six steps (joined "multi-six" cases)
NEED_ACTION_BONUS = 0.5  # chosen: tuned on our several-needs and joined sets (hybrid lanes only)
NEEDS_PER_CALL = 12  # chosen: the answer's budget (select.SELECTION_BUDGET); more needs cannot each get a slot, and the cap bounds a call of long capabilities
MIN_WORDS = 2  # chosen: a verb and its object
T = TypeVar("T")

_BOUNDARY = re.compile(r"\s*;\s*|,?\s+(?:and\s+)?then\s+|,?\s+so\s+that\s+|,\s+and\s+|,\s+"
                       r"|\s+and\s+", re.IGNORECASE)
_OBJECT = frozenset(("it", "them", "this", "that", "these", "those", "the", "a", "an", "my",
                     "our", "your", "their", "his", "her", "me", "us", "him", "everyone",
                     "everybody", "all", "each", "every", "to"))
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_EDGES = "\"'`()[]{}<>:,.;!?"
_AUXILIARY = frozenset(("will", "does", "do", "did", "is", "are", "was", "were", "can", "could",
                        "should", "would", "has", "have", "had"))
_QUOTED = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]|`[^`]*`|\"[^\"]*\"")
"""Spans never cut: JSON objects and arrays, code spans, double-quoted strings."""


def starts_clause(rest: str) -> bool:
    """`rest` (the text after a boundary) opens a new clause: its first word is a known
    action or an intrinsic verb, or is followed by an object word; never a stop word, an
    auxiliary or an `-ing` form."""
    tokens = [token.strip(_EDGES).lower() for token in rest[:80].split()[:2]]
    if not tokens or not _WORD.fullmatch(tokens[0]):
        return False
    first = tokens[0]
    if first in _OBJECT or first in _AUXILIARY or first in _rank.STOPWORDS \
            or first.endswith("ing"):
        return False
    if normal_term(first) in ACTIONS or normal_term(first) in INTRINSIC_VERBS:
        return True
    return len(tokens) > 1 and tokens[1] in _OBJECT


def _pieces(text: str) -> list[str]:
    """`text` cut at every boundary where a clause starts."""
    pieces: list[str] = []
    start = 0
    quoted = [span.span() for span in _QUOTED.finditer(text)]
    for match in _BOUNDARY.finditer(text):
        if any(left < match.start() < right for left, right in quoted):
            continue
        if starts_clause(text[match.end():]):
            pieces.append(text[start:match.start()])
            start = match.end()
    pieces.append(text[start:])
    return [piece.strip(" ,.;") for piece in pieces if piece.strip(" ,.;")]


@lru_cache(maxsize=4096)
def split_needs(text: str) -> tuple[str, ...]:
    """The needs of one capability (module docstring); empty when it holds one need."""
    needs = [piece for piece in _pieces(text)
             if starts_clause(piece) and len(piece.split()) >= MIN_WORDS]
    return tuple(needs[:MAX_NEEDS]) if len(needs) > 1 else ()


def expand_needs(queries: Sequence[Query | None]) -> tuple[list[Query | None], list[int]]:
    """Each capability's query followed by the queries of its needs (`split_needs`; those that
    make no query are left out), and for every entry the position of its capability. A whole
    capability stays first: a wrong cut only adds candidates beside its own. A call searches at
    most `NEEDS_PER_CALL` needs, in capability order."""
    flat: list[Query | None] = []
    owners: list[int] = []
    budget = NEEDS_PER_CALL
    for position, query in enumerate(queries):
        flat.append(query)
        owners.append(position)
        if query is None:
            continue
        for need in split_needs(query.text):
            made = make_query(need) if budget > 0 else None
            if made is not None and made.text != query.text:
                flat.append(made)
                owners.append(position)
                budget -= 1
    return flat, owners


def need_texts(queries: Sequence[Query | None], owners: Sequence[int]) -> frozenset[str]:
    """The texts of the needs among `expand_needs`'s queries: every entry after the first of
    its capability."""
    return frozenset(query.text for position, (query, owner) in enumerate(zip(queries, owners))
                     if query is not None and position > 0 and owners[position - 1] == owner)


def regroup(items: Sequence[T], owners: Sequence[int], count: int) -> list[list[T]]:
    """`items` (aligned with `owners`, as `expand_needs` returns them) grouped per capability."""
    groups: list[list[T]] = [[] for _ in range(count)]
    for item, owner in zip(items, owners):
        groups[owner].append(item)
    return groups


def need_action_bonus(text: str, needs: Collection[str], default: float) -> float:
    """The action-agreement bonus of a hybrid lane for query `text`: `NEED_ACTION_BONUS` when it
    is a need's lane, `default` otherwise. Lexical and static lanes keep `default` for every lane
    (the static lane lost needs with the larger bonus)."""
    return NEED_ACTION_BONUS if text in needs else default


def answered_needs(texts: Sequence[str], answered: Sequence[bool],
                   needs: Collection[str]) -> list[bool]:
    """For each query of a batch (`texts`, as `expand_needs` orders them: a capability, then its
    needs), whether it is a need whose lane is empty (`answered` false) while its capability's
    own lane is answered: such a need keeps its recall tail."""
    out: list[bool] = []
    owner = False
    for text, lane in zip(texts, answered):
        if text in needs:
            out.append(owner and not lane)
        else:
            owner = lane
            out.append(False)
    return out
