"""A write-heavy driver process for the SIGKILL tests:
`python crash_driver.py PROJECT REGISTRY_URL RUN JOURNAL`.

It runs the worker's functions in-process (`Directory.invoke`, Compose scripted by
`kitfake.FakeComposeEngine`, kits from the test's `MockRegistry`) in an endless loop, until the
test kills it:

* skills create → update → update → delete on `crash/r<RUN>-s<k>` (k cycles over 4 ids);
* `agents::functions::add` of `fn-<n>` to its own profile `helper-r<RUN>` (created first);
* the kit `acme/team`: install (`download-kit` + `apply`) when `kits.lock` lacks it, else
  remove (`kits::remove` + `apply`), following `replanned` answers.

Before each skill write it appends an intent line `{"intent", "path", "sha"}` (sha of the
content, `null` for a delete) to JOURNAL, fsynced, and after the answer `{"ack"}`, so the test
can tell which contents a file may hold. The profile's creation is journaled as
`{"intent": "agent-create", "agent"}` and each `functions::add` as
`{"intent": "functions", "agent", "n"}`. A `DirectoryError` is journaled as `{"error"}` and
the loop goes on; any other exception ends the process with a traceback (a crash).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.kits.lock import read_lock

KIT = "acme/team"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def settings_for(project: Path, registry_url: str) -> Settings:
    return Settings(
        skills_folder=str(project / "skills"),
        local_skills_folder=str(project / "skills" / "iii"),
        agents_folder=str(project / "agents"),
        agents_skills_folder=str(project / ".agents" / "skills"),
        filter_unregistered=False,
        auto_download=False,
        registry_url=registry_url,
        function_search_mode="lexical",
    )


def skill_content(run: int, k: int, version: int) -> str:
    """A document big enough that a torn write would show (about 40 KB)."""
    line = f"Run {run} skill {k} version {version}. " * 4 + "\n"
    return f"# Crash {run}-{k} v{version}\n\n" + line * 220


class Driver:
    def __init__(self, project: Path, registry_url: str, run: int, journal: Path) -> None:
        from kitfake import FakeComposeEngine

        self.project, self.run = project, run
        self.journal = open(journal, "a", encoding="utf-8")  # noqa: SIM115 - held for the process
        self.directory = Directory(settings=settings_for(project, registry_url), engine=FakeComposeEngine())

    def log(self, **entry: Any) -> None:
        self.journal.write(json.dumps(entry) + "\n")
        self.journal.flush()
        os.fsync(self.journal.fileno())

    async def call(self, function_id: str, data: dict[str, Any]) -> Any:
        try:
            return await self.directory.invoke(function_id, data)
        except DirectoryError as exc:
            self.log(error=exc.code, function=function_id, message=exc.message[:300])
            return None

    async def skill_step(self, k: int, step: int) -> None:
        skill_id = f"crash/r{self.run}-s{k}"
        path = f"skills/{skill_id}.md"
        if step == 3:
            self.log(intent="delete", path=path, sha=None)
            await self.call("directory::skills::delete", {"id": skill_id})
        else:
            content = skill_content(self.run, k, step)
            self.log(intent="write", path=path, sha=sha(content))
            function = "directory::skills::create" if step == 0 else "directory::skills::update"
            await self.call(function, {"id": skill_id, "content": content})
        self.log(ack=path)

    async def functions_step(self, n: int) -> None:
        agent = f"helper-r{self.run}"
        if n == 0:
            content = f"---\nname: Helper {self.run}\ndescription: Crash helper.\n---\nYou help.\n"
            self.log(intent="agent-create", agent=agent)
            await self.call("directory::agents::create", {"id": agent, "content": content})
            self.log(ack=f"agents/{agent}.md")
        self.log(intent="functions", agent=agent, n=n)
        await self.call("directory::agents::functions::add", {"id": agent, "functions": [f"fn-{n}"]})
        self.log(ack=f"functions:{agent}:{n}")

    async def kit_step(self) -> None:
        installed = read_lock(self.project).get(KIT) is not None
        if installed:
            answer = await self.call("directory::kits::remove", {"kit": KIT})
        else:
            answer = await self.call("directory::download-kit", {"kit": f"{KIT}@^1"})
        for _ in range(3):
            if not answer or answer.get("status") not in ("planned", "replanned") or not answer.get("plan"):
                break
            self.log(intent="kit-apply", plan=answer["plan"]["plan_id"], kind=answer["plan"]["kind"])
            answer = await self.call("directory::kits::apply", {"plan_id": answer["plan"]["plan_id"]})
        self.log(ack="kit", status=(answer or {}).get("status"))

    async def loop(self) -> None:
        self.log(started=self.run, pid=os.getpid())
        counter = 0
        while True:
            await self.skill_step(counter % 4, (counter // 4) % 4)
            if counter % 3 == 0:
                await self.functions_step(counter // 3)
            if counter % 5 == 0:
                await self.kit_step()
            counter += 1


def main(argv: list[str]) -> int:
    project, registry_url, run, journal = Path(argv[0]), argv[1], int(argv[2]), Path(argv[3])
    os.chdir(project)
    driver = Driver(project, registry_url, run, journal)
    anyio.run(driver.loop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
