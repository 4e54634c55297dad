"""Reading HubSpot's answers: JSON bodies, error bodies, and which typed error a status means.

Bodies are read as a stream and never past a byte limit (`read_capped`), so an answer of any
size costs at most the limit in memory, and parsed only when they hold no more than
`MAX_BODY_VALUES` JSON values (`json_object`): bytes alone do not bound what parsing takes,
since a byte or two of JSON can become an object of a hundred. HubSpot's error body (the
`Error` schema) carries `message`, `correlationId`, `category` and, on a 429, `policyName`.
Text taken from a body is shortened and scrubbed of the token before it goes into an
exception, in case a body ever echoes a credential back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from smuves_sync.errors import (
    ContentTypeUnavailable,
    HubSpotAuthError,
    HubSpotBadRequest,
    HubSpotError,
    HubSpotNotFound,
    HubSpotRetryableError,
    HubSpotUnavailable,
)

# Locked (423) and HubSpot's own 477 ("migration in progress") pass with time, like a 5xx.
RETRYABLE_CLIENT_STATUSES = frozenset({423, 477})
# What HubSpot's front answers when the service behind it is down or overloaded: an outage,
# not this request's fault (a 500 may be one request's own, and is retried as such).
OUTAGE_STATUSES = frozenset({502, 503, 504})
_MAX_MESSAGE = 300
# The most JSON values (objects, arrays, their members and elements, keys counted) a body may
# hold to be parsed. orjson builds the whole tree at once, at up to about 90 bytes a value, so
# bytes alone bound memory poorly: 50 MB of tiny objects ({"a":1}) are 25 million values and
# took 1.5 GB, where 50 MB of text takes about 50 MB. Two million values took at most 170 MB
# (short strings), and are ten times a page of 100 large site pages (about 2,000 values each)
# or of 1,000 HubDB rows of 100 columns.
MAX_BODY_VALUES = 2_000_000
# A JSON string, escapes and all (written so that the regex engine never backtracks).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
# Text and whole strings up to the first string that does not end (or the end).
_WHOLE_STRINGS = re.compile(rb'(?>[^"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+')
# Bodies are counted without their strings this much at a time, so that the pieces the count
# makes stay small however many strings a body has.
_COUNT_WINDOW = 1 << 20


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """The parts of an error body a person needs; every field may be missing."""

    message: str | None = None
    correlation_id: str | None = None
    category: str | None = None
    policy: str | None = None


def is_retryable_status(status: int) -> bool:
    """True for statuses that may succeed when simply asked again (5xx, 423, 477)."""
    return status >= 500 or status in RETRYABLE_CLIENT_STATUSES


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """The streamed `response`'s body, decoded, and whether it was complete.

    Reading stops as soon as the body is known to exceed `limit` bytes (at once when its
    Content-Length says so): what was read, cut to `limit`, comes back with False.
    """
    declared = response.headers.get("Content-Length", "")
    if declared.strip().isdigit() and int(declared) > limit:
        return b"", False
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            return bytes(body[:limit]), False
    return bytes(body), True


def read_error(content: bytes, headers: Mapping[str, str], secret: str) -> ErrorInfo:
    """Pull message, correlationId, category and policyName out of an error answer."""
    header_id = headers.get("X-HubSpot-Correlation-Id")
    try:
        body = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        text = content[:_MAX_MESSAGE].decode("utf-8", "replace").strip()
        return ErrorInfo(message=scrub(text, secret) or None, correlation_id=header_id)

    def text_field(key: str) -> str | None:
        value = body.get(key)
        return scrub(str(value)[:_MAX_MESSAGE], secret) if value is not None else None

    return ErrorInfo(
        message=text_field("message"),
        correlation_id=text_field("correlationId") or header_id,
        category=text_field("category") or text_field("errorType"),
        policy=text_field("policyName"),
    )


def error_for_status(status: int, info: ErrorInfo, request: str, **context: Any) -> HubSpotError:
    """The typed error for a non-429 failure status (`context`: portal_id, content_type)."""
    said = f": {info.message}" if info.message else ""
    kwargs: dict[str, Any] = {"status": status, "correlation_id": info.correlation_id, **context}
    if status == 400:
        return HubSpotBadRequest(f"HubSpot rejected {request} as invalid{said}", **kwargs)
    if status == 401:
        return HubSpotAuthError(
            f"HubSpot refused the portal's token for {request} (revoked, expired or wrong); "
            f"reconnect the portal{said}",
            **kwargs,
        )
    if status == 403:
        return ContentTypeUnavailable(
            f"this content type is unavailable for the portal: the token lacks a scope or the "
            f"portal's plan lacks the product ({request}){said}",
            **kwargs,
        )
    if status == 404:
        return HubSpotNotFound(f"HubSpot has no such resource: {request}{said}", **kwargs)
    if status in OUTAGE_STATUSES:
        return HubSpotUnavailable(
            f"HubSpot failed {request} with a temporary error{said}",
            cause=f"HTTP {status}",
            **kwargs,
        )
    if is_retryable_status(status):
        return HubSpotRetryableError(
            f"HubSpot failed {request} with a temporary error{said}", **kwargs
        )
    return HubSpotError(f"HubSpot answered {request} with an unexpected status{said}", **kwargs)


def json_values(content: bytes) -> int:
    """How many values (and keys) the JSON text `content` holds, counted without parsing it:
    each member or element after a container's first is behind a comma, each key before a
    colon (an empty container counts one more than it holds)."""
    return (
        content.count(b",") + content.count(b":") + 2 * (content.count(b"{") + content.count(b"["))
    )


def _more_values_than(content: bytes, limit: int) -> bool:
    """Whether the body holds more than `limit` values. Counted first with strings and all
    (commas and colons in text count too, so it is never short), and only when that is over,
    again without the strings, a window at a time, stopping once past the limit."""
    if json_values(content) <= limit:
        return False
    counted, start, end = 0, 0, len(content)
    while start < end and counted <= limit:
        whole = _WHOLE_STRINGS.match(content, start, min(start + _COUNT_WINDOW, end))
        stop = whole.end() if whole else start
        if stop == start:  # a string longer than the window starts here: skip it whole
            string = _JSON_STRING.match(content, start)
            start = string.end() if string else end
            continue
        counted += json_values(_JSON_STRING.sub(b'""', content[start:stop]))
        start = stop
    return counted > limit


def json_object(content: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    """The body as a JSON object; ValueError when it is not JSON, not an object, or holds
    more than `MAX_BODY_VALUES` values (refused before it is parsed).

    orjson parses it (several times faster than the standard library on pages of large
    objects); what orjson refuses and the standard library reads (a lone surrogate escape, an
    integer beyond 64 bits, NaN) is read by the standard library, so nothing HubSpot sends is
    refused for the parser's sake (smuves_sync/workers/README.md, "What HubSpot sends is
    stored"). Nesting deeper than both read (orjson: 1,024 levels) is refused.
    """
    if _more_values_than(content, MAX_BODY_VALUES):
        raise ValueError(
            f"the body holds more than {MAX_BODY_VALUES:,} JSON values, the most a page is "
            "parsed with (keys counted)"
        )
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        try:
            body = json.loads(content)
        except RecursionError:
            raise ValueError("the body nests JSON deeper than the parsers read") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            content_type = headers.get("content-type", "no content type")
            raise ValueError(f"the body is not JSON ({content_type})") from None
    if not isinstance(body, dict):
        raise ValueError(f"the body is a JSON {type(body).__name__}, expected an object")
    return body


def scrub(text: str, secret: str) -> str:
    """`text` with every occurrence of `secret` masked."""
    return text.replace(secret, "***") if secret else text
