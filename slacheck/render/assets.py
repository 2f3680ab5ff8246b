"""Where the bundled document assets (stylesheet, images) live; no PDF engine needed."""

from __future__ import annotations

from pathlib import Path

__all__ = ["ASSETS"]

ASSETS = Path(__file__).resolve().parent.parent / "templates" / "assets"
