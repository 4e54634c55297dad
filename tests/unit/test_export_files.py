"""Where an export's file may be, and what of the disk is refused on the way to it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from smuves_sync.errors import InvalidInput
from smuves_sync.export_files import (
    ExportFile,
    copy_export_file,
    export_file_path,
    open_export_file,
    remove_export_files,
    remove_portal_exports,
    servable_export_file,
)
from smuves_sync.models import ContentType, ExportFormat

POSTS = ExportFile(7, 42, ContentType.BLOG_POST, ExportFormat.JSONL)


def test_the_place_comes_from_the_portal_run_type_and_format_only(tmp_path: Path) -> None:
    assert export_file_path(tmp_path / "x" / "..", POSTS) == (
        tmp_path.resolve() / "portal-7" / "blog_post-run42.jsonl"
    )


@pytest.mark.parametrize(
    "named",
    [
        ExportFile(0, 42, ContentType.BLOG_POST, ExportFormat.CSV),
        ExportFile(7, -1, ContentType.BLOG_POST, ExportFormat.CSV),
        ExportFile(True, 42, ContentType.BLOG_POST, ExportFormat.CSV),
        ExportFile(7, 42, "../../etc/passwd", ExportFormat.CSV),  # type: ignore[arg-type]
        ExportFile(7, 42, ContentType.BLOG_POST, "pth"),  # type: ignore[arg-type]
    ],
    ids=["portal-0", "run-negative", "portal-bool", "type-a-path", "format-unknown"],
)
def test_anything_else_is_refused(tmp_path: Path, named: ExportFile) -> None:
    with pytest.raises(InvalidInput):
        export_file_path(tmp_path, named)


def test_a_written_file_is_0600_in_a_0700_directory_whatever_the_umask(tmp_path: Path) -> None:
    path = export_file_path(tmp_path / "exports", POSTS)
    loosest = os.umask(0)
    try:
        with open_export_file(path) as stream:
            stream.write("{}\n")
        copied = copy_export_file(path, tmp_path / "copy.jsonl")
    finally:
        os.umask(loosest)
    for found, mode in ((path, 0o600), (path.parent, 0o700), (copied, 0o600)):
        assert stat.S_IMODE(found.stat().st_mode) == mode, found
    assert copied.read_text() == "{}\n"


def test_a_link_at_the_files_name_is_neither_written_through_nor_served(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not an export")
    path = export_file_path(tmp_path / "exports", POSTS)
    path.parent.mkdir(parents=True)
    path.symlink_to(elsewhere)

    with pytest.raises(OSError):
        open_export_file(path)
    assert servable_export_file(tmp_path / "exports", POSTS) is None
    assert remove_export_files(tmp_path / "exports", [POSTS]) == 1
    assert elsewhere.read_text() == "not an export" and not path.is_symlink()


def test_a_portal_directory_that_is_a_link_is_removed_as_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("kept")
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "portal-7").symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(NotADirectoryError):
        open_export_file(export_file_path(exports, POSTS))
    remove_portal_exports(exports, 7)

    assert not (exports / "portal-7").exists()
    assert (elsewhere / "keep.txt").read_text() == "kept"
