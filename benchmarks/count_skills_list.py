"""`directory::skills::list` calls in process, for instruction counts (docs/console-page.md).

Not a test. One call fills the worker's caches, then `--calls` more run the same request, each
answer JSON-encoded as the transport does. Run it twice under callgrind with different
`--calls` and divide the difference of the totals by the extra calls: what is left is the cost
of one warm call, whatever the import and setup cost.

    python benchmarks/count_skills_list.py --project /tmp/p --skills 5000   # make the project once
    valgrind --tool=callgrind python benchmarks/count_skills_list.py --project /tmp/p --mode page --calls 1
    valgrind --tool=callgrind python benchmarks/count_skills_list.py --project /tmp/p --mode page --calls 4

`--mode page` is the Directory page's first request (descriptions and origins), `--mode body` a
body search that matches nothing (every body is looked at).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

REQUESTS = {
    "page": {"include_description": True, "include_origin": True},
    "body": {"search": "rollout undo", "search_body": True, "include_description": False},
}


def ensure_project(project: Path, skills: int) -> None:
    """The project of `bench_ui_page.py` with `skills` skills, timestamps set 10 s back."""
    if (project / "skills").is_dir():
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_ui_page import make_project

    made = make_project(project.parent / (project.name + ".tmp"), skills)
    made.rename(project)
    made.parent.rmdir()
    past = time.time() - 10
    for path in project.rglob("*"):
        os.utime(path, (past, past))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--skills", type=int, default=5000)
    parser.add_argument("--mode", choices=sorted(REQUESTS), default="page")
    parser.add_argument("--calls", type=int, default=0)
    args = parser.parse_args()
    ensure_project(args.project, args.skills)
    if args.calls <= 0:
        return
    from iii_directory.config import Settings
    from iii_directory.directory import Directory

    project = args.project
    settings = Settings(
        skills_folder=str(project / "skills"), local_skills_folder=str(project / "local"),
        agents_folder=str(project / "agents"), agents_skills_folder=str(project / "none"),
        global_agents_skills_folder=str(project / "none"), filter_unregistered=False)
    directory = Directory(settings=settings)
    loop = asyncio.new_event_loop()
    for _ in range(1 + args.calls):
        answer = loop.run_until_complete(directory.invoke("directory::skills::list", REQUESTS[args.mode]))
        json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    print(args.mode, len(answer["skills"]), "rows")


if __name__ == "__main__":
    main()
