"""Each name has one home: it is imported from the module that defines it, under its own name.

A module re-exports nothing; a package's `__init__` may present names of its own modules (the
`smuves_sync.db` front door), never a name from elsewhere. No module gives a second name to
one it imports (`ContentRow = ContentRecord`). Read from the source, as `test_code_size` is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import smuves_sync

PACKAGE = Path(smuves_sync.__file__).parent
ROOT = PACKAGE.parent

# (module, name) imported from a module that does not define it, each to be moved home.
NOT_YET_HOME: frozenset[tuple[str, str]] = frozenset({("smuves_sync.models", "ContentType")})


def _file(module: str) -> Path | None:
    base = ROOT / module.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _defined(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _home(module: str, name: str) -> bool:
    """Whether `module` defines `name`, or is a package one of whose modules does."""
    path = _file(module)
    if path is None or _file(f"{module}.{name}") is not None or name in _defined(path):
        return True
    if path.name != "__init__.py":
        return False
    return any(name in _defined(inner) for inner in path.parent.rglob("*.py"))


def _sources() -> list[Path]:
    return sorted(
        [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *ROOT.glob("scripts/*.py")]
    )


def test_a_name_is_imported_from_the_module_that_defines_it() -> None:
    strays = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
                continue
            if not node.module.startswith("smuves_sync"):
                continue
            for alias in node.names:
                if not _home(node.module, alias.name):
                    strays.add((node.module, alias.name))
    assert strays - NOT_YET_HOME == set()


def test_no_module_gives_an_imported_name_a_second_name() -> None:
    renamed = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        imported = {
            alias.asname or alias.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("smuves_sync")
            for alias in node.names
        }
        for node in tree.body:
            value = node.value if isinstance(node, ast.Assign) else None
            if isinstance(value, ast.Name) and value.id in imported:
                renamed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert renamed == []
