"""A second dense query per capability: the request cut to its action and object (issue 18,
chosen for this project).

The encoder embeds a capability as written (`text.dense_query`), where adjuncts, names and values
(`for a moment`, `Pike Place Market`, `tomorrow`) pull the vector as much as what is asked. The
learned fusion (`fusion.py`) also reads each candidate's cosine to a second embedding of the
request: its leading verb — the first of its first `LEADING_VERB_WINDOW` (3) prose words that is
a known action (`vocabulary.ACTIONS`) — followed by its concept words
(`answerability.concept_words`: neither ordinary English, stop words nor filler); when it names
no concept, every prose word that is neither a stop word nor filler. Examples:
`send an email to a customer` → "send email customer", `shrink the logo to 256x256` → "shrink
logo", `give the buyer their money back for order 7781` → "give buyer refund".

One more encoder text per capability, embedded in the same batch as the capability and cached
in the query LRU like it — only in a call that embeds at most `SECOND_QUERY_CAPABILITIES` (6,
one search batch) capabilities: the encoder's time grows with its texts, and eighteen new
capabilities with their second texts took 98–108 ms (p50, `bench_search.py -k new_texts`)
against 66–74 ms without, past the 80 ms floor. A larger call's lanes are scored without them
(`fusion.WEIGHTS_WITHOUT_SECOND`). Figures: `fusion.py` and docs/record/search-quality.md "The first result: what was
tried".
"""

from __future__ import annotations

import _rank

from .answerability import concept_words, request_words
from .corpus import FILLER_TERMS
from .vocabulary import ACTIONS, LEADING_VERB_WINDOW, normal_term


SECOND_QUERY_CAPABILITIES = 6  # spec: docs/rules/search.md §7.1 (one batch of six)
"""A call embeds second texts only when it embeds at most this many capabilities."""


def second_query(dense_text: str) -> str:
    """The action-and-object text of a capability's dense query (see the module docstring);
    the dense query itself when no word is left."""
    words = request_words(dense_text)
    verb = next((w for w in words[:LEADING_VERB_WINDOW] if normal_term(w) in ACTIONS), None)
    objects = [w for w in concept_words(dense_text) if w != verb]
    if not objects:
        objects = [w for w in words if w != verb and w not in _rank.STOPWORDS
                   and normal_term(w) not in FILLER_TERMS]
    return " ".join(([verb] if verb else []) + objects) or dense_text
