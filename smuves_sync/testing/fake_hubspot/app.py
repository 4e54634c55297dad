"""The Starlette app: HubSpot's CMS endpoints (v3 and 2026-03), the account details of the
portal a token belongs to (/account-info/v3/details and its dated twin), plus /_fake admin
calls.

Served: the listings, one object by id (`GET …/<id>`, `archived=true` for an archived one),
and the batch reads (`POST …/batch/read`: pages, landing pages, posts, a table's rows).
Pages, posts, blog authors, tags, blogs and redirects are listed and read alike (`_list_pages`,
`_get_page`); HubDB tables and rows have their own handlers.

Every API request goes through the same steps: bearer token -> portal (401), the portal's
limits (429 + X-HubSpot-RateLimit-* headers on every answer), an injected fault if one fires
(listings only), the configured latency, then the answer itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.admin import admin_routes
from smuves_sync.testing.fake_hubspot.bodies import (
    account_details_body,
    batch_read_response,
    error_body,
    json_response,
    rate_limit_body,
)
from smuves_sync.testing.fake_hubspot.content import encode_json
from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot
from smuves_sync.testing.fake_hubspot.poison import served_dicts, served_json
from smuves_sync.testing.fake_hubspot.portal import PortalModel
from smuves_sync.testing.fake_hubspot.query import BadRequest, Collection, ListQuery, parse_query
from smuves_sync.testing.fake_hubspot.spec import FaultKind, FaultRule
from smuves_sync.testing.fake_hubspot.write_http import FakeApp
from smuves_sync.testing.fake_hubspot.write_routes import write_routes

PAGE_PATHS = {
    ContentType.SITE_PAGE: ("/cms/v3/pages/site-pages", "/cms/pages/2026-03/site-pages"),
    ContentType.LANDING_PAGE: ("/cms/v3/pages/landing-pages", "/cms/pages/2026-03/landing-pages"),
    ContentType.BLOG_POST: ("/cms/v3/blogs/posts", "/cms/blogs/2026-03/posts"),
}
HUBDB_PATHS = ("/cms/v3/hubdb/tables", "/cms/hubdb/2026-03/tables")
# The blog's other objects and the redirects. HubSpot has no dated blog-settings API (in its
# specs); the v3 redirects listing is also served where the v3 spec puts it.
BLOG_PATHS = {
    ContentType.BLOG_AUTHOR: ("/cms/v3/blogs/authors", "/cms/blogs/2026-03/authors"),
    ContentType.BLOG_TAG: ("/cms/v3/blogs/tags", "/cms/blogs/2026-03/tags"),
    ContentType.URL_REDIRECT: ("/cms/v3/url-redirects", "/cms/url-redirects/2026-03"),
    ContentType.BLOG: ("/cms/v3/blog-settings/settings",),
}
LISTING_ALIASES = {"/cms/url-redirects/v3": ContentType.URL_REDIRECT}
ACCOUNT_PATHS = ("/account-info/v3/details", "/account-info/2026-03/details")
# How the account-details requests are counted in `PortalStats.by_content_type`.
ACCOUNT_INFO = "account_info"
PAGE_LIMIT = 100
HUBDB_LIMIT = 1000
BATCH_LIMIT = 100  # inputs per batch read
_HTML_ERROR_PAGE = "<html><head><title>Bad gateway</title></head><body>upstream error</body></html>"

Produce = Callable[[PortalModel, Request, FaultRule | None], Response]


class NotFound(Exception):
    """The object, table or row does not exist (or is archived and not asked for)."""


def build_app(fake: FakeHubSpot) -> Starlette:
    """The ASGI application for one FakeHubSpot."""
    routes: list[Route] = []
    for path, content_type in LISTING_ALIASES.items():
        routes.append(Route(path, _api(fake, content_type, _list_pages(content_type), True)))
    for content_type, paths in {**PAGE_PATHS, **BLOG_PATHS}.items():
        for path in paths:
            routes.append(Route(path, _api(fake, content_type, _list_pages(content_type), True)))
            get_one = _api(fake, content_type, _get_page(content_type), False)
            routes.append(Route(path + "/{objectId}", get_one))
            if content_type.spec.batch_read:  # as HubSpot's specs have it
                read = _api(fake, content_type, _batch_read_pages(content_type), False)
                routes.append(Route(path + "/batch/read", read, methods=["POST"]))
    for path in HUBDB_PATHS:
        tables, rows = ContentType.HUBDB_TABLE, ContentType.HUBDB_ROW
        routes.append(Route(path, _api(fake, tables, _list_tables, True)))
        routes.append(Route(path + "/{table}", _api(fake, tables, _get_table, False)))
        routes.append(Route(path + "/{table}/rows", _api(fake, rows, _list_rows, True)))
        routes.append(Route(path + "/{table}/rows/{rowId}", _api(fake, rows, _get_row, False)))
        read_rows = _api(fake, rows, _batch_read_rows, False)
        routes.append(Route(path + "/{table}/rows/batch/read", read_rows, methods=["POST"]))
    for path in ACCOUNT_PATHS:
        routes.append(Route(path, _account_details(fake)))
    routes[:0] = write_routes(fake)  # first: …/rows/draft before …/rows/{rowId}
    routes.extend(admin_routes(fake))
    return FakeApp(
        routes=routes,
        exception_handlers={HTTPException: _http_error},  # type: ignore[dict-item]
    )


async def _http_error(request: Request, exc: HTTPException) -> Response:
    return json_response(exc.status_code, error_body(exc.status_code, request.url.path), {})


def _api(
    fake: FakeHubSpot, content_type: ContentType, produce: Produce, listing: bool
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        fault: FaultRule | None = None
        if request.method == "POST":
            request.state.inputs = await _batch_inputs(request)
        with fake.lock:
            portal_id = fake.authenticate(request.headers.get("authorization"))
            if portal_id is not None:
                verdict = fake.admit(portal_id)
                if listing and verdict.policy is None:
                    fault = fake.decide_fault(portal_id, content_type)
        delay_ms = fake.config.latency_ms
        if fault is not None and fault.kind is FaultKind.SLOW:
            delay_ms += fault.delay_ms
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        if portal_id is None:
            return json_response(401, error_body(401), {})
        headers = dict(verdict.headers)
        if verdict.policy is not None:
            response = _too_many(verdict.policy, verdict.retry_after_s, headers)
        elif fault is not None and fault.kind is FaultKind.RATE_LIMIT:
            response = _too_many(fault.policy, fault.retry_after_s, headers)
        elif fault is not None and fault.kind is FaultKind.STATUS:
            response = json_response(fault.status, error_body(fault.status), headers)
        else:
            with fake.lock:
                try:
                    response = produce(fake.portal(portal_id), request, fault)
                except BadRequest as exc:
                    response = json_response(400, error_body(400, str(exc)), {})
                except NotFound as exc:
                    response = json_response(404, error_body(404, str(exc)), {})
                if not listing:  # people edit what a client just read (EDIT_AFTER_READ)
                    fake.writes.after_read_request(portal_id, content_type, request, response)
            response.headers.update(headers)
        with fake.lock:
            fake.record(portal_id, content_type, response.status_code, verdict, fault)
        return response

    return endpoint


def _account_details(fake: FakeHubSpot) -> Callable[[Request], Awaitable[Response]]:
    """The account of the token's portal: its `portalId` and `timeZone` (no faults)."""

    async def endpoint(request: Request) -> Response:
        with fake.lock:
            portal_id = fake.authenticate(request.headers.get("authorization"))
            verdict = fake.admit(portal_id) if portal_id is not None else None
        if fake.config.latency_ms:
            await asyncio.sleep(fake.config.latency_ms / 1000)
        if portal_id is None or verdict is None:
            return json_response(401, error_body(401), {})
        headers = dict(verdict.headers)
        if verdict.policy is not None:
            response = _too_many(verdict.policy, verdict.retry_after_s, headers)
        else:
            with fake.lock:
                spec = fake.portal(portal_id).spec
                now = datetime.fromtimestamp(fake.clock(), UTC)
            response = json_response(
                200, account_details_body(portal_id, spec.time_zone, now), headers
            )
        with fake.lock:
            fake.record(portal_id, ACCOUNT_INFO, response.status_code, verdict, None)
        return response

    return endpoint


def _too_many(policy: str, retry_after_s: int | None, headers: dict[str, str]) -> Response:
    if retry_after_s is not None:
        headers = {**headers, "Retry-After": str(retry_after_s)}
    return json_response(429, rate_limit_body(policy), headers)


def _list_pages(content_type: ContentType) -> Produce:
    def produce(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
        query = parse_query(
            request.query_params,
            max_limit=PAGE_LIMIT,
            allow_offset=False,
            property_param="property",
        )
        return _listing(request, portal, portal.collection(content_type), query, fault, "")

    return produce


def _list_tables(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
    query = parse_query(
        request.query_params, max_limit=HUBDB_LIMIT, allow_offset=False, property_param="property"
    )
    tables = portal.collection(ContentType.HUBDB_TABLE)
    return _listing(request, portal, tables, query, fault, "")


def _list_rows(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
    table_slot = _live_table(portal, request)
    query = parse_query(
        request.query_params,
        max_limit=HUBDB_LIMIT,
        allow_offset=True,
        property_param="properties",
        time_filters=False,
    )
    # The spec's two row collections: RANDOM_ACCESS pages by offset, STREAMING by cursor.
    head = '"type":"RANDOM_ACCESS",' if query.offset is not None else '"type":"STREAMING",'
    collection = portal.collection(ContentType.HUBDB_ROW, table_slot)
    return _listing(request, portal, collection, query, fault, head)


def _live_table(portal: PortalModel, request: Request) -> int:
    found = portal.find_table(request.path_params["table"])
    if found is None or found[1]:
        raise NotFound(f"table {request.path_params['table']}")
    return found[0]


def _listing(
    request: Request,
    portal: PortalModel,
    collection: Collection,
    query: ListQuery,
    fault: FaultRule | None,
    head: str,
) -> Response:
    life, builder = collection.life, collection.builder
    kind = fault.kind if fault is not None else None
    if fault is not None and kind is FaultKind.DRIFT:
        life.drift(
            archived=query.archived,
            deleted=fault.deleted,
            created=fault.created,
            edited=fault.edited,
        )
    selection = collection.select(query, offsets=portal.offset_cursors)
    poisons = collection.poisons
    if query.properties:
        keep = set(query.properties)
        items = [
            encode_json(_only(obj, keep))
            for slot in selection.slots
            for obj in served_dicts(poisons, builder, life, slot)
        ]
    else:
        items = [
            text for slot in selection.slots for text in served_json(poisons, builder, life, slot)
        ]
    next_page: dict[str, Any] | None = None
    after, offset = selection.next_after, selection.next_offset
    if kind is FaultKind.REPEAT_CURSOR:
        after = query.after if query.after is not None else after
        offset = query.offset if query.offset is not None else offset
    if after is not None:
        next_page = {"after": after, "link": str(request.url.include_query_params(after=after))}
    elif offset is not None:
        next_page = {"offset": offset, "link": str(request.url.include_query_params(offset=offset))}
    paging = "," + json.dumps({"paging": {"next": next_page}})[1:-1] if next_page else ""
    total = selection.total
    if kind is FaultKind.NOT_JSON:
        return Response(_HTML_ERROR_PAGE, media_type="text/html")
    if kind is FaultKind.MISSING_RESULTS:
        body = f'{{{head}"total":{total}{paging}}}'
    elif kind is FaultKind.WRONG_TYPES:
        body = f'{{{head}"total":"{total}","results":"{len(items)} objects"{paging}}}'
    else:
        body = f'{{{head}"total":{total},"results":[{",".join(items)}]{paging}}}'
    if kind is FaultKind.TRUNCATED:
        body = body[: len(body) // 2]
    return Response(body, media_type="application/json;charset=utf-8")


def _only(obj: dict[str, Any], keep: set[str]) -> dict[str, Any]:
    """HubSpot's `property`/`properties` selection: pages keep the named fields (and id),
    rows keep the named columns in `values`."""
    if "values" in obj and "path" in obj:
        return {**obj, "values": {k: v for k, v in obj["values"].items() if k in keep}}
    return {k: v for k, v in obj.items() if k in keep or k == "id"}


def _archived_param(request: Request) -> bool:
    return request.query_params.get("archived", "false").lower() == "true"


def _get_page(content_type: ContentType) -> Produce:
    def produce(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
        found = portal.find_object(content_type, request.path_params["objectId"])
        return _one(found, request, "object")

    return produce


def _get_table(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
    found = portal.find_table(request.path_params["table"])
    if found is None:
        raise NotFound(f"table {request.path_params['table']}")
    return _one((portal.collection(ContentType.HUBDB_TABLE), found[0]), request, "table")


def _get_row(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
    table_slot = _live_table(portal, request)
    found = portal.find_object(ContentType.HUBDB_ROW, request.path_params["rowId"], table_slot)
    return _one(found, request, "row")


def _one(found: tuple[Collection, int] | None, request: Request, what: str) -> Response:
    if found is None or found[0].life.is_archived(found[1]) != _archived_param(request):
        raise NotFound(what)
    collection, slot = found
    served = served_json(collection.poisons, collection.builder, collection.life, slot)
    return Response(served[-1], media_type="application/json;charset=utf-8")


async def _batch_inputs(request: Request) -> list[str] | BadRequest:
    """The ids of a batch read's body (`BatchInputString`), or why HubSpot would refuse it."""
    try:
        body = json.loads(await request.body())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return BadRequest("the body is not JSON")
    inputs = body.get("inputs") if isinstance(body, dict) else None
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        return BadRequest("inputs must be a list of strings")
    if len(inputs) > BATCH_LIMIT:
        return BadRequest(f"at most {BATCH_LIMIT} inputs in one batch")
    return inputs


def _inputs(request: Request) -> list[str]:
    inputs: list[str] | BadRequest = request.state.inputs
    if isinstance(inputs, BadRequest):
        raise inputs
    return inputs


def _batch_read_pages(content_type: ContentType) -> Produce:
    def produce(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
        ids = _inputs(request)
        return _batch(request, ids, [portal.find_object(content_type, i) for i in ids])

    return produce


def _batch_read_rows(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
    # No `archived` here (the spec has none): the published rows of a live table.
    table_slot = _live_table(portal, request)
    ids = _inputs(request)
    found = [portal.find_object(ContentType.HUBDB_ROW, i, table_slot) for i in ids]
    return _batch(request, ids, found, archived=False)


def _batch(
    request: Request,
    ids: list[str],
    found: list[tuple[Collection, int] | None],
    archived: bool | None = None,
) -> Response:
    """A batch read's answer: 200 with every object asked for, else 207 with the rest named
    in one OBJECT_NOT_FOUND error (`bodies.batch_read_response`)."""
    wanted = _archived_param(request) if archived is None else archived
    results: list[str] = []
    missing: list[str] = []
    for object_id, hit in zip(ids, found, strict=True):
        if hit is None or hit[0].life.is_archived(hit[1]) != wanted:
            missing.append(object_id)
        else:
            collection, slot = hit
            served = served_json(collection.poisons, collection.builder, collection.life, slot)
            results.append(served[-1])
    return batch_read_response(results, missing)
