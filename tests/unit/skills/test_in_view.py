"""`skills.in_view`: the visible set and the work on it in one worker thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.context import Context
from iii_directory.content import skills
from iii_directory.directory import Directory


def context_counting_hops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Context, list[object]]:
    """A context over `tmp_path/s` and the list every `anyio.to_thread.run_sync` call lands in."""
    import anyio.to_thread

    settings = Settings(skills_folder=str(tmp_path / "s"), local_skills_folder=str(tmp_path / "s" / "iii"),
                        agents_folder=str(tmp_path / "a"), agents_skills_folder=str(tmp_path / "as"),
                        global_agents_skills_folder=str(tmp_path / "g"), filter_unregistered=False)
    hops: list[object] = []
    real = anyio.to_thread.run_sync

    async def counting(func, *args, **kwargs):
        hops.append(func)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting)
    return Directory(settings=settings).context(), hops


async def test_the_scan_and_the_work_share_one_thread_hop(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "s" / "mail").mkdir(parents=True)
    (tmp_path / "s" / "mail" / "index.md").write_text("# Mail\n\nSend mail.\n")
    ctx, hops = context_counting_hops(tmp_path, monkeypatch)
    off_loop, ids = await skills.in_view(
        ctx, lambda view: (threading.current_thread() is not threading.main_thread(),
                           [f.id for f in view.files]))
    assert off_loop and ids == ["mail/index"] and len(hops) == 1
    rows = await skills.in_view(ctx, skills.list_rows)
    assert [r.id for r in rows] == ["mail"] and len(hops) == 2
    assert [f.id for f in (await skills.load_view(ctx)).files] == ["mail/index"]


async def test_get_reads_an_on_disk_skill_in_the_same_hop_as_the_scan(tmp_path: Path, monkeypatch) -> None:
    from iii_directory.functions.skills import GetSkillInput, get_skill

    (tmp_path / "s" / "mail").mkdir(parents=True)
    (tmp_path / "s" / "mail" / "index.md").write_text("---\ntitle: Mail\n---\n# Mail\n\nSend mail.\n")
    ctx, hops = context_counting_hops(tmp_path, monkeypatch)
    answer = await get_skill(ctx, GetSkillInput(id="mail/index"))
    assert (answer["id"], answer["title"], answer["body"].strip()) == ("mail", "Mail", "# Mail\n\nSend mail.")
    assert answer["modified_at"] and len(hops) == 1
    overview = await get_skill(ctx, GetSkillInput(id="mail"))  # `<id>/index`: still on disk
    assert overview["id"] == "mail" and len(hops) == 2
