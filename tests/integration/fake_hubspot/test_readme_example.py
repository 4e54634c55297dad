"""The fake HubSpot's README: its example of tests against the fake runs as written."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

README = Path(__file__).parents[3] / "smuves_sync" / "testing" / "fake_hubspot" / "README.md"


def readme_example() -> str:
    """The first python block of the fake's README."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert found is not None, f"no python block in {README}"
    return found.group(1)


async def test_the_readme_example_of_testing_against_the_fake_passes() -> None:
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(readme_example(), str(README), "exec"), namespace)
    tests = {name: f for name, f in namespace.items() if name.startswith("test_")}

    assert len(tests) == 2
    for test in tests.values():
        outcome = test()
        if inspect.isawaitable(outcome):
            await outcome
