"""The suite's fixtures live in its plugin, tests/support/plugin.py (its docstring lists them)."""

pytest_plugins = ["tests.support.plugin"]
