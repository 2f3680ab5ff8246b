"""Vendor presets: commented contracts that encode a vendor's published standard terms.

Each preset is a YAML file beside this module whose comments name the source document (title
and date), warn that the signed text prevails, say what the published text leaves open, and
list the clause-review findings the standard terms earn (``# Expected lint findings:``).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

__all__ = ["Preset", "preset", "presets"]

_TITLE = "# Preset: "
_EXPECTED = "# Expected lint findings: "


@dataclass(frozen=True, slots=True)
class Preset:
    """One shipped preset: its name (the file's stem), title and commented YAML text."""

    name: str
    title: str
    text: str

    @property
    def expected_findings(self) -> frozenset[str]:
        """The review codes the preset documents (what `slacheck lint` finds in it)."""
        for line in self.text.splitlines():
            if line.startswith(_EXPECTED):
                return frozenset(c.strip() for c in line[len(_EXPECTED) :].split(","))
        return frozenset()


def presets() -> tuple[Preset, ...]:
    """Every shipped preset, by name."""
    found = []
    for entry in resources.files(__name__).iterdir():
        if not entry.name.endswith(".yaml"):
            continue
        text = entry.read_text(encoding="utf-8")
        title = next(
            (ln[len(_TITLE) :].strip() for ln in text.splitlines() if ln.startswith(_TITLE)), ""
        )
        found.append(Preset(entry.name.removesuffix(".yaml"), title, text))
    return tuple(sorted(found, key=lambda p: p.name))


def preset(name: str) -> Preset | None:
    """The preset called ``name``, or None."""
    return next((p for p in presets() if p.name == name), None)
