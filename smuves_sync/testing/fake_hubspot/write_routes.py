"""The write endpoints of pages, posts, authors, tags and redirects, v3 and 2026-03 paths.

    PATCH …/{objectId}[?archived=true]      sparse update of the live object -> 200 object
    POST  …/batch/update[?archived=true]    ≤ 100 inputs {id, …} -> 200, or 207 + errors
    GET   …/{objectId}/draft                the draft buffer (live until one is written)
    PATCH …/{objectId}/draft                sparse update of the buffer -> 200 draft
    POST  …/{objectId}/draft/push-live      buffer -> live, 204
    POST  …/{objectId}/draft/reset          drop the buffer, 204
    GET   …/{objectId}/revisions            versions newest first (PageVersion)

Drafts and revisions are for pages and posts; redirects have no batch update (as the specs
have it). A live PATCH leaves an existing draft buffer as it was: the buffer is a copy taken
when it was first written, so pushing it live later reverts the live edit, which is the hazard
WRITES.md reasons HubSpot has. A 207 names each failed input in its own `StandardError`,
its id in `context.ids`.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.bodies import json_response
from smuves_sync.testing.fake_hubspot.content import encode_json
from smuves_sync.testing.fake_hubspot.hubdb_writes import hubdb_write_routes
from smuves_sync.testing.fake_hubspot.portal import PortalModel
from smuves_sync.testing.fake_hubspot.query import BadRequest, Collection
from smuves_sync.testing.fake_hubspot.text import iso_ms
from smuves_sync.testing.fake_hubspot.write_admin import write_admin_routes
from smuves_sync.testing.fake_hubspot.write_http import (
    Call,
    IdsOf,
    Op,
    WriteNotFound,
    batch_error,
    batch_inputs,
    batch_response,
    endpoint,
    now_text,
)
from smuves_sync.testing.fake_hubspot.write_ops import PAGE_TYPES, InputError, page_fields
from smuves_sync.testing.fake_hubspot.writes import API_USER

WRITE_PATHS = {
    ContentType.SITE_PAGE: ("/cms/v3/pages/site-pages", "/cms/pages/2026-03/site-pages"),
    ContentType.LANDING_PAGE: ("/cms/v3/pages/landing-pages", "/cms/pages/2026-03/landing-pages"),
    ContentType.BLOG_POST: ("/cms/v3/blogs/posts", "/cms/blogs/2026-03/posts"),
    ContentType.BLOG_AUTHOR: ("/cms/v3/blogs/authors", "/cms/blogs/2026-03/authors"),
    ContentType.BLOG_TAG: ("/cms/v3/blogs/tags", "/cms/blogs/2026-03/tags"),
    ContentType.URL_REDIRECT: ("/cms/v3/url-redirects", "/cms/url-redirects/2026-03"),
}
__all__ = ["write_routes"]
BATCH_TYPES = (*PAGE_TYPES, ContentType.BLOG_AUTHOR, ContentType.BLOG_TAG)


def write_routes(fake: Any) -> list[Route]:
    """The write endpoints (objects, HubDB drafts) and their admin routes, bound to one fake."""
    routes: list[Route] = []
    for content_type, paths in WRITE_PATHS.items():
        entries: list[tuple[str, Op, str, bool, IdsOf]] = [
            ("/{objectId}", patch_live, "PATCH", True, _path_id)
        ]
        if content_type in BATCH_TYPES:
            entries.append(("/batch/update", batch_update, "POST", True, batch_ids))
        if content_type in PAGE_TYPES:
            entries += [
                ("/{objectId}/draft", get_draft, "GET", False, _path_id),
                ("/{objectId}/draft", patch_draft, "PATCH", True, _path_id),
                ("/{objectId}/draft/push-live", push_live, "POST", True, _path_id),
                ("/{objectId}/draft/reset", reset_draft, "POST", True, _path_id),
                ("/{objectId}/revisions", revisions, "GET", False, _path_id),
            ]
        for path in paths:
            for suffix, op, method, write, ids in entries:
                reads = op is not revisions  # a version list is not a read of the object
                handler = endpoint(fake, content_type, op, ids, write=write, reads_objects=reads)
                routes.append(Route(path + suffix, handler, methods=[method]))
    return routes + hubdb_write_routes(fake) + write_admin_routes(fake)


def _path_id(portal: PortalModel, request: Request, body: Any) -> list[str]:
    return [request.path_params["objectId"]]


def batch_ids(portal: PortalModel, request: Request, body: Any) -> list[str]:
    """The ids a batch names (none when it is malformed: the operation refuses it)."""
    inputs = body.get("inputs") if isinstance(body, dict) else None
    if not isinstance(inputs, list):
        return []
    return [str(i["id"]) for i in inputs if isinstance(i, dict) and "id" in i]


def find_live(call: Call, object_id: str) -> tuple[Collection, int]:
    """The object a write names: 404 when it does not exist or its archived flag is not the
    one asked for."""
    found = call.portal.find_object(call.content_type, object_id)
    if found is None or found[0].life.is_archived(found[1]) != call.archived:
        raise WriteNotFound(f"{call.content_type.value} {object_id}")
    return found


def _object(obj: dict[str, Any], status: int = 200) -> Response:
    return Response(encode_json(obj), status, media_type="application/json;charset=utf-8")


def _fields(call: Call, found: tuple[Collection, int], object_id: str, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    if object_id in call.fired.refused:
        raise InputError(f"{object_id} was refused", category="VALIDATION_ERROR")
    collection, slot = found
    return page_fields(collection.builder.as_dict(collection.life, slot), body, object_id)


def patch_live(call: Call) -> Response:
    """PATCH …/{objectId}: the keys sent replace the live object's values."""
    object_id = call.request.path_params["objectId"]
    found = find_live(call, object_id)
    fields = _fields(call, found, object_id, call.body)
    obj = call.writer.live(call.content_type, found, fields, API_USER)
    call.note("live", object_id, fields)
    return _object(obj)


def batch_update(call: Call) -> Response:
    """POST …/batch/update: each input is applied or named in an error; 207 when any fails."""
    started = now_text()
    results: list[str] = []
    errors: list[dict[str, Any]] = []
    for object_id, item in batch_inputs(call.body):
        try:
            found = find_live(call, object_id)
            fields = _fields(call, found, object_id, item)
        except WriteNotFound:
            errors.append(batch_error("OBJECT_NOT_FOUND", f"{object_id} does not exist", object_id))
            continue
        except InputError as exc:
            errors.append(batch_error(exc.category, str(exc), object_id, exc.field))
            continue
        obj = call.writer.live(call.content_type, found, fields, API_USER)
        call.note("live", object_id, fields)
        results.append(encode_json(obj))
    return batch_response(started, results, errors)


def get_draft(call: Call) -> Response:
    """GET …/{objectId}/draft: the buffer, or the live object while there is none."""
    object_id = call.request.path_params["objectId"]
    collection, slot = find_live(call, object_id)
    buffer = collection.builder.overlay.drafts.get(slot)
    return _object(buffer.obj if buffer else collection.builder.as_dict(collection.life, slot))


def patch_draft(call: Call) -> Response:
    """PATCH …/{objectId}/draft: the keys sent replace the buffer's values (live unchanged)."""
    object_id = call.request.path_params["objectId"]
    found = find_live(call, object_id)
    collection, slot = found
    buffer = collection.builder.overlay.drafts.get(slot)
    if not isinstance(call.body, dict):
        raise BadRequest("the body must be a JSON object")
    current = buffer.obj if buffer else collection.builder.as_dict(collection.life, slot)
    if object_id in call.fired.refused:
        raise InputError(f"{object_id} was refused")
    fields = page_fields(current, call.body, object_id)
    obj = call.writer.draft(found, fields)
    call.note("draft", object_id, fields)
    return _object(obj)


def push_live(call: Call) -> Response:
    """POST …/{objectId}/draft/push-live: 204; the buffer's values go live."""
    object_id = call.request.path_params["objectId"]
    found = find_live(call, object_id)
    call.writer.push_live(call.content_type, found, API_USER)
    call.note("push_live", object_id, ())
    return Response(status_code=204)


def reset_draft(call: Call) -> Response:
    """POST …/{objectId}/draft/reset: 204; the buffer is dropped (the draft equals live)."""
    object_id = call.request.path_params["objectId"]
    collection, slot = find_live(call, object_id)
    collection.builder.overlay.drafts.pop(slot, None)
    call.note("reset_draft", object_id, ())
    return Response(status_code=204)


def revisions(call: Call) -> Response:
    """GET …/{objectId}/revisions: CollectionResponseWithTotalPageVersion, newest first."""
    object_id = call.request.path_params["objectId"]
    collection, slot = find_live(call, object_id)
    builder, life = collection.builder, collection.life
    versions = builder.overlay.versions(slot, lambda: builder.as_dict(life, slot))
    params = call.request.query_params
    try:
        limit = max(1, min(100, int(params.get("limit", "100"))))
        start = int(params.get("after", "0"))
    except ValueError:
        raise BadRequest("limit and after must be integers") from None
    page = versions[start : start + limit]
    body: dict[str, Any] = {
        "total": len(versions),
        "results": [
            {
                "id": str(v.number),
                "object": v.obj,
                "updatedAt": iso_ms(v.updated_ms),
                "user": v.user,
            }
            for v in page
        ],
    }
    if start + limit < len(versions):
        body["paging"] = {"next": {"after": str(start + limit)}}
    return json_response(200, body, {})
