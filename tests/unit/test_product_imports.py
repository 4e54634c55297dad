"""Importing the product loads none of its testing aids (smuves_sync.testing).

The import contracts (`lint-imports`, pyproject.toml) read the source; this checks what a fresh
interpreter really loads, which also catches imports made by name (importlib, entry points).
"""

from __future__ import annotations

import json
import subprocess
import sys

PRODUCT_ENTRY_POINTS = ("smuves_sync.cli", "smuves_sync.workers.runner", "smuves_sync.api.app")

_PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""


def test_importing_the_product_loads_nothing_of_smuves_sync_testing() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *PRODUCT_ENTRY_POINTS],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(result.stdout)

    testing_aids = [m for m in loaded if m.split(".")[:2] == ["smuves_sync", "testing"]]

    assert set(PRODUCT_ENTRY_POINTS) <= set(loaded)
    assert testing_aids == []
