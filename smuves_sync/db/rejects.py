"""content_rejects: the objects HubSpot sent that a fetch could not store (rejects.sql).

    async with db.for_job(job) as scoped:                    # the page's transaction
        await content_rejects_add(scoped, portal_id, content_type, run_id, rejects)
    found = await run_rejects(db, run_id)                    # RunRejects: note and counts

A reject is `content_fields.RejectedObject`: its HubSpot id when it has a usable one, the
reason, and the object's bytes (ASCII JSON, capped). `content_upsert_page` records what it
cannot store itself; the fetch hands it what the client could not read. The note ("N objects
could not be stored: …") is written by the SQL function `run_rejects_note`, the same words a
settled run's notification carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from psycopg.rows import scalar_row

from smuves_sync.content_fields import RejectedObject
from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType


@dataclass(frozen=True, slots=True)
class RejectCount:
    """How many objects of one type a run could not store, and why (the commonest reason)."""

    content_type: ContentType
    objects: int
    reason: str
    # how many different reasons there were
    reasons: int


@dataclass(frozen=True, slots=True)
class RunRejects:
    """What a run could not store: the note a person reads, and the counts per type."""

    note: str | None
    by_type: tuple[RejectCount, ...]

    @property
    def objects(self) -> int:
        """How many objects in all."""
        return sum(count.objects for count in self.by_type)


NO_REJECTS = RunRejects(note=None, by_type=())


async def content_rejects_add(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    run_id: int,
    rejects: Sequence[RejectedObject],
) -> int:
    """Record objects run `run_id` could not store; how many rows were written."""
    if not rejects:
        return 0
    columns = {
        "hubspot_ids": [r.hubspot_id for r in rejects],
        "reasons": [r.reason for r in rejects],
        "raws": [r.raw for r in rejects],
        "raw_sizes": [r.size for r in rejects],
    }
    params = {"portal_id": portal_id, "content_type": str(content_type), "run_id": run_id}
    return await db.execute("content_rejects_add", {**params, **columns})


async def run_rejects(db: Database, run_id: int) -> RunRejects:
    """What run `run_id` could not store (as far as the caller may see)."""
    counts = await db.all("run_rejects", {"run_id": run_id}, row=model_row(RejectCount))
    if not counts:
        return NO_REJECTS
    note: str | None = await db.one("run_rejects_note", {"run_id": run_id}, row=scalar_row)
    return RunRejects(note=note, by_type=tuple(counts))
