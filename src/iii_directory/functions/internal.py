"""Internal handler `directory::on-config-change` (docs/rules/surfaces.md §2.3, §10.4).

The handler ignores its payload (a public bus function cannot trust it) and re-reads the entry
with `configuration::get`:
* fetch error → logged, the previous configuration stays;
* a value that does not parse → rejected with a log naming the field, the previous stays;
* any topology field differs from the boot snapshot → `restart required` warning, the previous
  configuration stays entirely (tunables are not partially applied);
* otherwise the new settings go live (`Directory.apply_settings`; listeners clear their caches)
  and every binding whose `enabled(settings)` or config changed is bound or unbound.
It always answers `{"ok": true}`.
"""

from __future__ import annotations

import logging

from ..config import InvalidSettings, Settings, config_id
from ..config_boot import ConfigCallFailed, fetch_settings
from ..context import Context
from ..models import Empty, Ok
from ..port import EngineCallError
from ..runtime import Runtime
from ..table import BindingSpec, FunctionSpec, Surface

log = logging.getLogger("iii_directory.config")

ON_CONFIG_CHANGE = "directory::on-config-change"
ON_CONFIG_CHANGE_DESCRIPTION = (
    "Internal: reload tunable iii-directory settings from the authoritative configuration when it changes."
)


def topology_changes(boot: Settings, new: Settings) -> list[str]:
    """Topology fields whose values differ from the boot snapshot."""
    return boot.topology_changes(new)


async def rebind(directory: Runtime, old: Settings, new: Settings) -> None:
    """Bind or unbind every binding whose enablement or config differs between two settings."""
    for binding in directory.table.bindings:
        was, now = binding.enabled(old), binding.enabled(new)
        if was == now and (not now or binding.config(old) == binding.config(new)):
            continue
        await directory.engine.set_binding(binding.key, binding.trigger_type, binding.function_id,
                                           binding.config(new), now)
        log.info("binding %s → %s %s", binding.trigger_type, binding.function_id, "bound" if now else "unbound")


async def reload_settings(directory: Runtime, new: Settings) -> bool:
    """Apply `new` unless it changes a topology field; returns whether it was applied."""
    changed = topology_changes(directory.boot_settings, new)
    if changed:
        log.warning("configuration change to %s ignored: restart required (keeping the previous configuration)",
                    ", ".join(changed))
        return False
    old = directory.settings
    directory.apply_settings(new)
    await rebind(directory, old, new)
    log.info("configuration reloaded")
    return True


async def on_config_change(ctx: Context, _req: Empty) -> Ok:
    try:
        new = await fetch_settings(ctx.call, config_id())
    except InvalidSettings as exc:
        log.error("configuration change rejected: %s; keeping the previous configuration", exc)
        return Ok()
    except (ConfigCallFailed, EngineCallError) as exc:
        log.error("configuration re-fetch failed (%s); keeping the previous configuration", exc)
        return Ok()
    await reload_settings(ctx.directory, new)
    return Ok()


SURFACE = Surface(
    functions=(
        FunctionSpec(
            id=ON_CONFIG_CHANGE,
            description=ON_CONFIG_CHANGE_DESCRIPTION,
            request=Empty,
            response=Ok,
            handler=on_config_change,
            metadata={"internal": True},
        ),
    ),
    bindings=(
        BindingSpec(
            key="configuration",
            trigger_type="configuration",
            function_id=ON_CONFIG_CHANGE,
            config=lambda _settings: {"configuration_id": config_id(), "event_types": ["configuration:updated"]},
        ),
    ),
)
