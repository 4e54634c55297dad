"""The request pipeline of the write endpoints (and the draft and revision reads beside them).

Every request: bearer token -> portal (401), the portal's limits (429 + X-HubSpot-RateLimit-*
headers, nothing processed), the configured latency, the body parsed (400 when it is not JSON),
then the write faults (write_faults.py) decided on the ids it names: a fault before processing
answers without committing; otherwise the operation runs and commits under the fake's lock;
a commit-then fault replaces the answer (a status, or a dropped connection).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.bodies import error_body, json_response, rate_limit_body
from smuves_sync.testing.fake_hubspot.portal import PortalModel
from smuves_sync.testing.fake_hubspot.query import BadRequest
from smuves_sync.testing.fake_hubspot.write_faults import Fired, WriteFaultKind
from smuves_sync.testing.fake_hubspot.write_ops import InputError, Writer

if TYPE_CHECKING:
    from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot

RAW_SEND = "fake_hubspot.raw_send"
BATCH_LIMIT = 100  # inputs of one batch update or read


class WriteNotFound(Exception):
    """The object, table or row does not exist (or is archived and not asked for)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One request as an operation sees it."""

    fake: FakeHubSpot
    portal_id: int
    portal: PortalModel
    writer: Writer
    content_type: ContentType
    request: Request
    body: Any
    fired: Fired

    @property
    def archived(self) -> bool:
        """The `archived` query parameter (an archived object is edited only with it)."""
        return self.request.query_params.get("archived", "false").lower() == "true"

    def note(self, op: str, object_id: str, keys: Any) -> None:
        """Log a committed write."""
        self.fake.writes.note(self.portal_id, op, self.content_type, object_id, keys)


Op = Callable[[Call], Response]
IdsOf = Callable[[PortalModel, Request, Any], list[str]]


class FakeApp(Starlette):
    """Starlette, keeping the server's own `send` in the scope so an answer can be dropped."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[RAW_SEND] = send
        await super().__call__(scope, receive, send)


class DroppedResponse(Response):
    """No answer at all: the connection is closed under the client (a lost answer)."""

    def __init__(self) -> None:
        super().__init__(b"", status_code=599)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cycle: Any = getattr(scope.get(RAW_SEND), "__self__", None)
        transport = getattr(cycle, "transport", None)
        if transport is not None and hasattr(cycle, "disconnected"):
            cycle.disconnected = True  # uvicorn sends nothing more on this cycle
            transport.abort()
            return
        # Another server: start an answer it cannot finish, which closes the connection.
        headers = [(b"content-length", b"1000")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        raise ConnectionAbortedError("dropped on purpose")


def input_error(status: int, error: InputError) -> Response:
    """HubSpot's error body for one refused write, naming the field at fault."""
    detail = {"message": str(error), "code": error.category}
    if error.field:
        detail["in"] = error.field
    extra: dict[str, Any] = {"errors": [detail]}
    if error.field:
        extra["context"] = {"properties": [error.field]}
    body = error_body(status, str(error), **extra)
    body["category"] = error.category
    return json_response(status, body, {})


def endpoint(
    fake: FakeHubSpot,
    content_type: ContentType,
    op: Op,
    ids_of: IdsOf,
    *,
    write: bool,
    reads_objects: bool = True,
) -> Callable[[Request], Awaitable[Response]]:
    """An ASGI endpoint running `op` through the pipeline (`write`: the write faults apply;
    otherwise it is a read, after which people may edit what it served, unless it does not
    serve the objects themselves: `reads_objects=False`)."""

    async def handle(request: Request) -> Response:
        raw = await request.body()
        with fake.lock:
            portal_id = fake.authenticate(request.headers.get("authorization"))
            verdict = fake.admit(portal_id) if portal_id is not None else None
        if fake.config.latency_ms:
            await asyncio.sleep(fake.config.latency_ms / 1000)
        if portal_id is None or verdict is None:
            return json_response(401, error_body(401), {})
        headers = dict(verdict.headers)
        with fake.lock:
            if verdict.policy is not None:
                response = json_response(429, rate_limit_body(verdict.policy), {})
                if verdict.retry_after_s is not None:
                    headers["Retry-After"] = str(verdict.retry_after_s)
            else:
                response = _answer(
                    fake,
                    portal_id,
                    content_type,
                    op,
                    ids_of,
                    request,
                    raw,
                    Mode(write, reads_objects),
                )
            fake.record(portal_id, content_type, response.status_code, verdict, None)
            if write:
                fake.writes.count(portal_id, "write_requests")
        response.headers.update(headers)
        return response

    return handle


@dataclass(frozen=True, slots=True)
class Mode:
    """Whether a request writes (write faults apply) and whether it serves objects (people
    may edit what it read)."""

    write: bool
    reads_objects: bool


def _answer(
    fake: FakeHubSpot,
    portal_id: int,
    content_type: ContentType,
    op: Op,
    ids_of: IdsOf,
    request: Request,
    raw: bytes,
    mode: Mode,
) -> Response:
    write = mode.write
    portal = fake.portal(portal_id)
    writes = fake.writes
    fired = Fired()
    try:
        body = _parse(raw)
        ids = ids_of(portal, request, body)
        if write:
            fired = writes.plan.decide(portal_id, content_type, ids)
            before = _before(fired)
            if before is not None:
                writes.count(portal_id, f"fault_{fired.before.kind}")  # type: ignore[union-attr]
                return before
        call = Call(
            fake, portal_id, portal, writes.writer(portal_id), content_type, request, body, fired
        )
        response = op(call)
    except BadRequest as exc:
        return json_response(400, error_body(400, str(exc)), {})
    except InputError as exc:
        return input_error(400, exc)
    except WriteNotFound as exc:
        return json_response(404, error_body(404, str(exc)), {})
    if not write and mode.reads_objects and response.status_code in (200, 207):
        writes.after_read(portal_id, content_type, ids)
    if fired.refused:
        writes.count(portal_id, "fault_refuse_input", len(fired.refused))
    if fired.after is not None:
        writes.count(portal_id, f"fault_{fired.after.kind}")
        if fired.after.kind is WriteFaultKind.COMMIT_THEN_DROP:
            return DroppedResponse()
        return json_response(fired.after.status, error_body(fired.after.status), {})
    return response


def _before(fired: Fired) -> Response | None:
    rule = fired.before
    if rule is None:
        return None
    if rule.kind is WriteFaultKind.RATE_LIMIT:
        return json_response(429, rate_limit_body(rule.policy), {})
    if rule.kind is WriteFaultKind.REJECT_BATCH:
        # As HubSpot's answer does, it does not say which input is at fault.
        return json_response(400, error_body(400, "the request body could not be processed"), {})
    return json_response(rule.status, error_body(rule.status), {})


def _parse(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BadRequest("the body is not JSON") from None


def batch_inputs(body: Any) -> list[tuple[str, dict[str, Any]]]:
    """(id, input) of a batch update's body, or BadRequest as HubSpot refuses it whole."""
    inputs = body.get("inputs") if isinstance(body, dict) else None
    if not isinstance(inputs, list):
        raise BadRequest("inputs must be a list of objects")
    if len(inputs) > BATCH_LIMIT:
        raise BadRequest(f"at most {BATCH_LIMIT} inputs in one batch")
    parsed: list[tuple[str, dict[str, Any]]] = []
    for number, item in enumerate(inputs):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str | int):
            raise BadRequest(f"input {number} has no id")
        parsed.append((str(item["id"]), item))
    if len({object_id for object_id, _ in parsed}) != len(parsed):
        raise BadRequest("an id appears twice in the batch")
    return parsed


def batch_response(started: str, results: list[str], errors: list[dict[str, Any]]) -> Response:
    """BatchResponse… (200) or BatchResponse…WithErrors (207)."""
    head: dict[str, Any] = {
        "status": "COMPLETE",
        "requestedAt": started,
        "startedAt": started,
        "completedAt": now_text(),
    }
    if errors:
        head["numErrors"] = len(errors)
        head["errors"] = errors
    body = json.dumps(head)[:-1] + ',"results":[' + ",".join(results) + "]}"
    return Response(body, 207 if errors else 200, media_type="application/json;charset=utf-8")


def batch_error(category: str, message: str, object_id: str, field: str = "") -> dict[str, Any]:
    detail: dict[str, Any] = {"message": message}
    if field:
        detail["in"] = field
    return {
        "status": "error",
        "category": category,
        "message": message,
        "context": {"ids": [object_id]},
        "errors": [detail],
        "links": {},
    }


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
