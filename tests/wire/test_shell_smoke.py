"""First end-to-end check of the shell: the worker registers and answers through the engine."""

from __future__ import annotations

import pytest

from iii_directory.port import EngineCallError

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]


async def test_engine_functions_info_through_the_wire(wire) -> None:
    info = await wire.call("directory::engine::functions::info", {"function_id": "directory::on-config-change"})
    assert info["function_id"] == "directory::on-config-change"
    assert info["worker_name"] == "iii-directory"
    assert info["metadata"] == {"internal": True}
    assert [t["trigger_type"] for t in info["registered_triggers"]] == ["configuration"]


async def test_coded_error_on_the_wire(wire) -> None:
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::engine::functions::info", {"function_id": "  "})
    assert caught.value.code == "invocation_failed"
    assert caught.value.message == "function_id must be non-empty"
