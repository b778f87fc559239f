"""The worker's console UI: the asset table (`assets`) and the hand-written files it serves
(`dist/page.js`, `dist/module.js`, `dist/styles.css`; docs/rules/console.md §3)."""

from __future__ import annotations

from .assets import ASSETS, UiAsset

__all__ = ["ASSETS", "UiAsset"]
