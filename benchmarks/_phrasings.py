"""What the search benchmarks share: our own capability phrasings (not eval cases; 18 distinct
needs across common workers), texts no call has used yet, and the catalog they search — the
eval set's when it is on this machine, else the shipped example catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVAL_CATALOG = Path("/work/shared/eval/catalog.json")
EXAMPLE_CATALOG = Path(__file__).parent.parent / "src" / "iii_directory" / "data" / "example_catalog.json"

PHRASINGS = [
    "send an email to a customer", "create a calendar event next tuesday", "list open pull requests",
    "charge a card for the invoice", "presign a url for a stored file", "post a message in the team channel",
    "query the orders table", "fetch a web page and extract the text", "translate a paragraph into German",
    "schedule a job every night", "store a value under a key", "transcribe an audio recording",
    "open a support ticket", "look up the weather forecast", "render html into a pdf",
    "search the web for release notes", "read a secret from the vault", "geocode a street address",
]


SYLLABLES = ("ka", "ve", "ti", "mo", "ru", "sa", "le", "no", "pi", "du")


def made_up_word(number: int) -> str:
    """A word no catalog or phrasing holds: one syllable a digit of the last five decimal digits
    of `number`, zero-padded, so every word has the same length (12 → "kakakaveti")."""
    return "".join(SYLLABLES[int(digit)] for digit in f"{number % 100_000:05d}")


def fresh(count: int, serial: int) -> list[str]:
    """`count` capability texts no call has used: the phrasings for an account named after
    `serial` and the position. The name is a made-up word, not a number, so the text's
    action-and-object second query (`second_query`, which keeps content words and drops
    digits) is new as well: a call embeds both of its texts, as an agent's new wording does."""
    return [f"{c} for the {made_up_word(serial * 100 + i)} account" for i, c in enumerate(PHRASINGS[:count])]


def catalog() -> list[dict[str, Any]]:
    """The benchmark catalog's records (`EVAL_CATALOG`, else `EXAMPLE_CATALOG`)."""
    path = EVAL_CATALOG if EVAL_CATALOG.is_file() else EXAMPLE_CATALOG
    return json.loads(path.read_text(encoding="utf-8"))
