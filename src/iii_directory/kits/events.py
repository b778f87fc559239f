"""Trigger types the kits surface provides (kept apart from `kits.service`, so registering the
function table does not import the kit flows)."""

from __future__ import annotations

KITS_ON_CHANGE = "directory::kits::on-change"
