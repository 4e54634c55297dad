"""HubSpot's account details: which portal a token belongs to, and that portal's time zone.

    details = await client.account_details()      # GET /account-info/v3/details
    details.portal_id, details.time_zone           # e.g. 12345678, "US/Eastern"
    zone = time_zone(details.time_zone)            # a tzinfo; UTC for a name nobody knows

A portal is connected only with a token HubSpot vouches for (`HubSpotClient.verify_portal`):
the hub id a person types is public, the token's `portalId` is HubSpot's word. The time zone is
where the portal's DAILY request limit resets at midnight.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

log = logging.getLogger(__name__)

# IANA names as HubSpot sends them ("US/Eastern", "America/New_York", "Etc/GMT+3", "UTC"). The
# same shape is checked by the portals table (portals_time_zone_name).
_ZONE_NAME = re.compile(r"^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$")
DEFAULT_TIME_ZONE = "UTC"
# What a private app token is made of: it travels in a header, so visible ASCII only.
_TOKEN = re.compile(r"^[\x21-\x7e]+$")


def token_shape(token: str) -> bool:
    """Whether `token` could be a HubSpot token at all (visible ASCII, nothing else)."""
    return bool(_TOKEN.match(token))


def account_details_path(api_version: str) -> str:
    """The account-details endpoint of an API version (`v3`, or a dated one like 2026-03)."""
    return f"/account-info/{api_version}/details"


def known_zone(name: object) -> str | None:
    """`name` when it is a time zone this machine knows, else None."""
    if not isinstance(name, str) or len(name) > 64 or not _ZONE_NAME.match(name):
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


def time_zone(name: str | None) -> tzinfo:
    """The tzinfo of a portal's stored time zone; UTC when it has none or it is unknown here."""
    zone = known_zone(name)
    return ZoneInfo(zone) if zone is not None and zone != "UTC" else UTC


@dataclass(frozen=True, slots=True)
class AccountDetails:
    """What HubSpot says about the account a token belongs to."""

    portal_id: int
    time_zone: str
    account_type: str | None = None

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> AccountDetails:
        """The details of an account-details answer; ValueError when it has the wrong shape."""
        portal_id = body.get("portalId")
        if not isinstance(portal_id, int) or isinstance(portal_id, bool) or portal_id <= 0:
            raise ValueError("'portalId' is missing or not a positive whole number")
        raw_zone = body.get("timeZone")
        if not isinstance(raw_zone, str) or not raw_zone:
            raise ValueError("'timeZone' is missing or not text")
        zone = known_zone(raw_zone)
        if zone is None:
            # Still the right portal: its daily limit is then taken to reset at UTC midnight.
            log.warning("portal %s: unknown time zone %r, taken as UTC", portal_id, raw_zone[:64])
            zone = DEFAULT_TIME_ZONE
        account_type = body.get("accountType")
        return cls(portal_id, zone, account_type if isinstance(account_type, str) else None)
