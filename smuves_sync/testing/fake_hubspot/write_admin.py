"""The /_fake admin endpoints of the write control calls (for a fake in another process).

PUT  /_fake/write-faults                       body: {"faults": [WriteFault fields, ...]}
POST /_fake/portals/{id}/person-edit           body: {"type", "id", "fields"[, "draft"]}
GET  /_fake/portals/{id}/write-log             {"items": [{"seq", "op", "type", "id", ...}]}
GET  /_fake/portals/{id}/write-stats           {"counters": {name: n}}
GET  /_fake/portals/{id}/unpublished-rows?table=T   {"rows": ["<tableId>:<rowId>", ...]}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from smuves_sync.testing.fake_hubspot.admin import _body, _guarded, _portal_id
from smuves_sync.testing.fake_hubspot.write_faults import WriteFault

if TYPE_CHECKING:
    from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot


def write_admin_routes(fake: FakeHubSpot) -> list[Route]:
    """The write control routes bound to one fake."""

    async def set_faults(request: Request) -> Response:
        raw = await _body(request)
        fake.set_write_faults(tuple(WriteFault.from_json(f) for f in raw.get("faults", [])))
        return JSONResponse({"ok": True})

    async def person_edit(request: Request) -> Response:
        portal_id = _portal_id(fake, request)
        raw = await _body(request)
        fields = raw["fields"]
        if not isinstance(fields, dict):
            raise ValueError("fields must be an object")
        fake.person_edit(
            portal_id, str(raw["type"]), str(raw["id"]), fields, draft=bool(raw.get("draft"))
        )
        return JSONResponse({"ok": True})

    async def write_log(request: Request) -> Response:
        return JSONResponse({"items": fake.write_log(_portal_id(fake, request))})

    async def write_stats(request: Request) -> Response:
        return JSONResponse({"counters": fake.write_stats(_portal_id(fake, request))})

    async def unpublished(request: Request) -> Response:
        portal_id = _portal_id(fake, request)
        rows = fake.unpublished_rows(portal_id, request.query_params["table"])
        return JSONResponse({"rows": rows})

    portal = "/_fake/portals/{portal_id:int}"
    return [
        Route("/_fake/write-faults", _guarded(set_faults), methods=["PUT"]),
        Route(portal + "/person-edit", _guarded(person_edit), methods=["POST"]),
        Route(portal + "/write-log", _guarded(write_log), methods=["GET"]),
        Route(portal + "/write-stats", _guarded(write_stats), methods=["GET"]),
        Route(portal + "/unpublished-rows", _guarded(unpublished), methods=["GET"]),
    ]
