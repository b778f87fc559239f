"""The per-worker skills overview `directory::skills::index` renders (docs/rules/surfaces.md §6.3).

Input: list rows of the visible set (fresh installed-worker fetch), minus rows whose file lies
under an agent-skills root, in on-disk id order. A row is a **worker overview** when its
frontmatter `type` is `index` or its on-disk id is exactly `<ns>/index`.

Body:

    # Skills index\\n\\n<N> worker(s).\\n
    per overview: \\n## <title>\\n [\\n<description>\\n] \\nFull reference: call
        `directory::skills::get { "id": "<display id>" }` (legacy `iii://<display id>`).\\n
    [\\n(some descriptions omitted to save space; call directory::skills::get for the full
        reference)\\n]

A description is included only while `len(body) + len(description) + 2 ≤ 3000` (UTF-8 bytes,
body as rendered so far); headings and pointers are always written, so every worker is listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .skills import SkillRow

INDEX_BUDGET_BYTES = 3000
OMITTED_NOTE = (
    "\n(some descriptions omitted to save space; call directory::skills::get for the full "
    "reference)\n"
)
_OVERVIEW_ID = re.compile(r"^[^/]+/index\Z")


def is_worker_overview(row: SkillRow) -> bool:
    return row.type == "index" or bool(_OVERVIEW_ID.match(row.on_disk_id))


@dataclass(frozen=True)
class RenderedIndex:
    body: str
    workers_count: int


def render_index(rows: Iterable[SkillRow]) -> RenderedIndex:
    overviews = [row for row in rows if is_worker_overview(row)]
    parts = [f"# Skills index\n\n{len(overviews)} worker(s).\n"]
    size = len(parts[0].encode("utf-8"))
    omitted = False

    def add(text: str) -> None:
        nonlocal size
        parts.append(text)
        size += len(text.encode("utf-8"))

    for row in overviews:
        add(f"\n## {row.title}\n")
        description = row.description
        if description:
            if size + len(description.encode("utf-8")) + 2 <= INDEX_BUDGET_BYTES:
                add(f"\n{description}\n")
            else:
                omitted = True
        add(
            f'\nFull reference: call `directory::skills::get {{ "id": "{row.id}" }}` '
            f"(legacy `iii://{row.id}`).\n"
        )
    if omitted:
        add(OMITTED_NOTE)
    return RenderedIndex("".join(parts), len(overviews))
