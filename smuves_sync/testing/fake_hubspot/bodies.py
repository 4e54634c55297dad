"""HubSpot's error bodies (the specs' `Error` schema plus the documented `status` field and,
for 429s, `errorType`, `policyName` and `requestId`). Never echoes a token."""

from __future__ import annotations

import json
import uuid
from typing import Any

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
