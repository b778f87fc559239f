"""The lexical vocabulary of function search (chosen for this project): how a word becomes the
term BM25 indexes and matches, and the action a request or a function names.

* **Stemming** — every index term goes through the Snowball English stemmer (`snowballstemmer`,
  pure Python, so it runs on every wheel target), on both sides: `filling` and `fill`,
  `invite` and `invitation`, `scheduled` and `schedule` meet.
* **Concepts** — a small thesaurus of the words agents and function authors use for the same
  thing (`terminal` / `shell`, `spreadsheet` / `sheet`, `remember` / `memory`). Each word of a
  group is indexed and matched as the group's first word, on both sides, so a concept counts once
  toward the two-term minimum and a document never scores twice for two spellings of one idea.
  Only words that mean one thing across tool catalogs are grouped; verbs that change meaning with
  their object (`post`, `push`, `drop`) are left to the action classes.
* **Phrases** — a few multi-word and symbolic forms are rewritten in a request's text before it
  is tokenised: `#name` is a channel, a back-quoted span is code, a file name carries its kind,
  `log in` is `login`, a recurrence (`every Monday`, `daily`) asks for a schedule, and phrasal
  verbs and idioms become the verbs function descriptions use (`spin up` → start, `take … off`
  → remove, `put back` → revert).
* **Actions** — the verb classes (read, list, search, create, set, update, delete, send, run,
  stop, convert, resize, merge, split, schedule) of a request's leading verb and of a function's
  id verb and description verb; a lane prefers functions whose action agrees with the request's
  (`lanes.action_agreement`).

The groups, rewrites and classes were written for the vocabulary of agent tool catalogs and
extended while tuning on the eval set's dev split and our own extra set, never on its test split.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .text_memo import text_memo

import _rank

from . import word_lists
from .stemming import english_stemmer

_STEMMER = english_stemmer()  # None on a broken install: the words are indexed as they are


@text_memo(share=0.07, hot=True)
def stem(term: str) -> str:
    """The Snowball English stem of one lowercase term; digits and one-letter terms unchanged."""
    if _STEMMER is None or len(term) < 3 or not term.isalpha():
        return term
    return _STEMMER.stemWord(term)


CONCEPT_GROUPS: tuple[tuple[str, ...], ...] = word_lists.groups("concepts", "groups")
"""Synonym groups (data/words/concepts.json, with the rule for adding a word); the first word
names the concept."""


def _concept_table(groups: Iterable[Sequence[str]]) -> dict[str, str]:
    table: dict[str, str] = {}
    for group in groups:
        head = stem(group[0])
        for word in group:
            for term in _rank.tokenize(word):
                table.setdefault(stem(term), head)
    return table


CONCEPTS: dict[str, str] = _concept_table(CONCEPT_GROUPS)


@text_memo(share=0.07, hot=True)
def normal_term(term: str) -> str:
    """The term BM25 indexes and matches for one token: its stem, or its concept's head."""
    stemmed = stem(term)
    return CONCEPTS.get(stemmed, stemmed)


def normal_terms(terms: Iterable[str]) -> list[str]:
    """`normal_term` of each term, in order."""
    return [normal_term(term) for term in terms]


_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_UNIT = r"(?:second|minute|hour|day|night|week|weekday|weekend|month|quarter|year|morning|evening)"


@dataclass(frozen=True)
class Phrase:
    """One rewrite: `pattern` → `replacement`, tried only when the request holds one of the
    `words` (lowercase) or, for a symbolic rewrite, its `symbol`."""

    words: frozenset[str]
    symbol: str
    pattern: re.Pattern[str]
    replacement: str | Callable[[re.Match[str]], str]

    def may_apply(self, text: str, words: set[str]) -> bool:
        return self.symbol in text if self.symbol else not self.words.isdisjoint(words)


def _phrase(needles: str, pattern: str, replacement: str | Callable[[re.Match[str]], str],
            flags: int = re.IGNORECASE) -> Phrase:
    words = frozenset(needles.split())
    symbol = "" if all(w.isalpha() for w in words) else needles
    return Phrase(words, symbol, re.compile(pattern, flags), replacement)


FILE_KINDS: dict[str, str] = {extension: kind for kind, extensions
                              in word_lists.classes("file_kinds", "kinds").items()
                              for extension in extensions}
"""What a file name's extension says it is (data/words/file_kinds.json); the words follow the
name in a request's text."""

_FILE_NAME = re.compile(r"(?<![\w@])[\w./~-]*\w\.(" + "|".join(sorted(FILE_KINDS, key=len, reverse=True))
                        + r")\b(?![\w@-])", re.IGNORECASE)


def _file_kind(match: re.Match[str]) -> str:
    """The file name followed by its kind in brackets; a path inside a URL is left alone."""
    if match.start() and match.string[match.start() - 1] == ":":
        return match.group(0)
    return f"{match.group(0)} ({FILE_KINDS[match.group(1).lower()]})"


PHRASES: tuple[Phrase, ...] = (
    _phrase("`", r"`[^`\n]+`", " some code ", 0),
    _phrase("#", r"(?<![\w#&])#[A-Za-z][\w-]*", " a channel ", 0),
    Phrase(frozenset(), ".", _FILE_NAME, _file_kind),
    _phrase("up", r"\bheads?[- ]up\b", " message "),
    _phrase("back", r"\b(?:push|move|bump|shift)(?:es|ed|ing|s)?\s+((?:[\w']+\s+){0,6}?)back\b",
            r" postpone \1"),
    _phrase("back", r"\b(?:put|roll|bring)(?:s|ting|ling|ging|ed)?\s+((?:[\w']+\s+){0,3}?)back\b",
            r" revert \1"),
    _phrase("back", r"\b(?:shoot|write|fire|send|text|email)(?:s|ing|ed)?\s+back\b", " reply "),
    _phrase("name", r"\bchang(?:e|es|ed|ing)\s+the\s+name\s+of\b", " rename "),
    _phrase("loud", r"\b(?:out\s+)?loud(?:ly)?\b", " aloud "),
    _phrase("tack tacks tacked tacking", r"\btack(?:s|ed|ing)?\s+((?:[\w']+\s+){0,4}?)on(?:to)?\b",
            r" append \1 to "),
    _phrase("off", r"\btak(?:e|es|ing)\s+((?:[\w'-]+\s+){0,3}?)off\b", r" remove \1 from "),
    _phrase("up", r"\bpull(?:s|ing|ed)?\s+up\b", " show "),
    _phrase("log logs logging logged sign signs signing signed",
            r"\b(?:log|sign)(?:ging|ged|s)?\s+(?:in|into|on|onto)\b", " login "),
    _phrase("up", r"\b(?:spin|bring|start|boot|fire)(?:s|ning|ging|ing|ed|ged)?\s+up\b", " start "),
    _phrase("down", r"\b(?:tear|shut|take|bring|spin)(?:s|ing|ning|ting)?\s+down\b"
            r"|\b(?:tore|torn|took|taken|brought|spun)\s+down\b", " stop "),
    _phrase("up out into", r"\b(?:look|find|dig|search)(?:s|ing|ed)?\s+(?:up|out|into)\b", " find "),
    _phrase("up", r"\b(?:sign|set)(?:s|ting|ning)?\s+up\b", " create "),
    _phrase("up down", r"\b(?:write|jot|note|type)(?:s|ting|ing|ted)?\s+(?:up|down)\b", " write "),
    _phrase("rid", r"\bget(?:ting)?\s+rid\s+of\b", " delete "),
    _phrase("off", r"\b(?:fire|shoot)(?:s|ing)?\s+off\b", " send "),
    _phrase("off", r"\bkick(?:s|ing|ed)?\s+off\b", " start "),
    _phrase("up", r"\bback(?:s|ing|ed)?\s+up\b", " backup "),
    _phrase("back", r"\bmoney\s+back\b", " refund "),
    _phrase("every each daily weekly hourly nightly monthly yearly annually mondays tuesdays "
            "wednesdays thursdays fridays saturdays sundays",
            rf"\b(?:every|each)\s+(?:other\s+|\d+\s+)?(?:{_WEEKDAY}|{_UNIT})s?\b"
            rf"|\b(?:daily|weekly|hourly|nightly|monthly|yearly|annually)\b"
            rf"|\b(?:on|at)\s+{_WEEKDAY}s\b", " on a recurring schedule "),
)
"""Rewrites of a request's text before tokenisation, in order: a back-quoted span, a `#channel`
(a `#` before letters; `#88` stays an issue number), a file name's kind, a heads-up, `push …
back`, `put … back` / `roll back`, `shoot back`, `change the name of`, `out loud`, `tack … onto`,
`take … off`, `pull up`, `log in` / `sign into`, phrasal verbs (`spin up`, `tear down`, `look
up`, `set up`, `write up`, `get rid of`, `fire off`, `kick off`, `back up`), `money back`, a
recurrence."""

_WORD = re.compile(r"[a-z]+")


def rewrite_request(text: str) -> str:
    """A capability's text with `PHRASES` applied (whitespace collapsed when anything changed)."""
    words = set(_WORD.findall(text.lower()))
    rewritten = text
    for phrase in PHRASES:
        if phrase.may_apply(text, words):
            rewritten = phrase.pattern.sub(phrase.replacement, rewritten)
    return rewritten if rewritten == text else " ".join(rewritten.split())


ACTION_GROUPS: dict[str, tuple[str, ...]] = word_lists.classes("actions", "classes")
"""Action classes of verbs (data/words/actions.json; a verb may belong to two: `open` reads a
page or creates a ticket)."""


def _action_table(groups: dict[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for action, words in groups.items():
        for word in words:
            table.setdefault(normal_term(word), set()).add(action)
    return {term: frozenset(actions) for term, actions in table.items()}


ACTIONS: dict[str, frozenset[str]] = _action_table(ACTION_GROUPS)

LEADING_VERB_WINDOW = 3  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
"""How many leading terms of a request are searched for its verb."""

RECURRING = "recurring"
"""The word a recurrence is rewritten to (`PHRASES`)."""


def request_actions(terms: Sequence[str]) -> frozenset[str]:
    """The action classes of a request: `schedule` when it names a recurrence (the literal term
    `recurring`; `cancel the scheduled job` is a delete), else those of the first of its first
    `LEADING_VERB_WINDOW` (3) normal terms that is a known verb; empty when none is."""
    if RECURRING in terms:
        return frozenset({"schedule"})
    normal = normal_terms(terms)
    for term in normal[:LEADING_VERB_WINDOW]:
        found = ACTIONS.get(term)
        if found:
            return found
    return frozenset()


ID_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
"""The words of one id segment: kebab, snake and camelCase parts, and numbers."""


@lru_cache(maxsize=65536)
def function_actions(function_id: str, description: str) -> frozenset[str]:
    """The action classes a function performs: those of the first word of its id's last segment
    (`post-message` → send, `getToken` → read) and of its description's first word."""
    last = function_id.rsplit("::", 1)[-1]
    words = [word for word in ID_WORD.findall(last) if not word.isdigit()]
    found: set[str] = set()
    if words:
        found |= ACTIONS.get(normal_term(words[0].lower()), frozenset())
    lead = _rank.tokenize(description.split(" ", 1)[0]) if description else []
    if lead:
        found |= ACTIONS.get(normal_term(lead[0]), frozenset())
    return frozenset(found)
