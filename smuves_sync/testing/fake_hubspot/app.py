"""The Starlette app: HubSpot's CMS listing endpoints (v3 and 2026-03) plus /_fake admin calls.

Pages, posts, blog authors, tags, blogs and redirects are listed and read alike (`_list_pages`,
`_get_page`); HubDB tables and rows have their own handlers.

Every API request goes through the same steps: bearer token -> portal (401), the portal's
limits (429 + X-HubSpot-RateLimit-* headers on every answer), an injected fault if one fires,
the configured latency, then the listing itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.admin import admin_routes
from smuves_sync.testing.fake_hubspot.bodies import error_body, json_response, rate_limit_body
from smuves_sync.testing.fake_hubspot.content import encode_json
from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot
from smuves_sync.testing.fake_hubspot.poison import served_dicts, served_json
from smuves_sync.testing.fake_hubspot.portal import PortalModel
from smuves_sync.testing.fake_hubspot.query import BadRequest, Collection, ListQuery, parse_query
from smuves_sync.testing.fake_hubspot.spec import FaultKind, FaultRule

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
PAGE_LIMIT = 100
HUBDB_LIMIT = 1000
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
    for path in HUBDB_PATHS:
        tables, rows = ContentType.HUBDB_TABLE, ContentType.HUBDB_ROW
        routes.append(Route(path, _api(fake, tables, _list_tables, True)))
        routes.append(Route(path + "/{table}", _api(fake, tables, _get_table, False)))
        routes.append(Route(path + "/{table}/rows", _api(fake, rows, _list_rows, True)))
        routes.append(Route(path + "/{table}/rows/{rowId}", _api(fake, rows, _get_row, False)))
    routes.extend(admin_routes(fake))
    return Starlette(
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
            response.headers.update(headers)
        with fake.lock:
            fake.record(portal_id, content_type, response.status_code, verdict, fault)
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
        return _listing(request, portal.collection(content_type), query, fault, "")

    return produce


def _list_tables(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
    query = parse_query(
        request.query_params, max_limit=HUBDB_LIMIT, allow_offset=False, property_param="property"
    )
    return _listing(request, portal.collection(ContentType.HUBDB_TABLE), query, fault, "")


def _list_rows(portal: PortalModel, request: Request, fault: FaultRule | None) -> Response:
    table_slot = _live_table(portal, request)
    query = parse_query(
        request.query_params, max_limit=HUBDB_LIMIT, allow_offset=True, property_param="properties"
    )
    # The spec's two row collections: RANDOM_ACCESS pages by offset, STREAMING by cursor.
    head = '"type":"RANDOM_ACCESS",' if query.offset is not None else '"type":"STREAMING",'
    collection = portal.collection(ContentType.HUBDB_ROW, table_slot)
    return _listing(request, collection, query, fault, head)


def _live_table(portal: PortalModel, request: Request) -> int:
    found = portal.find_table(request.path_params["table"])
    if found is None or found[1]:
        raise NotFound(f"table {request.path_params['table']}")
    return found[0]


def _listing(
    request: Request,
    collection: Collection,
    query: ListQuery,
    fault: FaultRule | None,
    head: str,
) -> Response:
    selection = collection.select(query)
    life, builder = collection.life, collection.builder
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
    kind = fault.kind if fault is not None else None
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
