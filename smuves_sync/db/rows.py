"""Turning result rows into the frozen records of ``smuves_sync.models``.

Jobs come either as dicts (``job_from_row``) or, on the claim's hot path, as plain tuples whose
columns are `JOB_FIELDS` in order (``job_from_values``): a claim of a few hundred jobs spends
more time building rows in Python than the database spends claiming them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from smuves_sync.models import ContentType, Job, JobKind, JobStatus, Run, RunStatus

JOB_FIELDS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(Job))

# Dict lookups: calling an enum class with a value is several times slower.
_KINDS = {kind.value: kind for kind in JobKind}
_CONTENT_TYPES = {content_type.value: content_type for content_type in ContentType}
_JOB_STATUSES = {status.value: status for status in JobStatus}


def job_from_values(values: Sequence[Any]) -> Job:
    """A `Job` from column values in the order of `JOB_FIELDS`."""
    return Job(
        values[0],
        values[1],
        values[2],
        _KINDS[values[3]],
        _CONTENT_TYPES[values[4]],
        _JOB_STATUSES[values[5]],
        *values[6:],
    )


def job_from_row(row: Mapping[str, Any]) -> Job:
    """A ``jobs`` row as a `Job`."""
    return job_from_values([row[name] for name in JOB_FIELDS])


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
