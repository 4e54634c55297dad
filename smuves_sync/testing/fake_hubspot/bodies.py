"""HubSpot's error bodies (the specs' `Error` schema plus the documented `status` field and,
for 429s, `errorType`, `policyName` and `requestId`), the account details of a portal
(`PortalInformationResponse` of the AccountInfo spec) and a batch read's answer. Never echoes
a token."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from starlette.responses import Response

_CATEGORY = {
    400: "VALIDATION_ERROR",
    401: "INVALID_AUTHENTICATION",
    403: "MISSING_SCOPES",
    404: "OBJECT_NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    423: "LOCKED",
    429: "RATE_LIMITS",
    477: "MIGRATION_IN_PROGRESS",
}
_MESSAGE = {
    400: "Invalid input: {detail}",
    401: "Authentication credentials not found or no longer valid.",
    403: "This app hasn't been granted all required scopes to make this call.",
    404: "Resource not found: {detail}",
    405: "This HTTP method is not supported here.",
    423: "The resource is locked; try again shortly.",
    477: "The portal is being migrated; try again later.",
}
_RATE_MESSAGE = {
    "TEN_SECONDLY_ROLLING": "You have reached your ten_secondly_rolling limit.",
    "SECONDLY": "You have reached your secondly limit.",
    "DAILY": "You have reached your daily limit.",
}


def error_body(status: int, detail: str = "", **extra: Any) -> dict[str, Any]:
    """The JSON error HubSpot sends with this status."""
    category = _CATEGORY.get(status, "INTERNAL_ERROR" if status >= 500 else "ERROR")
    template = _MESSAGE.get(status, "Internal error; the request may be retried ({status}).")
    body: dict[str, Any] = {
        "status": "error",
        "message": template.format(detail=detail, status=status),
        "correlationId": str(uuid.uuid4()),
        "category": category,
    }
    if status == 403:
        body["context"] = {"requiredScopes": ["content"]}
    body.update(extra)
    return body


def rate_limit_body(policy: str) -> dict[str, Any]:
    """The 429 body naming the limit that was hit."""
    return error_body(
        429,
        message=_RATE_MESSAGE.get(policy, f"You have reached your {policy.lower()} limit."),
        errorType="RATE_LIMIT",
        policyName=policy,
        requestId=str(uuid.uuid4()),
    )


def json_response(status: int, body: dict[str, Any], headers: dict[str, str]) -> Response:
    """A JSON response with HubSpot's content type."""
    return Response(
        json.dumps(body, separators=(",", ":")),
        status_code=status,
        headers=headers,
        media_type="application/json;charset=utf-8",
    )


def account_details_body(portal_id: int, time_zone: str, now: datetime) -> dict[str, Any]:
    """GET /account-info/v3/details for the portal a token belongs to, its offset as of `now`."""
    offset = now.astimezone(ZoneInfo(time_zone)).utcoffset()
    milliseconds = int(offset.total_seconds() * 1000) if offset is not None else 0
    sign = "-" if milliseconds < 0 else "+"
    minutes = abs(milliseconds) // 60_000
    return {
        "portalId": portal_id,
        "accountType": "STANDARD",
        "timeZone": time_zone,
        "companyCurrency": "USD",
        "additionalCurrencies": [],
        "utcOffset": f"{sign}{minutes // 60:02d}:{minutes % 60:02d}",
        "utcOffsetMilliseconds": milliseconds,
        "uiDomain": "app.hubspot.com",
        "dataHostingLocation": "na1",
    }


def batch_read_response(results: list[str], missing: list[str]) -> Response:
    """A batch read's answer from the served JSON of the objects found: 200, else 207 with the
    ids not found named in one OBJECT_NOT_FOUND error (BatchResponse…, …WithErrors)."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    head: dict[str, Any] = {
        "status": "COMPLETE",
        "requestedAt": now,
        "startedAt": now,
        "completedAt": now,
    }
    if missing:
        head["numErrors"] = 1
        head["errors"] = [
            {
                "status": "error",
                "category": "OBJECT_NOT_FOUND",
                "message": f"Could not find {len(missing)} of the objects asked for",
                "context": {"ids": missing},
                "errors": [],
                "links": {},
            }
        ]
    body = json.dumps(head)[:-1] + ',"results":[' + ",".join(results) + "]}"
    return Response(
        body, status_code=207 if missing else 200, media_type="application/json;charset=utf-8"
    )
