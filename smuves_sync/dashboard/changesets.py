"""The dashboard's changeset page (GET /changesets/{id}): the preview of an import or a
rollback, as `smuves changeset show` prints it: counts, the HubSpot requests its push costs,
warnings, and per item the fields before → after, its state and reason."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.changesets import changeset_preview, shown
from smuves_sync.dashboard.auth import Session
from smuves_sync.dashboard.web import context_of, existing, operator_page, page, path_id

# Items one page shows; the rest are for `smuves changeset show` and the API.
ITEMS_SHOWN = 500


@operator_page
async def changeset_page(request: Request, session: Session) -> Response:
    """One changeset's preview."""
    changeset_id = path_id(request, "changeset_id")
    async with context_of(request).db.custom_plans() as tx:
        preview = existing(
            await changeset_preview(tx, changeset_id, limit=ITEMS_SHOWN),
            "No such changeset",
            f"There is no changeset {changeset_id}.",
        )
    items = [
        {
            "item": item,
            "fields": [
                (name, shown(item.before.get(name)), shown(value))
                for name, value in item.fields.items()
            ],
        }
        for item in preview.items
    ]
    return page(
        request,
        session,
        "changeset.html",
        preview=preview,
        counts=preview.counts,
        items=items,
        shown_limit=ITEMS_SHOWN,
    )
