"""The README stays short enough for a newcomer to read in ten minutes; reference text lives
next to what it documents (migrations/README.md, scripts/README.md and the packages' own)."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
MAX_LINES = 500


def test_the_readme_has_at_most_500_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines, at most {MAX_LINES}"
