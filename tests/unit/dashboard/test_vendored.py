"""The vendored JavaScript is the pinned npm builds, with their licences, and the pages use it."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import smuves_sync.dashboard

PACKAGE = Path(smuves_sync.dashboard.__file__).parent
VENDOR = PACKAGE / "static" / "vendor"


def test_each_vendored_file_matches_the_sum_its_readme_records() -> None:
    readme = (VENDOR / "README.md").read_text()
    sums = dict(
        (name, digest)
        for digest, name in re.findall(r"^\s+([0-9a-f]{64})\s+(\S+)$", readme, re.MULTILINE)
    )
    scripts = sorted(p.name for p in VENDOR.glob("*.js"))
    assert scripts == ["htmx-2.0.11.min.js", "htmx-ext-sse-2.2.4.min.js"]
    for name in scripts:
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == sums[name], name
        licence = VENDOR / name.replace(".min.js", ".LICENSE")
        assert "Permission to use, copy, modify" in licence.read_text(), licence.name


def test_the_layout_loads_only_vendored_scripts() -> None:
    layout = (PACKAGE / "templates" / "base.html").read_text()
    sources = re.findall(r'<script src="([^"]+)"', layout)
    assert sources == [
        "/static/vendor/htmx-2.0.11.min.js",
        "/static/vendor/htmx-ext-sse-2.2.4.min.js",
    ]
    assert "http" not in " ".join(sources)
    # No inline script or event handler anywhere: the Content-Security-Policy allows none.
    for template in (PACKAGE / "templates").glob("*.html"):
        text = template.read_text()
        assert "<script>" not in text, template.name
        assert not re.search(r"<[^>]*\son[a-z]+\s*=", text), template.name
