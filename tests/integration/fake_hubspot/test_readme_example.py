"""The README's example of tests against the fake HubSpot runs as written."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

README = Path(__file__).parents[3] / "README.md"
SECTION = "## Testing against a fake HubSpot"


def readme_example() -> str:
    """The first python block of the README's section on the fake."""
    section = README.read_text(encoding="utf-8").split(SECTION, 1)[1]
    found = re.search(r"^```python\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert found is not None, f"no python block under {SECTION!r}"
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
