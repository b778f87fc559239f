"""The file watcher: `{op: "external"}` on-change events for edits made outside this worker
(docs/rules/surfaces.md §12.2–§12.3).

* Roots (fixed for the process lifetime, from the boot settings): `skills_folder`,
  `local_skills_folder` and `agents_folder` (created when missing); `global_agents_folder` and
  the agent-skills roots only when they already exist.
* Only paths ending in `.md` count (so `<name>.md.tmp` staging files never do). A path is judged
  relative to the deepest watched root holding it: skills roots classify it (§3.2: skill →
  skills event, system prompt → system-prompts event, agent / ignored → nothing); agent-profile
  roots count only direct `<id>.md` children (→ agents event); agent-skills roots count every
  markdown file as a skills event.
* Coalescing: after the first notification keep collecting for 300 ms, then judge each path
  once and fire `{op: "external"}` once per kind collected.
* A directory that appeared (`mkdir -p ns && cp …`, `cp -r bundle skills/`) is walked at the end
  of the window: files written into it before the recursive watch reached it are judged too.
* Self-write suppression: a path this worker wrote or deleted within the last 5 s is skipped,
  its mark consumed on first sighting; so the worker's own writes produce only their precise op.
* The listing rows (`skill_listing`) and the body index (`body_index`) are filled once when
  watching starts; after each window the body index re-reads the skill paths it saw
  (self-writes included), again `FINE_SETTLE_NS` later for those still too fresh to keep, so
  the first body search after an edit reads nothing. Calls validate every entry by `stat`
  anyway: the watcher only keeps them warm.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from ..atomic import SelfWrites
from .body_index import BodyIndex
from .roots import Kind, WatchRoot, classify, relative_parts, walk_markdown, watch_roots
from .skill_listing import ListingRows, wire_rows
from .skills import RowFactsCache
from .skills_view import build_view
from .staging_sweep import sweep_roots
from .stat_cache import FINE_SETTLE_NS

if TYPE_CHECKING:
    from ..runtime import Runtime

log = logging.getLogger(__name__)

WINDOW_S = 0.3
MAX_WALKED_PER_WINDOW = 10_000
SKILLS_EVENT = "directory::skills::on-change"
PROMPTS_EVENT = "directory::system-prompts::on-change"
AGENTS_EVENT = "directory::agents::on-change"
EVENT_ORDER = (SKILLS_EVENT, PROMPTS_EVENT, AGENTS_EVENT)
EXTERNAL = {"op": "external"}


@dataclass
class _Batch:
    """Changed paths of one notification batch; `added` are the ones reported as created."""

    paths: set[Path] = field(default_factory=set)
    added: set[Path] = field(default_factory=set)


@dataclass(frozen=True)
class _Root:
    spec: WatchRoot
    forms: tuple[Path, ...]
    """The root as configured and with symlinks resolved (notifications may use either)."""


class PathJudge:
    """Maps a changed path to the trigger type it concerns (or None)."""

    def __init__(self, roots: Iterable[WatchRoot]) -> None:
        judged = []
        for spec in roots:
            forms = [spec.path]
            try:
                real = spec.path.resolve()
            except (OSError, RuntimeError):
                real = spec.path
            if real != spec.path:
                forms.append(real)
            judged.append(_Root(spec, tuple(forms)))
        self._roots = judged

    def __call__(self, path: Path) -> str | None:
        if not path.name.endswith(".md"):
            return None
        best: tuple[int, WatchRoot, tuple[str, ...]] | None = None
        for root in self._roots:
            for form in root.forms:
                parts = relative_parts(form, path)
                if parts and (best is None or len(form.parts) > best[0]):
                    best = (len(form.parts), root.spec, parts)
        if best is None:
            return None
        _, spec, parts = best
        if spec.role == "agents":
            return AGENTS_EVENT if len(parts) == 1 else None
        if spec.role == "agent_skills":
            return SKILLS_EVENT
        kind = classify(parts)
        if kind is Kind.SKILL:
            return SKILLS_EVENT
        if kind is Kind.SYSTEM_PROMPT:
            return PROMPTS_EVENT
        return None


def external_events(paths: Iterable[Path], judge: Callable[[Path], str | None],
                    marks: SelfWrites) -> list[str]:
    """The trigger types to notify for one window: each path judged once, self-writes skipped
    (their marks consumed), one entry per kind in a fixed order."""
    kinds = set()
    for path in sorted(set(paths)):
        kind = judge(path)
        if kind is None:
            continue
        if marks.consume(path):
            continue
        kinds.add(kind)
    return [kind for kind in EVENT_ORDER if kind in kinds]


def expand_new_directories(added: Iterable[Path], limit: int = MAX_WALKED_PER_WINDOW) -> set[Path]:
    """The markdown files now under directories reported as added (bounded)."""
    found: set[Path] = set()
    for path in added:
        if path.name.endswith(".md") or not path.is_dir() or path.is_symlink():
            continue
        for item in walk_markdown(path):
            found.add(item.path)
            if len(found) >= limit:
                return found
    return found


class SkillsWatcher:
    """One per Directory (`directory.service(SkillsWatcher)`); `start()` / `stop()` are the
    Surface hooks."""

    def __init__(self, directory: Runtime) -> None:
        self._directory = directory
        self._task: asyncio.Task[None] | None = None
        self._stop: anyio.Event | None = None
        self.window_s = WINDOW_S
        self.roots: list[WatchRoot] = []
        self.windows = 0
        """Coalescing windows judged so far (lets tests wait for a burst to be processed)."""

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def _prepare_roots(self) -> list[WatchRoot]:
        ready = []
        for root in watch_roots(self._directory.boot_settings):
            if root.create:
                try:
                    root.path.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    log.warning("watcher: cannot create %s: %s; not watched", root.path, exc)
                    continue
            if root.path.is_dir():
                ready.append(root)
        return ready

    async def start(self) -> None:
        if self.running:
            return
        self.roots = self._prepare_roots()
        if not self.roots:
            log.warning("watcher: no root to watch; external changes will not be reported")
            return
        self._stop = anyio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(self._stop))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if self._stop is not None:
            self._stop.set()
        if task is not None:
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping must not fail
                pass

    async def _run(self, stop: anyio.Event) -> None:
        send, receive = anyio.create_memory_object_stream[_Batch](max_buffer_size=math.inf)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._pump, send, stop)
                group.start_soon(self._build_index)
                await self._coalesce(receive)
        except Exception as exc:  # noqa: BLE001 - a watcher failure only disables the watcher
            log.warning("watcher stopped: %s", exc)

    async def _pump(self, send: ObjectSendStream[_Batch], stop: anyio.Event) -> None:
        from ..lazy import import_watchfiles

        watchfiles = import_watchfiles()
        Change, awatch = watchfiles.Change, watchfiles.awatch

        paths = [str(root.path) for root in self.roots]
        async with send:
            async for changes in awatch(
                *paths, stop_event=stop, watch_filter=None, debounce=int(self.window_s * 1000),
                step=20, recursive=True, ignore_permission_denied=True,
            ):
                batch = _Batch()
                for change, path in changes:
                    batch.paths.add(Path(path))
                    if change == Change.added:
                        batch.added.add(Path(path))
                await send.send(batch)

    async def _coalesce(self, receive: ObjectReceiveStream[_Batch]) -> None:
        judge = PathJudge(self.roots)
        marks = self._directory.self_writes
        async with receive:
            async for first in receive:
                window = _Batch(set(first.paths), set(first.added))
                with anyio.move_on_after(self.window_s):
                    async for more in receive:
                        window.paths |= more.paths
                        window.added |= more.added
                paths = window.paths | await anyio.to_thread.run_sync(
                    expand_new_directories, window.added
                )
                skill_paths = [path for path in paths if judge(path) == SKILLS_EVENT]
                for trigger_type in external_events(paths, judge, marks):
                    self._directory.engine.emit(trigger_type, dict(EXTERNAL))
                await self._refresh_index(skill_paths)
                self.windows += 1

    async def _build_index(self) -> None:
        """Fill the listing rows (with the row facts under them) and the body index for the
        skills of the boot settings, once, off the loop, once the directory's first-answer gate
        is open (`first_answer.py`): the page's first `skills::list` and first body search
        then read no file."""
        directory = self._directory
        await directory.first_answer.wait()  # not beside a warm restart's first search (first_answer.py)
        index = directory.service(BodyIndex)
        rows = directory.service(ListingRows)

        def build() -> int:
            view = build_view(directory.boot_settings, None, directory.service(RowFactsCache))
            wire_rows(view, rows, index)
            return index.build(file.path for file in view.files)

        try:  # a stop does not wait for the reads: what the thread still stores is validated on use
            await anyio.to_thread.run_sync(build, abandon_on_cancel=True)
        except Exception as exc:  # noqa: BLE001 - the index also fills on demand
            log.warning("watcher: body index not built: %s", exc)

    async def _refresh_index(self, paths: list[Path]) -> None:
        """Bring the body index up to date with the skill files of one window."""
        if not paths:
            return
        index = self._directory.service(BodyIndex)
        fresh = await anyio.to_thread.run_sync(index.refresh, paths)
        if fresh:
            await anyio.sleep(FINE_SETTLE_NS / 1e9)
            await anyio.to_thread.run_sync(index.refresh, fresh)


async def start_watcher(directory: Runtime) -> None:
    """Surface `on_start` hook: sweep stale staging files left by killed writes out of the
    writable roots (`staging_sweep`), then watch the roots of the boot settings."""
    await anyio.to_thread.run_sync(sweep_roots, directory.boot_settings)
    await directory.service(SkillsWatcher).start()


async def stop_watcher(directory: Runtime) -> None:
    """Surface `on_stop` hook."""
    await directory.service(SkillsWatcher).stop()
