"""A Directory serving only the system-prompt and agent surfaces, so these tests do not depend
on other surfaces' modules."""

from __future__ import annotations

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.functions import agents, prompts
from iii_directory.port import StandaloneEngine
from iii_directory.table import FunctionTable


@pytest.fixture
def directory(settings: Settings, engine: StandaloneEngine) -> Directory:
    table = FunctionTable.merge([prompts.SURFACE, agents.SURFACE])
    return Directory(settings=settings, engine=engine, table=table)
