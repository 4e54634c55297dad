"""`/v1/exports/{id}`: an export's state, and its file streamed once a worker wrote it.

The file served is the export's own, at the one place derived from its portal, run, type and
format (`smuves_sync.export_files`): a regular file in that portal's directory under
``SMUVES_EXPORT_DIR``, reached through no symbolic link. Nothing of the row says where to
read, so no row (however it was written) is a way to read another tenant's file or the
server's disk.
"""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import FileResponse

from smuves_sync.api.auth import CurrentPrincipal
from smuves_sync.api.context import Context, user_session
from smuves_sync.api.errors import ApiError, error_responses, found
from smuves_sync.api.schemas import MAX_ID, ExportOut
from smuves_sync.db.exports import export_get
from smuves_sync.export_files import servable_export_file
from smuves_sync.models import Export, ExportFormat, JobStatus

router = APIRouter(prefix="/v1/exports", tags=["exports"], responses=error_responses(401, 404, 422))

ExportId = Annotated[int, Path(gt=0, le=MAX_ID, description="export id")]
_MEDIA_TYPES = {ExportFormat.CSV: "text/csv", ExportFormat.JSONL: "application/jsonl"}


@router.get("/{export_id}", summary="An export's state")
async def get_export(export_id: ExportId, ctx: Context, principal: CurrentPrincipal) -> ExportOut:
    """`download_url` is set once the file is written. `include_deleted`: whether the file
    keeps the objects marked deleted (gone from HubSpot); `deleted_count`: how many it left out
    (or keeps), set once the file is written."""
    async with user_session(ctx, principal) as db:
        export = found(await export_get(db, export_id), f"export {export_id}")
    return ExportOut.of(export)


def _servable_file(export: Export, export_dir: FilePath) -> FilePath:
    if export.status is not JobStatus.COMPLETED:
        raise ApiError(
            409, "EXPORT_NOT_READY", f"export {export.id} is {export.status}; no file to download"
        )
    path = servable_export_file(export_dir, export)
    if path is None:
        raise ApiError(410, "EXPORT_FILE_GONE", f"the file of export {export.id} is not available")
    return path


@router.get(
    "/{export_id}/download",
    response_class=FileResponse,
    responses={
        200: {
            "description": "the exported file",
            "content": {
                media: {"schema": {"type": "string", "format": "binary"}}
                for media in _MEDIA_TYPES.values()
            },
        },
        **error_responses(409, 410),
    },
    summary="Download an export's file (streamed)",
)
async def download_export(
    export_id: ExportId, ctx: Context, principal: CurrentPrincipal
) -> FileResponse:
    """409 until the export has completed."""
    async with user_session(ctx, principal) as db:
        export = found(await export_get(db, export_id), f"export {export_id}")
    path = _servable_file(export, ctx.settings.export_dir)
    suffix = "csv" if export.format is ExportFormat.CSV else "jsonl"
    return FileResponse(
        path,
        media_type=_MEDIA_TYPES[export.format],
        filename=f"portal-{export.portal_id}-{export.content_type}-{export.id}.{suffix}",
    )
