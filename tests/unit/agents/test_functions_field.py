"""The `functions` frontmatter rewrite (§11.3): only that field changes, every other byte stays."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iii_directory.content.agents import parse_profile
from iii_directory.content.functions_field import NoFrontmatter, rewrite_functions, yaml_item


def test_spec_example_keeps_comment_flow_list_and_body() -> None:
    raw = "---\nname: X\n# keep me\nskills: [a, b]\ncolor: blue\n---\nBody.\n"
    out = rewrite_functions(raw, ["coder::tree", "needs#quote"])
    assert out == (
        "---\nname: X\n# keep me\nskills: [a, b]\ncolor: blue\n"
        'functions:\n  - coder::tree\n  - "needs#quote"\n---\nBody.\n'
    )
    assert parse_profile(out).functions == ("coder::tree", "needs#quote")
    assert rewrite_functions(out, []) == raw


def test_block_list_is_replaced_in_place() -> None:
    raw = "---\nname: X\nfunctions:\n  - a::b\n  # note\n  - c::d\n\nmodel: m\n---\nBody\n"
    out = rewrite_functions(raw, ["a::b", "c::d", "e::f"])
    assert out == "---\nname: X\nfunctions:\n  - a::b\n  - c::d\n  - e::f\n\nmodel: m\n---\nBody\n"


def test_wrapped_flow_list_is_replaced() -> None:
    raw = "---\nname: X\nfunctions: [a::b,\n   c::d]\ncolor: blue\n---\n"
    assert rewrite_functions(raw, ["c::d"]) == "---\nname: X\nfunctions:\n  - c::d\ncolor: blue\n---\n"


def test_indentless_block_sequence_is_part_of_the_field() -> None:
    raw = "---\nname: X\nfunctions:\n- a::b\n- c::d\ncolor: blue\n---\n"
    out = rewrite_functions(raw, ["a::b"])
    assert out == "---\nname: X\nfunctions:\n  - a::b\ncolor: blue\n---\n"
    assert parse_profile(out).color == "blue"


def test_header_with_unusual_spacing_and_inline_comment() -> None:
    raw = "---\nname:    X   \nfunctions   :   [a::b]   # preloaded\n\t\nhidden:  true\n---\n"
    out = rewrite_functions(raw, ["a::b", "x::y"])
    assert out == "---\nname:    X   \nfunctions:\n  - a::b\n  - x::y\n\t\nhidden:  true\n---\n"


def test_similar_keys_do_not_match() -> None:
    raw = "---\nname: X\nfunctions_extra: [a]\n  functions: nested\n---\n"
    out = rewrite_functions(raw, ["a::b"])
    assert out == "---\nname: X\nfunctions_extra: [a]\n  functions: nested\nfunctions:\n  - a::b\n---\n"


def test_crlf_file_keeps_crlf() -> None:
    raw = "---\r\nname: X\r\n# comment\r\nfunctions: [a::b]\r\nhidden: true\r\n---\r\nBody\r\n"
    out = rewrite_functions(raw, ["a::b", "c::d"])
    assert out == (
        "---\r\nname: X\r\n# comment\r\nfunctions:\r\n  - a::b\r\n  - c::d\r\nhidden: true\r\n---\r\nBody\r\n"
    )
    assert "\n" not in out.replace("\r\n", "")
    removed = rewrite_functions(out, [])
    assert removed == "---\r\nname: X\r\n# comment\r\nhidden: true\r\n---\r\nBody\r\n"


def test_crlf_append_at_end_restores_bytes() -> None:
    raw = "---\r\nname: X\r\n---\r\nBody\r\n"
    out = rewrite_functions(raw, ["a::b"])
    assert out == "---\r\nname: X\r\nfunctions:\r\n  - a::b\r\n---\r\nBody\r\n"
    assert rewrite_functions(out, []) == raw


def test_non_ascii_text_is_untouched() -> None:
    raw = "---\nname: Ärger — 🚢\ndescription: Grüße\n---\nKörper é\n"
    out = rewrite_functions(raw, ["a::b", "ünïcode::fn"])
    assert out == '---\nname: Ärger — 🚢\ndescription: Grüße\nfunctions:\n  - a::b\n  - "ünïcode::fn"\n---\nKörper é\n'
    assert parse_profile(out).functions == ("a::b", "ünïcode::fn")
    assert rewrite_functions(out, []) == raw


def test_file_ending_at_the_closing_fence() -> None:
    raw = "---\nname: X\n---"
    out = rewrite_functions(raw, ["a::b"])
    assert out == "---\nname: X\nfunctions:\n  - a::b\n---"
    assert rewrite_functions(out, []) == raw


def test_block_closing_immediately() -> None:
    assert rewrite_functions("---\n---\nBody\n", ["a::b"]) == "---\nfunctions:\n  - a::b\n---\nBody\n"


def test_repeated_key_is_collapsed_into_one() -> None:
    raw = "---\nname: X\nfunctions: [a::b]\nmodel: m\nfunctions: [c::d]\n---\n"
    out = rewrite_functions(raw, ["c::d", "e::f"])
    assert out == "---\nname: X\nfunctions:\n  - c::d\n  - e::f\nmodel: m\n---\n"


def test_body_that_looks_like_frontmatter_is_untouched() -> None:
    raw = "---\nname: X\n---\nfunctions: [not, frontmatter]\n---\n"
    out = rewrite_functions(raw, ["a::b"])
    assert out == "---\nname: X\nfunctions:\n  - a::b\n---\nfunctions: [not, frontmatter]\n---\n"


def test_missing_frontmatter_is_refused() -> None:
    with pytest.raises(NoFrontmatter):
        rewrite_functions("name: X\n", ["a::b"])


@pytest.mark.parametrize(
    ("item", "written"),
    [
        ("coder::tree", "coder::tree"),
        ("a/b.c_d-e", "a/b.c_d-e"),
        ("needs#quote", '"needs#quote"'),
        ("-lead", '"-lead"'),
        (".lead", '".lead"'),
        (":lead", '":lead"'),
        ("/lead", '"/lead"'),
        ("trail:", '"trail:"'),
        ("true", '"true"'),
        ("null", '"null"'),
        ("123", '"123"'),
        ("1:2", '"1:2"'),
        ("quote\"d", '"quote\\"d"'),
        ("é", '"é"'),
    ],
)
def test_item_scalars(item: str, written: str) -> None:
    assert yaml_item(item) == written


_ID = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters="\u0085\u00a0\ufeff"),
    min_size=1,
    max_size=20,
).filter(lambda s: not any(c.isspace() for c in s))


@settings(max_examples=150, deadline=None)
@given(
    ids=st.lists(_ID, min_size=1, max_size=6, unique=True),
    crlf=st.booleans(),
    comment=st.sampled_from(["", "# a comment\n", "   # indented comment\n"]),
    body=st.text(max_size=40),
)
def test_add_then_remove_round_trips_and_parses_back(ids: list[str], crlf: bool, comment: str, body: str) -> None:
    eol = "\r\n" if crlf else "\n"
    front = f"name: Prop{eol}{comment.replace(chr(10), eol)}skills: [x, y]{eol}color:   blue{eol}"
    raw = f"---{eol}{front}---{eol}{body}"
    out = rewrite_functions(raw, ids)
    assert list(parse_profile(out).functions) == [i.strip() for i in ids]
    assert out.endswith(f"---{eol}{body}")
    assert rewrite_functions(out, []) == raw
