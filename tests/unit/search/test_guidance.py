"""Guidance parts and their order (search.md §11)."""

from __future__ import annotations

from iii_directory.search import guidance as g
from iii_directory.search.guidance import GuidanceInput, compose


def test_refine_guidance_required_phrases() -> None:
    text = compose(GuidanceInput(workers_empty=True))
    for phrase in ("No functions matched", "next decision point", "all unmet external capabilities",
                   "Do not search for intrinsic reasoning, summarization, planning, or formatting",
                   "do not repeat needs already represented", "directory::skills::list",
                   "directory::skills::get"):
        assert phrase in text
    assert text.startswith(g.REFINE_GUIDANCE)
    assert text.endswith(g.LANGUAGE_GUIDANCE)


def test_install_guidance_when_only_installables() -> None:
    text = compose(GuidanceInput(workers_empty=True, has_installables=True))
    assert text.startswith(g.INSTALL_GUIDANCE)
    assert "NOT installed" in text and "function_not_found" in text
    assert g.INSTALL_WORKFLOW in text
    assert g.REFINE_GUIDANCE not in text


def test_main_guidance_first_then_repeat_pointer() -> None:
    first = compose(GuidanceInput(workers_empty=False))
    assert first == f"{g.MAIN_GUIDANCE} {g.LANGUAGE_GUIDANCE}"
    assert "engine::functions::info" in first and '{"function_ids": [...]}' in first
    later = compose(GuidanceInput(workers_empty=False, first_main=False))
    assert "same rules as earlier in this session" in later
    assert g.MAIN_GUIDANCE not in later


def test_suppression_note_lists_ids() -> None:
    text = compose(GuidanceInput(workers_empty=True, suppressed=["a::1", "b::2"], first_main=False))
    assert ("Already provided earlier in this session (candidates unchanged — reuse the earlier "
            "result): a::1, b::2.") in text
    assert g.REFINE_GUIDANCE not in text


def test_install_note_and_workflow_order() -> None:
    text = compose(GuidanceInput(workers_empty=False, has_installables=True))
    positions = [text.index(part) for part in (g.MAIN_GUIDANCE, g.INSTALL_NOTE, g.INSTALL_WORKFLOW,
                                               g.LANGUAGE_GUIDANCE)]
    assert positions == sorted(positions)
    for phrase in ("directory::registry::workers::info", "compose::operation",
                   "engine::register_trigger", '"trigger_type": "compose-operation"',
                   '"terminal_only": true', '"once": true', "engine::unregister_trigger",
                   "engine::workers::info", "no polling"):
        assert phrase in text
    repeat = compose(GuidanceInput(workers_empty=False, compose_add_selected=True,
                                   first_install_workflow=False))
    assert g.INSTALL_WORKFLOW_REPEAT in repeat and g.INSTALL_WORKFLOW not in repeat
    assert g.INSTALL_NOTE not in repeat


def test_skills_triggers_and_dropped_capabilities() -> None:
    text = compose(GuidanceInput(workers_empty=False, has_skills=True, has_triggers=True,
                                 dropped=["x", "y"]))
    assert text.endswith("Only the first 18 capabilities were searched; search again for: x, y.")
    assert text.index(g.SKILLS_NOTE) < text.index(g.TRIGGERS_NOTE) < text.index("Only the first")
    assert "directory::skills::get" in g.SKILLS_NOTE
    assert "engine::functions::info" in g.TRIGGERS_NOTE


def test_low_confidence_note_names_each_low_only_capability_once() -> None:
    text = compose(GuidanceInput(workers_empty=False, low_only=["any forecast", "x y",
                                                                  "any forecast"]))
    note = g.LOW_CONFIDENCE_NOTE.format(names='"any forecast", "x y"')
    assert note in text and text.count("Only low-confidence") == 1
    assert text.index(g.MAIN_GUIDANCE) < text.index(note) < text.index(g.LANGUAGE_GUIDANCE)
    assert "Only low-confidence" not in compose(GuidanceInput(workers_empty=False))
