"""Every image the README shows is in the repository (scripts/page_images.py writes them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_readme_image_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme) + re.findall(
        r"<img[^>]+src=\"([^\"]+)\"", readme
    )
    assert images, "the README shows no image"
    for name in ("draft", "accept", "report"):
        assert f"docs/{name}.en.png" in images, f"the README shows no page of the {name}"
    missing = [i for i in images if not (ROOT / i).is_file()]
    assert missing == [], f"README images not found (run scripts/page_images.py): {missing}"
    for i in images:
        assert (ROOT / i).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", i
