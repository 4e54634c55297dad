"""The changeset page's Push button (POST /changesets/{id}/push): confirmed, then audited.

`smuves changeset push ID --no-wait` from the dashboard: a push run with a job per type of the
changeset's pending items, which a running `smuves worker` works. The confirmation page says
what goes live; the audit trail records who pushed, the run, or why it was refused.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.changesets import changeset_preview
from smuves_sync.dashboard.auth import Session
from smuves_sync.dashboard.confirmation import confirmation_page, when_confirmed
from smuves_sync.dashboard.web import (
    Form,
    audit,
    context_of,
    existing,
    operator_action,
    path_id,
    see_other,
)
from smuves_sync.db import Database
from smuves_sync.errors import AllDuplicateJobs, NotFound
from smuves_sync.orchestrator import FetchStarted
from smuves_sync.push_start import start_push


@operator_action
async def push(request: Request, session: Session, form: Form) -> Response:
    """Push a changeset's pending items, live (pages, posts; HubDB tables published)."""
    ctx = context_of(request)
    changeset_id = path_id(request, "changeset_id")
    back = f"/changesets/{changeset_id}"
    preview = existing(
        await changeset_preview(ctx.db, changeset_id, limit=0),
        "No such changeset",
        f"There is no changeset {changeset_id}.",
    )
    action = "changeset_push"
    target: dict[str, Any] = {"changeset_id": changeset_id}

    async def act(tx: Database) -> FetchStarted | str:
        try:
            started = await start_push(tx, changeset_id, max_attempts=ctx.settings.max_attempts)
        except (AllDuplicateJobs, NotFound) as error:
            await audit(tx, request, session, action, target, {"refused": str(error)})
            return str(error)
        outcome = {
            "run_id": started.run.id,
            "content_types": [str(j.content_type) for j in started.jobs],
        }
        await audit(tx, request, session, action, target, outcome)
        return started

    done = await when_confirmed(request, session, form, action, target, act)
    if done is None:
        pending = preview.states.get("pending", 0)
        return await confirmation_page(
            request,
            session,
            action,
            target,
            heading=f"Push changeset {changeset_id}",
            description=(
                f"{pending:,} pending item(s) of portal {preview.changeset.portal_id} are "
                "written to HubSpot, live: the live pages and posts are edited, and each HubDB "
                "table written to is published (only when its draft holds no one else's "
                "edits). An object someone changed in HubSpot since is not overwritten: it is "
                "reported as a conflict. A running `smuves worker` does the work."
            ),
            button=f"Push changeset {changeset_id}",
            back=back,
            form=form,
        )
    if isinstance(done, str):
        session.flash("error", done)
        return see_other(back)
    session.flash("ok", f"run {done.run.id} enqueued: pushing changeset {changeset_id}")
    return see_other(f"/runs/{done.run.id}")
