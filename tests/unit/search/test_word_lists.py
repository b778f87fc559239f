"""The word lists in `ranking/data/words/`: each file opens with its rule for adding a word, the
lists are clean lowercase words, and the stage modules read exactly them."""

from __future__ import annotations

import json
from collections import Counter

from iii_directory.search.ranking import answerability, corpus, vocabulary, word_lists
from iii_directory.search.ranking.vocabulary import normal_terms

FILES = sorted(path.stem for path in word_lists.WORDS_DIR.glob("*.json"))


def _lists(name: str) -> list[list[str]]:
    found: list[list[str]] = []
    for key, value in word_lists.load(name).items():
        if key == "rule":
            continue
        if isinstance(value, dict):
            found += [list(v) for v in value.values()]
        elif value and isinstance(value[0], list):
            found += value
        else:
            found.append(value)
    return found


def test_every_file_opens_with_its_rule_for_adding_a_word() -> None:
    assert {"concepts", "file_kinds", "actions", "answerability", "filler"} <= set(FILES)
    for name in FILES:
        text = (word_lists.WORDS_DIR / f"{name}.json").read_text(encoding="utf-8")
        document = json.loads(text)
        assert next(iter(document)) == "rule", name
        assert text.splitlines()[1].startswith(' "rule": '), name
        assert "add" in document["rule"].lower() and len(document["rule"]) > 80, name


def test_the_lists_hold_lowercase_words_each_once() -> None:
    for name in FILES:
        for words in _lists(name):
            assert words, name
            assert all(w == w.lower().strip() and w and " " not in w for w in words), (name, words)
            assert [w for w, n in Counter(words).items() if n > 1] == [], (name, words)


def test_a_word_names_one_concept_and_an_extension_one_kind() -> None:
    """`concepts` maps each word to one head and `file_kinds` each extension to one kind: a word
    in two groups would silently belong to the first."""
    for name in ("concepts", "file_kinds"):
        counts = Counter(w for words in _lists(name) for w in words)
        assert [w for w, n in counts.items() if n > 1] == [], name


def test_the_stage_modules_read_the_files() -> None:
    assert vocabulary.CONCEPT_GROUPS == word_lists.groups("concepts", "groups")
    assert vocabulary.ACTION_GROUPS == word_lists.classes("actions", "classes")
    assert vocabulary.FILE_KINDS["m4a"] == "audio file" and len(vocabulary.FILE_KINDS) == sum(
        len(v) for v in word_lists.classes("file_kinds", "kinds").values())
    assert answerability.ACTION_NOUNS == frozenset(normal_terms(
        word_lists.words("answerability", "action_nouns")))
    assert answerability.INTRINSIC_VERBS == frozenset(normal_terms(
        word_lists.words("answerability", "intrinsic_verbs")))
    assert corpus.FILLER_TERMS == frozenset(normal_terms(word_lists.words("filler")))
    assert vocabulary.normal_term("terminal") == vocabulary.normal_term("shell")
    assert vocabulary.request_actions(["delete", "the", "file"]) == frozenset({"delete"})
