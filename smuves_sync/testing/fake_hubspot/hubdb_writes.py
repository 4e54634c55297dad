"""HubDB's write endpoints: rows are written to the table's draft, publishing copies it.

    GET   /tables/{t}/rows/draft                   the draft table's rows (a listing)
    GET   /tables/{t}/rows/{rowId}/draft           the row in the draft table
    PATCH /tables/{t}/rows/{rowId}/draft           sparse by key and by cell -> 200 draft row
    POST  /tables/{t}/rows/draft/batch/update      ≤ 100 inputs {id, values, …} -> 200 / 207
    POST  /tables/{t}/rows/draft/batch/read        the draft rows -> 200 / 207 (not found)
    GET   /tables/{t}/draft                        the draft table (updatedAt moved by edits)
    POST  /tables/{t}/draft/publish                draft rows -> published -> 200 table
    POST  /tables/{t}/draft/reset                  drop the draft's edits -> 200 table

The rows listing, `GET …/rows/{rowId}` and `rows/batch/read` serve the published rows. Whether
a table's draft holds unpublished edits shows as HubSpot shows it: the draft rows differ from
the published ones, and the draft table's `updatedAt` is later than its `publishedAt`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.content import encode_json
from smuves_sync.testing.fake_hubspot.portal import PortalModel
from smuves_sync.testing.fake_hubspot.query import BadRequest, Collection, parse_query
from smuves_sync.testing.fake_hubspot.text import iso_ms
from smuves_sync.testing.fake_hubspot.write_http import (
    BATCH_LIMIT,
    Call,
    WriteNotFound,
    batch_error,
    batch_inputs,
    batch_response,
    endpoint,
    now_text,
)
from smuves_sync.testing.fake_hubspot.write_ops import InputError, row_fields

HUBDB_PATHS = ("/cms/v3/hubdb/tables", "/cms/hubdb/2026-03/tables")
ROWS, TABLES = ContentType.HUBDB_ROW, ContentType.HUBDB_TABLE


def hubdb_write_routes(fake: Any) -> list[Route]:
    """The HubDB draft and publish routes, bound to one fake."""
    routes: list[Route] = []
    for base in HUBDB_PATHS:
        table = base + "/{table}"
        entries = [
            (table + "/rows/draft", list_draft_rows, "GET", False, ROWS, _no_ids),
            (table + "/rows/{rowId}/draft", get_row_draft, "GET", False, ROWS, _row_id),
            (table + "/rows/{rowId}/draft", patch_row_draft, "PATCH", True, ROWS, _row_id),
            (table + "/rows/draft/batch/update", batch_update_rows, "POST", True, ROWS, _rows),
            (table + "/rows/draft/batch/read", batch_read_rows, "POST", False, ROWS, _read_ids),
            (table + "/draft", get_table_draft, "GET", False, TABLES, _table_id),
            (table + "/draft/publish", publish, "POST", True, TABLES, _table_id),
            (table + "/draft/reset", reset, "POST", True, TABLES, _table_id),
        ]
        for path, op, method, write, content_type, ids in entries:
            reads = content_type is ROWS  # the table's own reads serve no row
            handler = endpoint(fake, content_type, op, ids, write=write, reads_objects=reads)
            routes.append(Route(path, handler, methods=[method]))
    return routes


def _table(portal: PortalModel, request: Request) -> tuple[int, str]:
    found = portal.find_table(request.path_params["table"])
    if found is None or found[1]:
        raise WriteNotFound(f"table {request.path_params['table']}")
    return found[0], portal.collection(TABLES).builder.id_of(found[0])


def _prefix(portal: PortalModel, request: Request) -> str:
    found = portal.find_table(request.path_params["table"])
    if found is None:
        return "?:"
    return portal.collection(TABLES).builder.id_of(found[0]) + ":"


def _no_ids(portal: PortalModel, request: Request, body: Any) -> list[str]:
    return []  # a listing: people's edits follow by-id and batch reads only


def _row_id(portal: PortalModel, request: Request, body: Any) -> list[str]:
    return [_prefix(portal, request) + request.path_params["rowId"]]


def _table_id(portal: PortalModel, request: Request, body: Any) -> list[str]:
    return [_prefix(portal, request).rstrip(":")]


def _rows(portal: PortalModel, request: Request, body: Any) -> list[str]:
    inputs = body.get("inputs") if isinstance(body, dict) else None
    prefix = _prefix(portal, request)
    if not isinstance(inputs, list):
        return []
    return [prefix + str(i["id"]) for i in inputs if isinstance(i, dict) and "id" in i]


def _read_ids(portal: PortalModel, request: Request, body: Any) -> list[str]:
    inputs = body.get("inputs") if isinstance(body, dict) else None
    prefix = _prefix(portal, request)
    return [prefix + i for i in inputs if isinstance(i, str)] if isinstance(inputs, list) else []


def _row(call: Call, table_slot: int, row_id: str) -> tuple[Collection, int]:
    found = call.portal.find_object(ROWS, row_id, table_slot)
    if found is None or found[0].life.is_archived(found[1]):
        raise WriteNotFound(f"row {row_id}")
    return found


def _draft_json(found: tuple[Collection, int]) -> dict[str, Any]:
    collection, slot = found
    published = collection.builder.as_dict(collection.life, slot)
    return collection.builder.overlay.draft_row(slot, published)


def _json(obj: dict[str, Any]) -> Response:
    return Response(encode_json(obj), media_type="application/json;charset=utf-8")


def list_draft_rows(call: Call) -> Response:
    """GET …/rows/draft: the draft rows in creation order, paged as the published listing
    is (`limit`, `offset` or `after`; sorts and filters by the published values)."""
    table_slot, _ = _table(call.portal, call.request)
    query = parse_query(
        call.request.query_params, max_limit=1000, allow_offset=True, property_param="properties"
    )
    rows = call.portal.collection(ROWS, table_slot)
    selection = rows.select(query, offsets=call.portal.offset_cursors)
    results = [_draft_json((rows, slot)) for slot in selection.slots]
    body: dict[str, Any] = {"total": selection.total, "results": results}
    body["type"] = "RANDOM_ACCESS" if query.offset is not None else "STREAMING"
    if selection.next_after is not None:
        body["paging"] = {"next": {"after": selection.next_after}}
    elif selection.next_offset is not None:
        body["paging"] = {"next": {"offset": selection.next_offset}}
    return _json(body)


def get_row_draft(call: Call) -> Response:
    """GET …/rows/{rowId}/draft."""
    table_slot, _ = _table(call.portal, call.request)
    return _json(_draft_json(_row(call, table_slot, call.request.path_params["rowId"])))


def _row_write(call: Call, table_slot: int, table_id: str, row_id: str, body: Any) -> Any:
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    found = _row(call, table_slot, row_id)
    if f"{table_id}:{row_id}" in call.fired.refused:
        raise InputError(f"row {row_id} was refused")
    fields = row_fields(body, call.portal.columns(table_slot))
    row = call.writer.row_draft(found, fields)
    call.note("row_draft", f"{table_id}:{row_id}", fields)
    return row


def patch_row_draft(call: Call) -> Response:
    """PATCH …/rows/{rowId}/draft: the keys and cells sent replace the draft row's."""
    table_slot, table_id = _table(call.portal, call.request)
    row_id = call.request.path_params["rowId"]
    return _json(_row_write(call, table_slot, table_id, row_id, call.body))


def batch_update_rows(call: Call) -> Response:
    """POST …/rows/draft/batch/update (≤ 100, as the spec says)."""
    table_slot, table_id = _table(call.portal, call.request)
    started = now_text()
    results: list[str] = []
    errors: list[dict[str, Any]] = []
    for row_id, item in batch_inputs(call.body):
        try:
            results.append(encode_json(_row_write(call, table_slot, table_id, row_id, item)))
        except WriteNotFound:
            errors.append(batch_error("OBJECT_NOT_FOUND", f"row {row_id} does not exist", row_id))
        except InputError as exc:
            errors.append(batch_error(exc.category, str(exc), row_id, exc.field))
    return batch_response(started, results, errors)


def batch_read_rows(call: Call) -> Response:
    """POST …/rows/draft/batch/read: the draft rows asked for; 207 names those not found."""
    table_slot, _ = _table(call.portal, call.request)
    inputs = call.body.get("inputs") if isinstance(call.body, dict) else None
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise BadRequest("inputs must be a list of strings")
    if len(inputs) > BATCH_LIMIT:
        raise BadRequest(f"at most {BATCH_LIMIT} inputs in one batch")
    started = now_text()
    results: list[str] = []
    missing: list[str] = []
    for row_id in inputs:
        try:
            results.append(encode_json(_draft_json(_row(call, table_slot, row_id))))
        except WriteNotFound:
            missing.append(row_id)
    errors = []
    if missing:
        error = batch_error("OBJECT_NOT_FOUND", f"Could not find {len(missing)} rows", missing[0])
        error["context"] = {"ids": missing}
        errors.append(error)
    return batch_response(started, results, errors)


def _table_json(call: Call, table_slot: int, draft: bool) -> Response:
    tables = call.portal.collection(TABLES)
    table = tables.builder.as_dict(tables.life, table_slot)
    overlay = call.portal.collection(ROWS, table_slot).builder.overlay
    if draft and overlay.row_drafts:
        # The draft table was edited after it was last published.
        edited = max(edit.updated_ms for edit in overlay.row_drafts.values())
        table = {**table, "updatedAt": iso_ms(max(edited, _ms(table["updatedAt"])))}
    return _json(table)


def _ms(text: str) -> int:
    return round(datetime.fromisoformat(text).timestamp() * 1000)


def get_table_draft(call: Call) -> Response:
    """GET /tables/{t}/draft."""
    table_slot, _ = _table(call.portal, call.request)
    return _table_json(call, table_slot, draft=True)


def publish(call: Call) -> Response:
    """POST /tables/{t}/draft/publish: every draft row, ours or not, goes live."""
    table_slot, table_id = _table(call.portal, call.request)
    call.writer.publish(table_slot)
    call.note("publish", table_id, ())
    return _table_json(call, table_slot, draft=False)


def reset(call: Call) -> Response:
    """POST /tables/{t}/draft/reset: the draft equals the published table again."""
    table_slot, table_id = _table(call.portal, call.request)
    call.portal.collection(ROWS, table_slot).builder.overlay.row_drafts.clear()
    call.note("reset_draft", table_id, ())
    return _table_json(call, table_slot, draft=False)
