"""`text.mask_non_prose` builds its alternation from only the alternatives whose marker occurs in
the text; it masks exactly what the full five-way alternation masks (property test over texts
built from the pieces that make the alternatives meet and overlap)."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from iii_directory.search.ranking.text import dense_query, mask_non_prose

FULL = re.compile(r"(?:https?|ftp)://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|`[^`]*`"
                  r"|\S*::\S*|\S+\.\w{1,5}\b", re.IGNORECASE)
PIECES = ["send", "an", "email", "to", "dana", "@", ".", "::", ":", "/", "//", "://", "http", "HTTPS",
          "ftp", "`", "-", "+", "_", "x", "com", "example", "report.pdf", "a.b", "é", "日本", "1", " ", " ", "\n"]


@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
@settings(max_examples=600, deadline=None)
def test_masks_what_the_full_alternation_masks(text: str) -> None:
    assert mask_non_prose(text) == FULL.sub(" ", text)


def test_examples() -> None:
    for text in ("Reply to dana@northwind.example about report.pdf on https://x.io/a::b `code`",
                 "plain prose without any marker at all", "mailer::send the invoice", "a.b@c.d.e",
                 "x.ab-foo@bar.com", "a:b.txt-x@y.com", "see `a.b` and ftp://files.example/c"):
        assert mask_non_prose(text) == FULL.sub(" ", text)
    prose = "send an email to a customer " * 18
    assert mask_non_prose(prose) is prose


def test_dense_query_still_names_urls_and_addresses() -> None:
    assert dense_query('post "text": to https://hooks.example.com/ci and ops@example.com') == \
        "post to URL and email address"
