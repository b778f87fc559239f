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


NAMES = tuple("""
    alice bob carol david emma frank grace henry irene jack karen louis maria nathan olivia peter
    quinn rachel simon tina victor wendy xavier yvonne adam bella chris diana ethan fiona george
    hannah ivan julia kevin laura martin nina oscar paula ralph sarah thomas ursula vincent walter
    anna brian clara daniel elena felix gloria harold isabel james kate leo monica neil oliver
    patricia robert sofia tom amy vera william albert betty carl dora edward flora gordon helen igor
    joan keith lisa marcus nora otto pamela roger susan timothy vivian wayne arthur bruce cecilia
    dennis eva fred gina hugo ingrid jerry ruth
""".split())
"""A hundred given names, each one token of the model's vocabulary and none a catalog term."""


def names_for(number: int) -> str:
    """Three different names of `NAMES` for `number` (unique below `NAMES_CAPACITY`): its
    base-33 digits, each picking from its own third of the list, so no name repeats (a repeat
    would be dropped from the second query and two numbers could share one)."""
    third = len(NAMES) // 3
    return " ".join(NAMES[part * third + number // third ** (2 - part) % third] for part in range(3))


NAMES_CAPACITY = (len(NAMES) // 3) ** 3
"""Numbers `names_for` tells apart (35,937)."""


def fresh(count: int, serial: int) -> list[str]:
    """`count` capability texts no call has used: the phrasings for three people named after
    `serial` and the position (unique for serials below `NAMES_CAPACITY` / 18, ~2,000). Names,
    not a number: the text's action-and-object second query (`second_query`, which keeps
    content words and drops digits) is new as well, so a call embeds both of its texts, as an
    agent's new wording does; three one-token names keep a text as long as the phrasing with an
    order number was."""
    return [f"{c} for {names_for(serial * len(PHRASINGS) + i)}" for i, c in enumerate(PHRASINGS[:count])]


def catalog() -> list[dict[str, Any]]:
    """The benchmark catalog's records (`EVAL_CATALOG`, else `EXAMPLE_CATALOG`)."""
    path = EVAL_CATALOG if EVAL_CATALOG.is_file() else EXAMPLE_CATALOG
    return json.loads(path.read_text(encoding="utf-8"))
