"""Access to the HubSpot response bodies in `fixtures/hubspot/` and the official OpenAPI specs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURES = REPO_ROOT / "fixtures" / "hubspot"


def load(name: str) -> dict[str, Any]:
    """A fresh copy of the fixture body `name` (without `.json`)."""
    body: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return body


def openapi_dir() -> Path:
    """The folder with HubSpot's official specs: the copy in `fixtures/hubspot-openapi/`."""
    configured = os.environ.get("SMUVES_HUBSPOT_OPENAPI_DIR")
    folder = Path(configured) if configured else REPO_ROOT / "fixtures" / "hubspot-openapi"
    if not folder.is_dir():
        pytest.skip(f"HubSpot OpenAPI specs not found in {folder}")
    return folder
