"""Error bodies on the wire (protocol.md §8)."""

from __future__ import annotations

from iii_directory.errors import DirectoryError, not_found
from iii_directory.port import EngineCallError as PortError
from iii_directory.protocol.errors import EngineCallError, error_body_of


def test_port_reexports_the_protocol_error() -> None:
    assert PortError is EngineCallError


def test_coded_directory_error_keeps_code_and_message() -> None:
    error = not_found("D110", "skill", "x")
    assert error_body_of(error) == {"code": "D110", "message": 'D110 not_found: skill "x" does not exist.'}
    assert error_body_of(DirectoryError.plain("id must be non-empty")) == {
        "code": "invocation_failed", "message": "id must be non-empty"}


def test_other_exceptions_become_invocation_failed_without_stacktrace() -> None:
    assert error_body_of(RuntimeError("boom")) == {"code": "invocation_failed", "message": "boom"}
    assert error_body_of(KeyError()) == {"code": "invocation_failed", "message": "KeyError"}


def test_engine_call_error_round_trip_and_lenient_bodies() -> None:
    error = EngineCallError("TIMEOUT", "invocation timed out after 500ms")
    assert str(error) == "TIMEOUT: invocation timed out after 500ms"
    assert EngineCallError.from_body(error.to_body()).to_body() == error.to_body()
    assert EngineCallError.from_body("bare").to_body() == {"code": "invocation_failed", "message": "bare"}
    assert EngineCallError.from_body({"message": "m"}).code == "invocation_failed"
