"""`_rank.vocabulary`: the compact piece → id mapping behaves as the dict it replaces."""

from __future__ import annotations

import pytest

from _rank.vocabulary import Subset, Vocabulary


def test_it_answers_as_the_dict_does_in_id_order() -> None:
    source = {"b": 2, "##b": 0, "[UNK]": 7, "añ": 3, "a": 1}
    vocab = Vocabulary(source)
    assert dict(vocab.items()) == source and len(vocab) == 5
    assert list(vocab) == ["##b", "a", "b", "añ", "[UNK]"]  # by id
    assert vocab.get("a") == 1 and vocab["[UNK]"] == 7 and "añ" in vocab
    assert vocab.get("ab", -1) == -1 and "ab" not in vocab and vocab.get(3) is None
    assert vocab.get("") is None and "#" not in vocab  # a prefix of a piece is not the piece
    assert vocab.piece(7) == "[UNK]" and vocab.piece(0) == "##b"
    assert vocab.longest == 5
    with pytest.raises(KeyError):
        vocab["zz"]
    with pytest.raises(KeyError):
        vocab.piece(4)


def test_dense_ids_need_no_reverse_table() -> None:
    vocab = Vocabulary({f"w{i}": i for i in range(1000)})
    assert vocab._by_id is None
    assert all(vocab[f"w{i}"] == i and vocab.piece(i) == f"w{i}" for i in range(1000))
    assert vocab.nbytes() < 30_000


def test_two_pieces_with_one_id_are_refused() -> None:
    with pytest.raises(ValueError, match="two pieces"):
        Vocabulary({"a": 1, "b": 1})


def test_a_subset_is_a_filtered_view() -> None:
    vocab = Vocabulary({"the": 0, "##s": 1, "Go": 2, "deploy": 3})
    words = Subset(vocab, lambda piece: piece.isalpha() and piece.islower())
    assert len(words) == 2 and list(words) == ["the", "deploy"]
    assert words.get("##s", 9) == 9 and "Go" not in words and words["deploy"] == 3
    assert words.get("absent", 9) == 9
    with pytest.raises(KeyError):
        words["Go"]
