"""Only ``smuves_sync.db`` catches the driver's errors: everything else catches the package's
(`DatabaseError` and its kinds), which ``db`` raises in their place (db/driver_errors.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import smuves_sync
from smuves_sync.db.driver_errors import without_password

PACKAGE = Path(smuves_sync.__file__).parent
DRIVERS = ("psycopg", "psycopg_pool")


def _driver_names(tree: ast.Module) -> set[str]:
    """The names a module binds to the driver or to anything imported from it."""
    names = set(DRIVERS)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name.split(".")[0] in DRIVERS}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in DRIVERS:
            names |= {a.asname or a.name for a in node.names}
    return names


def _catches(tree: ast.Module) -> list[ast.expr]:
    """What each `except` (and each `contextlib.suppress(...)`) of a module names."""
    caught: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            caught.append(node.type)
        elif isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "suppress")
            or (isinstance(node.func, ast.Name) and node.func.id == "suppress")
        ):
            caught.extend(node.args)
    return caught


def driver_catches(source: str) -> list[int]:
    """The lines of `source` whose `except` or `suppress` names a driver error."""
    tree = ast.parse(source)
    driver = _driver_names(tree)
    return sorted(
        expr.lineno
        for expr in _catches(tree)
        if any(isinstance(n, ast.Name) and n.id in driver for n in ast.walk(expr))
    )


def test_the_check_sees_each_way_of_naming_a_driver_error() -> None:
    source = """
import contextlib
import psycopg
from psycopg.errors import InsufficientPrivilege as Refused
try:
    pass
except psycopg.OperationalError:
    pass
except (KeyError, Refused):
    pass
with contextlib.suppress(psycopg.Error):
    pass
try:
    pass
except KeyError:
    pass
"""
    assert driver_catches(source) == [7, 9, 11]


def test_nothing_outside_the_db_package_catches_a_driver_error() -> None:
    found = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.parent.relative_to(PACKAGE).parts[:1] != ("db",)
        and (lines := driver_catches(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_a_password_in_a_connection_string_or_url_is_taken_out() -> None:
    said = without_password(
        "connection to postgresql://smuves:hunter2@db:5432/x failed (host=db password=s3cret "
        "user=u; password = 'two words')"
    )
    assert "hunter2" not in said and "s3cret" not in said and "two words" not in said
    assert "postgresql://smuves:***@db:5432/x" in said and "user=u" in said
