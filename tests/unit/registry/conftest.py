"""Fixtures: a live MockRegistry and settings pointing at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.port import StandaloneEngine
from iii_directory.sources.registry import RegistryClient
from iii_directory.table import FunctionTable
from iii_directory.testing.registry import MockRegistry
from wire_checks import direct_loopback  # noqa: F401 - autouse: loopback servers bypass proxies


@pytest.fixture
def registry() -> Iterator[MockRegistry]:
    with MockRegistry(page_size=3) as server:
        yield server


@pytest.fixture
def reg_settings(settings: Settings, registry: MockRegistry) -> Settings:
    return settings.model_copy(update={"registry_url": registry.url, "download_timeout_ms": 2000})


@pytest.fixture
def reg_directory(reg_settings: Settings) -> Directory:
    """A Directory without the function table (the client needs none)."""
    return Directory(settings=reg_settings, engine=StandaloneEngine(), table=FunctionTable.merge([]))


@pytest.fixture
def client(reg_directory: Directory) -> RegistryClient:
    return reg_directory.service(RegistryClient)


