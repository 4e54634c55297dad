"""The /_fake admin endpoints: the control API over HTTP, for a fake in another process.

    GET  /_fake/health                          {"ok": true}
    GET  /_fake/stats                           {"portals": {"<id>": {...}}, "unauthorized": n}
    POST /_fake/stats/reset
    GET  /_fake/portals/{id}                    {"portal_id", "version"}
    POST /_fake/portals/{id}/advance            body: Churn fields (optional) -> {"version": v}
    POST /_fake/portals/{id}/purge              body: {"type", "ids": [...]} -> {"purged": n}
    POST /_fake/portals/{id}/archive            body: {"type", "ids": [...]} -> {"ids": [archived]}
    POST /_fake/portals/{id}/unarchive          body: {"type", "ids": [...]} -> {"ids": [back]}
    GET  /_fake/portals/{id}/truth?type=T[&archived=true|false][&data=true]
                                                {"items": [{"id", "updated", "archived"[, "data"]}]}
    POST /_fake/tokens                          body: {"portal_id", "token"}
    POST /_fake/tokens/revoke                   body: {"token"}
    PUT  /_fake/faults                          body: {"faults": [FaultRule fields, ...]}

No authentication: the fake listens on the loopback interface for tests and the demo only.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.spec import Churn, decode_faults

if TYPE_CHECKING:
    from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot

Handler = Callable[[Request], Awaitable[Response]]


def admin_routes(fake: FakeHubSpot) -> list[Route]:
    """The admin routes bound to one fake."""
    admin = _Admin(fake)
    handlers: list[tuple[str, Handler, str]] = [
        ("/_fake/health", admin.health, "GET"),
        ("/_fake/stats", admin.stats, "GET"),
        ("/_fake/stats/reset", admin.reset_stats, "POST"),
        ("/_fake/portals/{portal_id:int}", admin.portal, "GET"),
        ("/_fake/portals/{portal_id:int}/advance", admin.advance, "POST"),
        ("/_fake/portals/{portal_id:int}/purge", admin.purge, "POST"),
        ("/_fake/portals/{portal_id:int}/archive", admin.archive, "POST"),
        ("/_fake/portals/{portal_id:int}/unarchive", admin.unarchive, "POST"),
        ("/_fake/portals/{portal_id:int}/truth", admin.truth, "GET"),
        ("/_fake/tokens", admin.add_token, "POST"),
        ("/_fake/tokens/revoke", admin.revoke_token, "POST"),
        ("/_fake/faults", admin.set_faults, "PUT"),
    ]
    return [Route(path, _guarded(handler), methods=[method]) for path, handler, method in handlers]


class _Admin:
    """The handlers of the admin routes: each maps one request onto the fake's control API."""

    def __init__(self, fake: FakeHubSpot) -> None:
        self.fake = fake

    async def health(self, request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def stats(self, request: Request) -> Response:
        with self.fake.lock:
            portals = {str(pid): s.as_json() for pid, s in self.fake.all_stats().items()}
            return JSONResponse({"portals": portals, "unauthorized": self.fake.unauthorized})

    async def reset_stats(self, request: Request) -> Response:
        self.fake.reset_stats()
        return JSONResponse({"ok": True})

    async def portal(self, request: Request) -> Response:
        portal_id = _portal_id(self.fake, request)
        return JSONResponse({"portal_id": portal_id, "version": self.fake.version(portal_id)})

    async def advance(self, request: Request) -> Response:
        portal_id = _portal_id(self.fake, request)
        version = self.fake.advance(portal_id, Churn(**await _body(request)))
        return JSONResponse({"version": version})

    async def purge(self, request: Request) -> Response:
        portal_id = _portal_id(self.fake, request)
        raw = await _body(request)
        ids = raw["ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ValueError("ids must be a list of strings")
        purged = self.fake.purge(portal_id, ContentType(raw["type"]), ids)
        return JSONResponse({"purged": purged})

    async def archive(self, request: Request) -> Response:
        return await self._set_archived(request, archived=True)

    async def unarchive(self, request: Request) -> Response:
        return await self._set_archived(request, archived=False)

    async def _set_archived(self, request: Request, *, archived: bool) -> Response:
        portal_id = _portal_id(self.fake, request)
        raw = await _body(request)
        ids = raw.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ValueError("ids must be a list of strings")
        change = self.fake.archive if archived else self.fake.unarchive
        return JSONResponse({"ids": change(portal_id, ContentType(raw["type"]), ids)})

    async def truth(self, request: Request) -> Response:
        portal_id = _portal_id(self.fake, request)
        params = request.query_params
        archived_text = params.get("archived")
        archived = None if archived_text is None else archived_text.lower() == "true"
        with_data = params.get("data", "false").lower() == "true"
        items = self.fake.ground_truth(
            portal_id, ContentType(params["type"]), archived=archived, with_data=with_data
        )
        body = json.dumps({"items": [item.as_json() for item in items]})
        return Response(body, media_type="application/json")

    async def add_token(self, request: Request) -> Response:
        raw = await _body(request)
        self.fake.add_token(int(raw["portal_id"]), str(raw["token"]))
        return JSONResponse({"ok": True})

    async def revoke_token(self, request: Request) -> Response:
        raw = await _body(request)
        self.fake.revoke_token(str(raw["token"]))
        return JSONResponse({"ok": True})

    async def set_faults(self, request: Request) -> Response:
        raw = await _body(request)
        self.fake.set_faults(decode_faults(raw.get("faults", [])))
        return JSONResponse({"ok": True})


def _guarded(handler: Handler) -> Handler:
    """Bad admin input is a 400 with the reason, never a server error."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except KeyError as exc:
            return JSONResponse({"error": f"unknown or missing {exc}"}, status_code=404)
        except (ValueError, TypeError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)

    return run


def _portal_id(fake: FakeHubSpot, request: Request) -> int:
    portal_id = int(request.path_params["portal_id"])
    fake.version(portal_id)  # KeyError (404) for a portal this fake does not host
    return portal_id


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    parsed = json.loads(raw) if raw else {}
    if not isinstance(parsed, dict):
        raise ValueError("the body must be a JSON object")
    return parsed
