"""Agent profile frontmatter: every validation message and normalisation rule of §4.3."""

from __future__ import annotations

import pytest

from iii_directory.content.agents import ProfileError, check_content, parse_profile
from iii_directory.errors import DirectoryError


def profile(front: str, body: str = "Body.\n") -> str:
    return f"---\nname: Agent\n{front}---\n{body}"


def problem(content: str) -> str:
    with pytest.raises(ProfileError) as caught:
        parse_profile(content)
    return str(caught.value)


def test_minimal_profile_and_defaults() -> None:
    fields = parse_profile("---\nname: '  Helper  '\n---\n")
    assert fields.name == "Helper"
    assert fields.description == ""
    assert fields.logo is None
    assert fields.skills == ()
    assert fields.functions == ()
    assert fields.model is None and fields.reasoning_effort is None
    assert fields.icon is None and fields.color is None and fields.extends is None
    assert fields.hidden is False
    assert fields.composer_placeholder is None
    assert fields.skills_index is None
    assert fields.body == ""


def test_all_fields_are_normalised() -> None:
    fields = parse_profile(
        "---\n"
        "name: Reviewer\n"
        "description: '  Reviews code.  '\n"
        "logo: ' 🚢 '\n"
        "skills: [' a/b ', c]\n"
        "functions: [' coder::tree', 'coder::search ', coder::tree]\n"
        "model: ' gpt-x '\n"
        "reasoning_effort: ' high '\n"
        "icon: ' review '\n"
        "color: ' teal '\n"
        "extends: ' default '\n"
        "hidden: true\n"
        "composer_placeholder: \"  Review\\n   my   last\\tcommit  \"\n"
        "skills_index: false\n"
        "unknown_key: ignored\n"
        "---\n"
        "Body text.\n"
    )
    assert fields.description == "Reviews code."
    assert fields.logo == "🚢"
    assert fields.skills == (" a/b ", "c")
    assert fields.functions == ("coder::tree", "coder::search")
    assert fields.model == "gpt-x"
    assert fields.reasoning_effort == "high"
    assert fields.icon == "review"
    assert fields.color == "teal"
    assert fields.extends == "default"
    assert fields.hidden is True
    assert fields.composer_placeholder == "Review my last commit"
    assert fields.skills_index is False
    assert fields.body == "Body text.\n"


@pytest.mark.parametrize("key", ["model", "reasoning_effort", "icon", "color", "extends"])
def test_blank_optional_strings_become_null(key: str) -> None:
    fields = parse_profile(profile(f"{key}: '   '\n"))
    assert getattr(fields, key) is None


def test_blank_placeholder_is_absent() -> None:
    assert parse_profile(profile("composer_placeholder: \" \\n \"\n")).composer_placeholder is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name: X\n", "missing YAML frontmatter (expected --- ... --- block at file start)"),
        ("---\nname: X\nno closing fence\n", "missing YAML frontmatter (expected --- ... --- block at file start)"),
        ("---\n---\nBody\n", "frontmatter missing non-empty `name`"),
        ("---\nname: '  '\n---\n", "frontmatter missing non-empty `name`"),
        ("---\ndescription: d\n---\n", "frontmatter missing non-empty `name`"),
        (profile("logo: ''\n"), "`logo` must be non-empty when present (emoji only)"),
        (profile("logo: '   '\n"), "`logo` must be non-empty when present (emoji only)"),
        (profile("logo: ./x.png\n"), "`logo` may not contain path separators or whitespace — emoji only"),
        (profile("logo: a b\n"), "`logo` may not contain path separators or whitespace — emoji only"),
        (profile("logo: 'a\\\\b'\n"), "`logo` may not contain path separators or whitespace — emoji only"),
        (profile("logo: 🚢🚢🚢🚢🚢\n"), "`logo` too long (20 bytes; max 16) — emoji only"),
        (profile("icon: robot\n"), '`icon` must be one of agent, code, search, terminal, database, test, review, docs, design (got "robot")'),
        (profile("color: ' red '\n"), '`color` must be one of neutral, blue, purple, teal, green, amber, rose (got "red")'),
        (profile("functions: ['']\n"), "`functions` entries must be non-empty function ids"),
        (profile("functions: ['   ']\n"), "`functions` entries must be non-empty function ids"),
        (profile("functions:\n  -\n"), "`functions` entries must be non-empty function ids"),
        (profile("functions: ['coder tree']\n"), '`functions` entry "coder tree" may not contain whitespace — one engine function id per entry (e.g. `coder::tree`)'),
        (profile("composer_placeholder: " + "é" * 201 + "\n"), "`composer_placeholder` too long (201 characters; max 200) — one short example request"),
    ],
)
def test_validation_messages(content: str, message: str) -> None:
    assert problem(content) == message


def test_invalid_yaml_message() -> None:
    assert problem("---\nname: [unclosed\n---\n").startswith("invalid frontmatter YAML: ")
    assert problem("---\n- a list\n---\n").startswith("invalid frontmatter YAML: ")
    assert problem("---\nname: &a X\nother: *a\n---\n").startswith("invalid frontmatter YAML: ")


@pytest.mark.parametrize(
    ("front", "key"),
    [
        ("name: 5\n", "name"),
        ("name: X\nhidden: 'yes'\n", "hidden"),
        ("name: X\nskills: a\n", "skills"),
        ("name: X\nfunctions: [1]\n", "functions"),
        ("name: X\nmodel: [a]\n", "model"),
        ("name: X\nskills_index: 0\n", "skills_index"),
    ],
)
def test_wrong_types_are_invalid_frontmatter(front: str, key: str) -> None:
    message = problem(f"---\n{front}---\n")
    assert message.startswith("invalid frontmatter YAML: ")
    assert f"`{key}`" in message


@pytest.mark.parametrize("logo", ["🚢", "⚡🔥", "🧭", "AB"])
def test_valid_logos(logo: str) -> None:
    assert parse_profile(profile(f"logo: {logo}\n")).logo == logo


def test_placeholder_counts_characters_not_bytes() -> None:
    fields = parse_profile(profile("composer_placeholder: " + "é" * 200 + "\n"))
    assert fields.composer_placeholder == "é" * 200
    spaced = "  ".join(["word"] * 40)  # 40 × 4 + 39 spaces = 199 characters after collapsing
    assert parse_profile(profile(f"composer_placeholder: '{spaced}'\n")).composer_placeholder == " ".join(["word"] * 40)


def test_body_may_be_empty_and_is_kept_verbatim() -> None:
    assert parse_profile("---\nname: X\n---\n").body == ""
    assert parse_profile("---\nname: X\n---").body == ""
    assert parse_profile("---\r\nname: X\r\n---\r\n\r\nBody\r\n").body == "\r\nBody\r\n"


def test_check_content_caps_size_with_a_bare_message() -> None:
    content = "---\nname: X\n---\n" + "x" * 262_144
    with pytest.raises(DirectoryError) as caught:
        check_content(content)
    assert caught.value.code == "invocation_failed"
    assert caught.value.message == f"content too large ({len(content)} bytes; max 262144)"
    with pytest.raises(DirectoryError) as caught:
        check_content("---\nname: ''\n---\n")
    assert caught.value.message == "frontmatter missing non-empty `name`"
