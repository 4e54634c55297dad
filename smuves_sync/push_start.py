"""Start a push run of a changeset: one push job per type of its pending items.

    started = await start_push(db, changeset_id, publish="live")   # or "draft"
    started.run, started.jobs

As for fetches (`orchestrator`), dedup is the database's: at most one push job in flight per
portal and type (the in-flight jobs' unique index), and a changeset being pushed is refused
(`changeset_push_begin`), both as `ChangesetBeingPushed` (HTTP 409, exit 3). Who may push is the
database's too: an owner or editor of the portal, or the operator's login; a viewer is refused
(`NotPermitted`). The workers push (workers/push.py).
"""

from __future__ import annotations

import uuid

from smuves_sync.db import Database
from smuves_sync.db.push import push_begin, push_start_plan
from smuves_sync.db.runs import run_create
from smuves_sync.errors import ChangesetBeingPushed, InvalidInput, NotFound
from smuves_sync.models import Job, JobKind, JobPriority
from smuves_sync.orchestrator import FetchStarted, enqueue_or_holder, parse_content_types


async def start_push(
    db: Database,
    changeset_id: int,
    *,
    publish: str = "live",
    owner_id: uuid.UUID | None = None,
    max_attempts: int | None = None,
) -> FetchStarted:
    """Create a push run of a changeset: one job per type of its pending items
    (workers/push.py). `publish`: "live" (pages and posts: the live object; HubDB: the table
    is published) or "draft" (the drafts only). Raises `ChangesetBeingPushed` when a push of
    it, or of one of its types in the portal, is in flight; `NotFound` when it is not visible
    or has nothing pending; the database refuses a viewer (`NotPermitted`)."""
    if publish not in ("live", "draft"):
        raise InvalidInput(f"--publish must be live or draft, got {publish!r}")
    found = await push_start_plan(db, changeset_id)
    if found is None:
        raise NotFound(f"changeset {changeset_id} is not known (or not visible to you)")
    if found.status == "pushing":
        raise ChangesetBeingPushed(found.portal_id, changeset_id, [found.run_id or 0])
    if not found.content_types:
        raise NotFound(f"changeset {changeset_id} has no pending item to push")
    types = parse_content_types(found.content_types)
    async with db.for_portal(found.portal_id) as scoped:
        run = await run_create(scoped, found.portal_id, JobKind.PUSH, types, owner_id=owner_id)
        if await push_begin(scoped, changeset_id, run.id, publish) == "pushing":
            raise ChangesetBeingPushed(found.portal_id, changeset_id, [])
        jobs: list[Job] = []
        for content_type in types:
            job = await enqueue_or_holder(
                scoped, run, content_type, max_attempts, JobPriority.INTERACTIVE
            )
            if not isinstance(job, Job):
                # Another changeset's push holds the type: this one waits for none of it.
                raise ChangesetBeingPushed(found.portal_id, changeset_id, [job])
            jobs.append(job)
    return FetchStarted(run=run, jobs=tuple(jobs))
