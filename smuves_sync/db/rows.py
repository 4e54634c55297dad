"""Turning result rows (dicts) into the frozen records of ``smuves_sync.models``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smuves_sync.models import ContentType, Job, JobKind, JobStatus, Run, RunStatus


def job_from_row(row: Mapping[str, Any]) -> Job:
    """A ``jobs`` row as a `Job`."""
    return Job(
        id=row["id"],
        run_id=row["run_id"],
        portal_id=row["portal_id"],
        kind=JobKind(row["kind"]),
        content_type=ContentType(row["content_type"]),
        status=JobStatus(row["status"]),
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        run_after=row["run_after"],
        locked_at=row["locked_at"],
        locked_by=row["locked_by"],
        lease_token=row["lease_token"],
        heartbeat_at=row["heartbeat_at"],
        total=row["total"],
        processed=row["processed"],
        cursor=row["cursor"],
        last_error=row["last_error"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )


def run_from_row(row: Mapping[str, Any]) -> Run:
    """A ``runs`` row as a `Run`."""
    return Run(
        id=row["id"],
        portal_id=row["portal_id"],
        owner_id=row["owner_id"],
        kind=JobKind(row["kind"]),
        status=RunStatus(row["status"]),
        content_types=tuple(ContentType(t) for t in row["content_types"]),
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
    )
