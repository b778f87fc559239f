"""Three-way merge (kits.md §7), with the spec's examples and properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from iii_directory.kits.merge import has_conflict_markers, matching_pairs, split_lines, three_way

B = "# Flow\n\nStep one.\nStep two.\nStep three.\n"


def test_disjoint_edits_merge_cleanly() -> None:
    ours = "# Flow\n\nStep one, carefully.\nStep two.\nStep three.\n"
    theirs = B + "Step four.\n"
    result = three_way(B, ours, theirs)
    assert result.status == "clean"
    assert result.conflicts == 0
    assert result.text == "# Flow\n\nStep one, carefully.\nStep two.\nStep three.\nStep four.\n"


def test_title_edit_and_kit_change() -> None:
    result = three_way(B, B.replace("# Flow", "# Flow (mine)"), B.replace("Step two.", "Step two (kit)."))
    assert result.status == "clean"
    assert result.text == "# Flow (mine)\n\nStep one.\nStep two (kit).\nStep three.\n"


def test_overlapping_edits_conflict_with_labelled_markers() -> None:
    ours = B.replace("Step two.", "Step two (mine).")
    theirs = B.replace("Step two.", "Step two (kit).")
    result = three_way(B, ours, theirs)
    assert result.status == "conflicts"
    assert result.conflicts == 1
    assert result.text == (
        "# Flow\n\nStep one.\n"
        "<<<<<<< yours\nStep two (mine).\n||||||| installed\nStep two.\n=======\nStep two (kit).\n"
        ">>>>>>> kit\nStep three.\n"
    )
    assert has_conflict_markers(result.text)


def test_adjacent_changes_conflict() -> None:
    ours = B.replace("Step one.", "Step 1.")
    theirs = B.replace("Step two.", "Step 2.")
    assert three_way(B, ours, theirs).status == "conflicts"


def test_insertions_at_one_point() -> None:
    same = three_way(B, B + "Step four.\n", B + "Step four.\n")
    assert (same.status, same.text) == ("clean", B + "Step four.\n")
    both = three_way("a\nb\n", "a\nx\nb\n", "a\ny\nb\n")
    assert both.status == "conflicts"
    assert "x\n" in both.text and "y\n" in both.text


def test_trivial_sides_short_circuit() -> None:
    assert three_way(B, B, "x\n").text == "x\n"
    assert three_way(B, "y\n", B).text == "y\n"
    assert three_way(B, "z\n", "z\n").status == "clean"


def test_conflict_count_and_missing_final_newline() -> None:
    base = "a\nb\nc\nd\ne\nf"
    ours = "A\nb\nc\nd\ne\nF"
    theirs = "a1\nb\nc\nd\ne\nf2"
    result = three_way(base, ours, theirs)
    assert result.conflicts == 2
    for line in result.text.splitlines():
        assert not line.endswith("<<<<<<< yours") or line == "<<<<<<< yours"
    assert "F\n||||||| installed\nf\n=======\nf2\n>>>>>>> kit\n" in result.text


def test_marker_detection() -> None:
    assert has_conflict_markers("<<<<<<< yours\nx\n>>>>>>> kit\n")
    assert not has_conflict_markers(">>>>>>> kit\n<<<<<<< yours\n")
    assert not has_conflict_markers("text with <<<<<<< inside\n>>>>>>> kit\n")


def _lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    return table[0][0]


_lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "\n"]), max_size=14)


@given(_lines, _lines)
def test_myers_finds_a_longest_common_subsequence(a: list[str], b: list[str]) -> None:
    pairs = matching_pairs(a, b)
    assert all(a[i] == b[j] for i, j in pairs)
    assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(pairs, pairs[1:], strict=False))
    assert len(pairs) == _lcs(a, b)


_texts = _lines.map("".join)


@given(_texts, _texts)
def test_merging_with_itself_and_without_local_edits(base: str, other: str) -> None:
    assert three_way(base, base, base).text == base
    assert three_way(base, other, other).text == other
    assert three_way(base, base, other).text == other
    assert three_way(base, other, base).text == other


@settings(max_examples=200)
@given(st.lists(st.text(alphabet="xyz", min_size=1, max_size=3), min_size=4, max_size=12), st.data())
def test_disjoint_edits_always_merge(words: list[str], data: st.DataObject) -> None:
    """Edits separated by at least one untouched line merge cleanly and keep both changes."""
    base_lines = [f"{i}:{w}\n" for i, w in enumerate(words)]
    cut = data.draw(st.integers(min_value=1, max_value=len(base_lines) - 2))
    ours_lines = list(base_lines)
    theirs_lines = list(base_lines)
    ours_lines[cut - 1] = "ours edit\n"
    theirs_lines[cut + 1] = "theirs edit\n"
    result = three_way("".join(base_lines), "".join(ours_lines), "".join(theirs_lines))
    expected = list(base_lines)
    expected[cut - 1] = "ours edit\n"
    expected[cut + 1] = "theirs edit\n"
    assert result.status == "clean"
    assert result.text == "".join(expected)
    assert split_lines(result.text) == expected
