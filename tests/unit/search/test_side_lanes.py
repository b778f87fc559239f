"""When the skills side lane scans on the event loop and when in a worker thread."""

from __future__ import annotations


import pytest

from iii_directory.search.side_lanes import INLINE_SCAN_S, ScanCost


class FakeClock:
    """A `perf_counter` stand-in: scans advance it by exactly what the test says they took."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def scan(self, seconds: float, value: object = None) -> object:
        self.now += seconds
        return value


def test_scan_cost_runs_quick_scans_inline() -> None:
    clock = FakeClock()
    cost = ScanCost(clock=clock)
    assert not cost.inline  # unknown: the first scan goes to a thread
    assert cost.timed(lambda: clock.scan(INLINE_SCAN_S / 10, 7)) == 7
    assert cost.inline and cost.seconds == pytest.approx(INLINE_SCAN_S / 10)
    cost.timed(lambda: clock.scan(INLINE_SCAN_S * 2))
    assert cost.inline  # one slow scan moves the average by a quarter only
    assert cost.seconds == pytest.approx(0.75 * INLINE_SCAN_S / 10 + 0.25 * INLINE_SCAN_S * 2)
    for _ in range(6):
        cost.timed(lambda: clock.scan(INLINE_SCAN_S * 2))
    assert not cost.inline  # scans that keep being slow go back to the thread
    for _ in range(20):
        cost.timed(lambda: clock.scan(0.0))
    assert cost.inline  # and come back inline once they are quick again


def test_scan_cost_reads_the_real_clock_by_default() -> None:
    cost = ScanCost()
    assert cost.timed(lambda: 7) == 7
    assert cost.seconds is not None and cost.seconds >= 0.0


def test_a_failing_scan_is_timed_too() -> None:
    cost = ScanCost()
    with pytest.raises(ZeroDivisionError):
        cost.timed(lambda: 1 / 0)
    assert cost.seconds is not None


async def test_scans_go_to_a_thread_while_search_calls_overlap(tmp_path) -> None:
    import threading

    from iii_directory.config import Settings
    from iii_directory.directory import Directory
    from iii_directory.search import side_lanes
    from iii_directory.search.call import SearchCall
    from iii_directory.search.ranking.corpus import Corpus
    from iii_directory.encoder.dense_lane import DenseLane
    from iii_directory.search.judge import Judge

    empty = tmp_path / "none"
    settings = Settings(skills_folder=str(empty / "s"), local_skills_folder=str(empty / "s" / "iii"),
                        agents_folder=str(empty / "a"), agents_skills_folder=str(empty / "as"),
                        global_agents_skills_folder=str(empty / "g"), filter_unregistered=False)
    directory = Directory(settings=settings)
    seen: list[bool] = []
    real = side_lanes.visible_skills

    def spy(*args):
        seen.append(threading.current_thread() is threading.main_thread())
        return real(*args)

    side_lanes.visible_skills = spy
    try:
        directory.service(ScanCost).seconds = 0.0001  # quick scans so far
        for concurrent in (False, True):
            call = SearchCall(ctx=directory.context(), settings=settings, corpus=Corpus.empty(),
                              dense=DenseLane(), judge=Judge(), judge_active=False, deadline=0.0,
                              concurrent=concurrent)
            await side_lanes.load_skills(call)
    finally:
        side_lanes.visible_skills = real
    assert seen == [True, False]  # inline when alone, in a worker thread when calls overlap


def _skills_settings(root):
    from iii_directory.config import Settings

    return Settings(skills_folder=str(root / "s"), local_skills_folder=str(root / "s" / "iii"),
                    agents_folder=str(root / "a"), agents_skills_folder=str(root / "as"),
                    global_agents_skills_folder=str(root / "g"), filter_unregistered=False)


def test_visible_skills_are_the_list_rows_the_model_may_use(tmp_path) -> None:
    from iii_directory.content.skills import RowFactsCache, build_view, list_rows
    from iii_directory.search.side_lanes import visible_skills

    folder = tmp_path / "s" / "mail"
    folder.mkdir(parents=True)
    (folder / "index.md").write_text("---\ntitle: Mail\n---\n# Mail\n\nSend and read mail.\n")
    (folder / "hidden.md").write_text("---\ndisable-model-invocation: true\n---\n# Hidden\n\nNot for models.\n")
    (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n\nBad frontmatter.\n")
    (folder / "empty.md").write_text("---\ntitle: Empty\n---\n\n")
    settings = _skills_settings(tmp_path)
    facts = RowFactsCache()
    entries = visible_skills(settings, None, facts)
    rows = {row.id: row for row in list_rows(build_view(settings, None, facts))}
    assert [e.id for e in entries] == [r.id for r in rows.values() if not r.disable_model_invocation]
    for entry in entries:  # the same title and description as the list row shows
        assert (entry.title, entry.description) == (rows[entry.id].title, rows[entry.id].description)
    assert "mail/hidden" not in [e.id for e in entries]


def test_visible_skills_see_every_edit_and_share_unchanged_entries(tmp_path) -> None:
    from iii_directory.content.skills import RowFactsCache
    from iii_directory.search.side_lanes import visible_skills

    folder = tmp_path / "s" / "mail"
    folder.mkdir(parents=True)
    doc = folder / "index.md"
    doc.write_text("---\ntitle: Mail\n---\n# Mail\n\nSend mail.\n")
    settings = _skills_settings(tmp_path)
    facts = RowFactsCache()
    first = visible_skills(settings, None, facts)
    assert visible_skills(settings, None, facts)[0] is first[0]  # unchanged: the same entry
    doc.write_text("---\ntitle: Post\n---\n# Post\n\nSend letters.\n")  # an edit right away
    edited = visible_skills(settings, None, facts)
    assert (edited[0].title, edited[0].description) == ("Post", "Send letters.")
    doc.write_text("---\ndisable-model-invocation: true\n---\n# Post\n\nSend letters.\n")
    assert visible_skills(settings, None, facts) == []


def test_skill_documents_reuse_the_documents_of_unchanged_entries() -> None:
    from iii_directory.search.ranking.corpus import DocumentSetCache, document_terms, index_terms
    from iii_directory.search.side_lanes import SkillEntry, skill_documents

    import _rank

    cache = DocumentSetCache()
    a, b = SkillEntry("mail/index", "Mail", "Send mail."), SkillEntry("sms/index", "Texts", "Send a text.")
    one = skill_documents([a, b], cache)
    two = skill_documents([a], cache)
    assert two.documents[0] is one.documents[0]
    three = skill_documents([SkillEntry("mail/index", "Mail", "Send mail."), b], cache)
    assert three is one  # equal entries, the same shared set
    text = one.documents[0].lexical
    assert list(document_terms(text)) == index_terms(_rank.tokenize(text))


def test_the_same_entry_objects_find_their_set_without_building_documents() -> None:
    """`DocumentSetCache.of_entries`: the very same entry objects find their set by identity
    (no document is built or hashed); equal but new entries still find the equal set; the set
    keeps its entries, so a freed entry's id is never mistaken for another's."""
    from iii_directory.search.ranking.corpus import DocumentSetCache
    from iii_directory.search.side_lanes import SkillEntry, skill_document

    built: list[object] = []

    def document(entry: SkillEntry):  # type: ignore[no-untyped-def]
        built.append(entry)
        return skill_document(entry)

    cache = DocumentSetCache()
    entries = [SkillEntry("mail/index", "Mail", "Send mail."), SkillEntry("sms/index", "Texts", "Send a text.")]
    first = cache.of_entries(entries, document)
    assert len(built) == 2
    assert cache.of_entries(list(entries), document) is first and len(built) == 2
    equal = [SkillEntry("mail/index", "Mail", "Send mail."), SkillEntry("sms/index", "Texts", "Send a text.")]
    assert cache.of_entries(equal, document) is first and len(built) == 4  # built, then shared
    other = cache.of_entries(entries[:1], document)
    assert other is not first and [d.id for d in other.documents] == ["mail/index"]


def test_an_entry_set_goes_with_its_view() -> None:
    """`VisibleEntries` holds its views weakly: a view the skills views no longer keep (a skill
    was written, a newer view replaced it) takes its entry set with it."""
    import gc

    from iii_directory.search.side_lanes import VisibleEntries

    class View:
        files: tuple[object, ...] = ()

    entries = VisibleEntries(clock=lambda: 10**19)
    view = View()
    assert entries.entries(view, lambda *_: None) == []
    assert len(entries._sets) == 1
    del view
    gc.collect()
    assert len(entries._sets) == 0
