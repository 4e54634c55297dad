"""Every error answer of the API is ``{"code": …, "message": …}``; this module makes them.

    raise ApiError(404, "NOT_FOUND", f"run {run_id} not found")

Handlers turn the package's errors (`NotFound` 404, `NotPermitted` 403 FORBIDDEN,
`AllDuplicateJobs` 409, `InvalidInput` 422, `PortalNeedsReconnect` 422), FastAPI's validation
errors (422, the message names each bad field), Starlette's HTTP errors (unknown path, wrong
method), an unreachable database (503) and anything unexpected (500, logged with its
traceback, never shown) into that shape.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from smuves_sync.errors import (
    AllDuplicateJobs,
    DatabaseRefused,
    DatabaseUnavailable,
    InvalidInput,
    NotFound,
    NotPermitted,
    PortalNeedsReconnect,
)

log = logging.getLogger(__name__)

T = TypeVar("T")


class ErrorBody(BaseModel):
    """An error: a stable machine-readable code and a message for a person."""

    code: str = Field(examples=["NOT_FOUND"])
    message: str = Field(examples=["run 42 not found"])


class DuplicateJobsBody(ErrorBody):
    """409 ALL_DUPLICATE_JOBS: every requested type is in flight, held by `run_ids`."""

    run_ids: list[int] = Field(examples=[[17]])


class ApiError(Exception):
    """An error answer the handlers render as `ErrorBody`."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


def not_found(what: str) -> ApiError:
    """404 for something absent, or somebody else's: the two must look alike."""
    return ApiError(404, "NOT_FOUND", f"{what} not found")


def found(value: T | None, what: str) -> T:
    """`value`, read as the caller; None (absent or not theirs) is the 404 naming `what`."""
    if value is None:
        raise not_found(what)
    return value


def error_response(
    status: int, code: str, message: str, *, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    """The JSON response of an error."""
    return JSONResponse({"code": code, "message": message, **extra}, status, headers=headers)


def _field(location: Sequence[int | str]) -> str:
    # ("body", "content_types", 0) -> "content_types[0]"; path and query names stay bare.
    parts = list(location[1:]) if location and location[0] in ("body", "query", "path") else []
    if not parts:
        return "body" if location and location[0] == "body" else ".".join(map(str, location))
    name = str(parts[0])
    for part in parts[1:]:
        name += f"[{part}]" if isinstance(part, int) else f".{part}"
    return name


def validation_message(errors: Sequence[Any]) -> str:
    """One line naming every field that failed, and why."""
    found = []
    for error in errors:
        field = _field(error.get("loc", ()))
        found.append(f"{field}: {error.get('msg', 'invalid')}")
    return "; ".join(found) or "the request is not valid"


_STATUS_CODES = {
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}


async def _api_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.code, exc.message, headers=exc.headers)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, "INVALID_INPUT", validation_message(exc.errors()))


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:
        # FastAPI's answer to a body it cannot even decode: invalid input, like any other.
        return error_response(422, "INVALID_INPUT", f"body: {exc.detail}")
    code = _STATUS_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
    headers = dict(exc.headers) if exc.headers else None
    return error_response(exc.status_code, code, str(exc.detail), headers=headers)


async def _not_found(_: Request, exc: Exception) -> JSONResponse:
    return error_response(404, "NOT_FOUND", str(exc))


async def _not_permitted(_: Request, exc: Exception) -> JSONResponse:
    return error_response(403, "FORBIDDEN", str(exc))


async def _duplicates(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AllDuplicateJobs)
    return error_response(409, exc.code, str(exc), run_ids=list(exc.run_ids))


async def _needs_reconnect(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PortalNeedsReconnect)
    return error_response(422, exc.code, str(exc))


async def _invalid(_: Request, exc: Exception) -> JSONResponse:
    return error_response(422, "INVALID_INPUT", str(exc))


async def _database_down(_: Request, exc: Exception) -> JSONResponse:
    log.warning("database unavailable: %s", exc)
    return error_response(503, "DATABASE_UNAVAILABLE", "the database cannot be reached; retry")


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.error("unexpected error", exc_info=exc)
    return error_response(500, "INTERNAL_ERROR", "internal error; it has been logged")


def install_error_handlers(app: FastAPI) -> None:
    """Register every handler above on `app`."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(AllDuplicateJobs, _duplicates)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(PortalNeedsReconnect, _needs_reconnect)
    app.add_exception_handler(NotPermitted, _not_permitted)
    app.add_exception_handler(InvalidInput, _invalid)
    app.add_exception_handler(DatabaseUnavailable, _database_down)
    # A refusal `Database.as_user` did not recognise as a viewer's is this service's fault,
    # not the caller's: it is no 403 (a DatabaseRefused is also a NotPermitted).
    app.add_exception_handler(DatabaseRefused, _unexpected)
    app.add_exception_handler(Exception, _unexpected)


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries documenting `statuses` with the error body."""
    described = {
        401: "Missing, malformed, wrongly signed or expired bearer token",
        403: "Not allowed for your role in this portal",
        404: "Not found (or not yours: the two look alike)",
        409: "Conflicts with the current state",
        410: "Gone",
        413: "The request body is larger than the server accepts (1 MiB unless configured)",
        422: "Invalid input; the message names the field",
        502: "HubSpot could not be asked (HUBSPOT_UNAVAILABLE); try again shortly",
        503: "The database cannot be reached",
    }
    return {
        status: {"model": ErrorBody, "description": described.get(status, "Error")}
        for status in statuses
    }
