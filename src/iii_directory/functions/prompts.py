"""Surface module `prompts` (being built; see the issue that owns it)."""

from __future__ import annotations

from ..table import Surface

SURFACE = Surface()
