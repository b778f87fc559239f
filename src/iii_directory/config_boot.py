"""Reading the configuration entry through the engine's configuration worker (docs/rules/surfaces.md §2.3).

Boot: `configuration::get` → `configuration::register` (with `initial_value` only when seeding)
→ `configuration::get`. Seeding uses the `--config` YAML seed when one was read and is valid,
else the built-in defaults, but the defaults only when the first `get` reported `NOT_FOUND` or a
`null` value (a stored value is authoritative). Every configuration call gets up to 3 attempts
with a 5 s timeout each, sleeping 250 ms × attempt in between; the final error reads
`<function> failed after 3 attempts: <last error>`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from .config_base import SeedUnreadable, read_seed  # noqa: F401  (re-exported)
from .config import CONFIG_DESCRIPTION, CONFIG_NAME, InvalidSettings, Settings, config_schema, load_settings
from .port import EngineCallError

log = logging.getLogger("iii_directory.config")

Caller = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    timeout_s: float = 5.0
    sleep_s: float = 0.25
    """Sleep before retry `n` (1-based) is `sleep_s × n`."""


class ConfigCallFailed(Exception):
    """A configuration call failed on every attempt."""


def is_not_found(exc: EngineCallError) -> bool:
    """`NOT_FOUND` in the error's code or text."""
    return "NOT_FOUND" in exc.code or "NOT_FOUND" in exc.message


async def config_call(call: Caller, function_id: str, data: dict[str, Any],
                      policy: RetryPolicy = RetryPolicy()) -> Any:
    """One configuration call with the retry policy. A `NOT_FOUND` answer is definitive and
    raised as the EngineCallError itself (not retried)."""
    last: Exception | None = None
    for attempt in range(1, policy.attempts + 1):
        try:
            return await call(function_id, data, timeout=policy.timeout_s)
        except EngineCallError as exc:
            if is_not_found(exc):
                raise
            last = exc
        if attempt < policy.attempts:
            await anyio.sleep(policy.sleep_s * attempt)
    raise ConfigCallFailed(f"{function_id} failed after {policy.attempts} attempts: {last}")


def valid_seed(seed: dict[str, Any] | None) -> dict[str, Any] | None:
    """The seed when it describes valid settings; otherwise None with a warning."""
    if seed is None:
        return None
    try:
        load_settings(seed)
    except InvalidSettings as exc:
        log.warning("config seed rejected (%s); relying on existing configuration entry", exc)
        return None
    return seed


def _value_of(answer: Any) -> Any:
    return answer.get("value") if isinstance(answer, dict) else None


async def boot_settings(call: Caller, config_id: str, seed: dict[str, Any] | None,
                        policy: RetryPolicy = RetryPolicy()) -> Settings:
    """Register the configuration entry and return the live settings.

    Raises `InvalidSettings` when the stored value does not parse (fatal at boot). When the
    configuration worker cannot be reached, logs an error and serves with the seed (or the
    built-in defaults)."""
    seed = valid_seed(seed)
    try:
        needs_seed = False
        try:
            first = await config_call(call, "configuration::get", {"id": config_id}, policy)
            needs_seed = _value_of(first) is None
        except EngineCallError:
            needs_seed = True
        registration: dict[str, Any] = {
            "id": config_id, "name": CONFIG_NAME, "description": CONFIG_DESCRIPTION, "schema": config_schema(),
        }
        if seed is not None:
            registration["initial_value"] = seed
        elif needs_seed:
            registration["initial_value"] = Settings().model_dump(mode="json")
        await config_call(call, "configuration::register", registration, policy)
        value = _value_of(await config_call(call, "configuration::get", {"id": config_id}, policy))
    except (ConfigCallFailed, EngineCallError) as exc:
        log.error("configuration worker unavailable (%s); serving with %s", exc,
                  "the --config seed" if seed is not None else "built-in defaults")
        return load_settings(seed)
    settings = load_settings(value)
    log.info("configuration %r loaded", config_id)
    return settings


async def fetch_settings(call: Caller, config_id: str, policy: RetryPolicy = RetryPolicy()) -> Settings:
    """Re-read the live value (hot reload). Raises ConfigCallFailed / EngineCallError when the
    fetch fails and InvalidSettings when the value does not parse."""
    value = _value_of(await config_call(call, "configuration::get", {"id": config_id}, policy))
    return load_settings(value)
