"""The bounded YAML loader (markdown.load_yaml): the libyaml fast path and the pure-Python
loader refuse aliases, tags and deep nesting alike and build the same data whenever both
accept well-formed YAML (on malformed syntax libyaml is the more lenient parser)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import yaml
from hypothesis import given, settings as hsettings, strategies as st

from iii_directory.content import markdown
from iii_directory.content.markdown import FrontmatterError, load_yaml


def both(text: str) -> tuple[Any, Any]:
    """(fast-path outcome, pure-Python outcome); an outcome is the value or the error type."""
    def outcome(loader: Any) -> Any:
        try:
            return ("ok", loader(text))
        except FrontmatterError:
            return ("error", None)
    fast = outcome(load_yaml)
    saved = markdown._CSafeLoader
    markdown._CSafeLoader = None
    try:
        slow = outcome(load_yaml)
    finally:
        markdown._CSafeLoader = saved
    return fast, slow


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n"


@pytest.mark.parametrize("text", [
    BOMB,
    "a: &x 1\nb: *x\n",
    "!!python/object/apply:os.system ['true']\n",
    "a: !!python/name:os.system\n",
    "x: " + "[" * 40 + "]" * 40 + "\n",
    "".join(" " * (2 * i) + f"k{i}:\n" for i in range(40)) + " " * 80 + "v: 1\n",
    "- " * 40 + "x\n",
    "[" * 2000 + "]" * 2000,
    "a: [unclosed\n",
    "--- 1\n--- 2\n",
])
def test_refused_on_both_paths(text: str) -> None:
    fast, slow = both(text)
    assert fast == slow == ("error", None)


def test_anchors_without_aliases_and_plain_data_load() -> None:
    assert load_yaml("a: &anchor 1\nb: [1, two, {c: null}]\n") == {"a": 1, "b": [1, "two", {"c": None}]}
    assert load_yaml("") is None
    assert load_yaml("# only a comment\n") is None
    nested: list[Any] = []
    for _ in range(30):
        nested = [nested]
    assert load_yaml("x: " + "[" * 31 + "]" * 31) == {"x": nested}


def test_alias_message_names_the_line() -> None:
    with pytest.raises(FrontmatterError, match=r"YAML aliases are not allowed \(line 3\)"):
        load_yaml("a: &x 1\nc: 2\nb: *x\n")
    saved = markdown._CSafeLoader
    markdown._CSafeLoader = None
    try:
        with pytest.raises(FrontmatterError, match=r"YAML aliases are not allowed \(line 3\)"):
            load_yaml("a: &x 1\nc: 2\nb: *x\n")
    finally:
        markdown._CSafeLoader = saved


def test_size_bound() -> None:
    with pytest.raises(FrontmatterError, match="too large"):
        load_yaml("a: " + "x" * 70_000)


PLAIN = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=15)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)


@hsettings(max_examples=100, deadline=None)
@given(st.one_of(
    PLAIN.map(lambda v: yaml.safe_dump(v, allow_unicode=True)),
    PLAIN.map(lambda v: yaml.safe_dump(v, default_flow_style=True)),
))
def test_fast_and_pure_paths_build_the_same_data(text: str) -> None:
    fast, slow = both(text)
    assert fast == slow and fast[0] == "ok"


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, bytes, datetime.date))


@hsettings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab:-[]{}&*!#'\" \n\t|>?,.%@`", max_size=60))
def test_arbitrary_text_yields_plain_data_or_a_frontmatter_error(text: str) -> None:
    for result, _ in both(text):
        assert result in ("ok", "error")
    try:
        value = load_yaml(text)
    except FrontmatterError:
        return
    assert _plain(value)
