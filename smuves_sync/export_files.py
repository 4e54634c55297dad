"""Where an export's file lives, and how it is created, served and removed.

An export's file has one place, derived from what names the export and from nothing a runtime
login may write: ``<SMUVES_EXPORT_DIR>/portal-<portal id>/<type>-run<run id>.<csv|jsonl>``
(`export_file_path`). The worker writes there and the API serves from there, both through this
module; the `exports` row keeps no path either of them reads. So a worker or API login that
rewrites an exports row cannot make a worker write a file elsewhere (a ``.pth`` in
site-packages, another tenant's export) nor make the API serve one.

An operator's ``smuves export --out FILE`` is done by the operator's own process: it waits for
the export, then copies the derived file to FILE (`copy_export_file`) under the operator's
login and user, and records FILE in ``exports.path``, a column only the operator's login may
write and nothing reads to find a file. The worker never learns of FILE.

Files are created 0600 and portal directories 0700 whatever the umask; a portal directory or
file that is a symbolic link is refused, never followed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from smuves_sync.content_types import ContentType
from smuves_sync.errors import InvalidInput
from smuves_sync.models import ExportFormat

log = logging.getLogger(__name__)

_EXTENSIONS = {ExportFormat.CSV: "csv", ExportFormat.JSONL: "jsonl"}
_FILE_MODE = 0o600
_DIR_MODE = 0o700
# O_NOFOLLOW: a symbolic link planted at the file's name is refused, not written through.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


class ExportKey(Protocol):
    """What names an export's file (an `Export`, an `ExportFile`)."""

    @property
    def portal_id(self) -> int: ...
    @property
    def run_id(self) -> int: ...
    @property
    def content_type(self) -> ContentType: ...
    @property
    def format(self) -> ExportFormat: ...


@dataclass(frozen=True, slots=True)
class ExportFile:
    """The names of an export's file, without the rest of its row (what a prune removed)."""

    portal_id: int
    run_id: int
    content_type: ContentType
    format: ExportFormat


def _positive_id(what: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidInput(f"an export's {what} must be a positive integer, got {value!r}")
    return value


def portal_export_dir(export_dir: Path, portal_id: int) -> Path:
    """The directory of a portal's export files: <export_dir>/portal-<id>, absolute."""
    portal_id = _positive_id("portal id", portal_id)
    return export_dir.expanduser().resolve() / f"portal-{portal_id}"


def export_file_path(export_dir: Path, export: ExportKey) -> Path:
    """The one place an export's file may be: <export_dir>/portal-<id>/<type>-run<run>.<ext>."""
    run_id = _positive_id("run id", export.run_id)
    try:
        content_type = ContentType(export.content_type)
        export_format = ExportFormat(export.format)
    except ValueError as error:
        raise InvalidInput(f"not an export's type or format: {error}") from error
    name = f"{content_type.value}-run{run_id}.{_EXTENSIONS[export_format]}"
    return portal_export_dir(export_dir, export.portal_id) / name


def _private_dir(directory: Path) -> None:
    """Make `directory` (parents as needed) a real directory of mode 0700."""
    if not directory.parent.exists():
        _private_dir(directory.parent)
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=_DIR_MODE)
    if not stat.S_ISDIR(os.lstat(directory).st_mode):
        raise NotADirectoryError(f"{directory} is not a directory (a link is not followed)")
    os.chmod(directory, _DIR_MODE)  # mkdir's mode is cut by the umask


def open_export_file(path: Path) -> IO[str]:
    """`path` opened to be written from scratch, mode 0600, its directory made 0700; a link
    at its name or its directory's is refused."""
    _private_dir(path.parent)
    descriptor = os.open(path, _CREATE, _FILE_MODE)
    try:
        os.fchmod(descriptor, _FILE_MODE)  # a file left by an earlier attempt keeps its mode
        return os.fdopen(descriptor, "w", encoding="utf-8", newline="")
    except BaseException:
        os.close(descriptor)
        raise


def servable_export_file(export_dir: Path, export: ExportKey) -> Path | None:
    """The export's file when it is a regular file at its own place in its portal's
    directory, reached through no link; None otherwise."""
    path = export_file_path(export_dir, export)
    home = portal_export_dir(export_dir, export.portal_id)
    if path.resolve() != path or not path.is_relative_to(home):
        return None
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    return path if stat.S_ISREG(found.st_mode) else None


def copy_export_file(source: Path, destination: Path) -> Path:
    """Copy an export's file to an operator's chosen `destination` (mode 0600), replacing
    what is there only once the copy is whole; the destination's absolute path back."""
    destination = destination.expanduser().resolve()
    partial = destination.with_name(destination.name + ".part")
    try:
        descriptor = os.open(partial, _CREATE, _FILE_MODE)
        os.fchmod(descriptor, _FILE_MODE)
        with source.open("rb") as reading, os.fdopen(descriptor, "wb") as writing:
            shutil.copyfileobj(reading, writing)
        os.replace(partial, destination)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return destination


def remove_portal_exports(export_dir: Path, portal_id: int) -> None:
    """Remove a (deleted) portal's export directory and every file in it."""
    directory = portal_export_dir(export_dir, portal_id)
    try:
        if directory.is_symlink():
            directory.unlink()  # the link, never what it points at
        elif directory.exists():
            shutil.rmtree(directory)
    except OSError:
        log.warning("portal %s: its export files stay in %s", portal_id, directory, exc_info=True)


def remove_export_files(export_dir: Path, exports: Iterable[ExportKey]) -> int:
    """Remove the files of (pruned) exports; how many there were."""
    removed = 0
    for export in exports:
        path = export_file_path(export_dir, export)
        try:
            if path.is_symlink() or path.is_file():
                path.unlink()
                removed += 1
        except OSError:
            log.warning("the export file %s stays", path, exc_info=True)
    return removed
