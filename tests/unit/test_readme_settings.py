"""The README's Configuration table documents every field of `Settings`, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from smuves_sync.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"
VARIABLE = re.compile(r"^\| `(SMUVES_[A-Z0-9_]+)` \|")


def _configuration_tables() -> list[list[str]]:
    """The tables of the README's Configuration section (to its first subsection), each as
    the lines of its rows."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1]
    section = re.split(r"^##", section, maxsplit=1, flags=re.M)[0]
    tables: list[list[str]] = [[]]
    for line in section.splitlines():
        if line.startswith("|"):
            tables[-1].append(line)
        elif tables[-1]:
            tables.append([])
    return [table for table in tables if table]


def test_the_configuration_section_has_one_table() -> None:
    tables = _configuration_tables()
    assert len(tables) == 1, [table[0] for table in tables]
    assert tables[0][0] == "| variable | default | meaning |"


def test_the_configuration_table_names_every_setting_and_nothing_else() -> None:
    rows = [row for table in _configuration_tables() for row in table[2:]]
    documented = [m.group(1) for row in rows if (m := VARIABLE.match(row))]
    assert len(documented) == len(rows), "a row that names no SMUVES_ variable"
    fields = {f"SMUVES_{name.upper()}" for name in Settings.model_fields}
    assert sorted(documented) == sorted(set(documented)), "a setting documented twice"
    assert set(documented) - fields == set(), "documented, but no field of Settings"
    assert fields - set(documented) == set(), "fields of Settings the README does not document"
