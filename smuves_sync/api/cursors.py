"""The opaque keyset cursor of a listing's page: `next` in one page, `after` in the request for
the following one. It is the page's last key as JSON, base64url without padding; each listing
says how its key is written and read back.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any, TypeVar

from smuves_sync.api.errors import ApiError

K = TypeVar("K")


def encode_page_cursor(key: list[Any]) -> str:
    """The opaque `next` cursor of a page's last key."""
    raw = json.dumps(key, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_cursor(cursor: str, key_of: Callable[[Any], K]) -> K:
    """The key of a cursor `encode_page_cursor` made, as `key_of` reads it from the decoded
    JSON (raising ValueError or TypeError on one it refuses); 422 naming `after` otherwise."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return key_of(json.loads(raw))
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError):
        raise ApiError(
            422, "INVALID_INPUT", "after: not a cursor from a previous page's `next`"
        ) from None
