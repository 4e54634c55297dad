"""What a fake portal contains and how the fake server behaves: plain frozen records.

These records are the whole configuration of the fake. They round-trip through JSON so the
subprocess launcher receives exactly what an in-process server would have used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from smuves_sync.models import ContentType

TimestampStyle = Literal["spec", "both"]
CursorStyle = Literal["keyed", "offset"]


@dataclass(frozen=True, slots=True)
class PortalSpec:
    """One generated portal: its id, its single bearer token, a seed and how many objects."""

    portal_id: int
    token: str = field(repr=False)
    seed: int = 0
    site_pages: int = 0
    landing_pages: int = 0
    blog_posts: int = 0
    hubdb_tables: int = 0
    rows_per_table: int = 0
    # Share of each type (and of each table's rows) that starts archived.
    archived_share: float = 0.05
    domain: str = ""
    # The blog's other objects and the site's redirects (after the fields above, so specs
    # written positionally keep their meaning).
    blog_authors: int = 0
    blog_tags: int = 0
    url_redirects: int = 0
    blogs: int = 0
    # Objects served spoilt in one of the ways HubSpot's data can be hostile (see `Poison`).
    poison: tuple[Poison, ...] = ()
    # The account's time zone, as /account-info/v3/details reports it (an IANA name).
    time_zone: str = "UTC"

    def __post_init__(self) -> None:
        counts = (
            self.site_pages,
            self.landing_pages,
            self.blog_posts,
            self.hubdb_tables,
            self.rows_per_table,
        )
        more = (self.blog_authors, self.blog_tags, self.url_redirects, self.blogs)
        if self.portal_id <= 0 or any(count < 0 for count in counts + more):
            raise ValueError("portal id must be positive and counts must not be negative")
        # Generated ids reserve a block per portal: keep counts well inside it.
        if (
            max(counts[:3] + more) > 50_000_000
            or self.hubdb_tables > 100
            or self.rows_per_table > 5_000_000
        ):
            raise ValueError(
                "at most 50M objects of a type (pages, posts, authors, tags, redirects, "
                "blogs), 100 tables and 5M rows per table"
            )
        if not 0.0 <= self.archived_share < 1.0:
            raise ValueError("archived_share must be in [0, 1)")
        if not self.token:
            raise ValueError("a portal needs a token")
        spoilt = [(p.content_type, p.table_slot, p.slot) for p in self.poison]
        if len(set(spoilt)) != len(spoilt):
            raise ValueError("one object takes one poison")
        try:
            ZoneInfo(self.time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {self.time_zone!r}") from None

    @property
    def host(self) -> str:
        """The portal's website domain, used in generated URLs."""
        return self.domain or f"www.portal{self.portal_id}.example.com"

    def initial_count(self, content_type: ContentType) -> int:
        """Objects of a type at version 0 (rows: per table)."""
        return {
            ContentType.SITE_PAGE: self.site_pages,
            ContentType.LANDING_PAGE: self.landing_pages,
            ContentType.BLOG_POST: self.blog_posts,
            ContentType.HUBDB_TABLE: self.hubdb_tables,
            ContentType.HUBDB_ROW: self.rows_per_table,
            ContentType.BLOG_AUTHOR: self.blog_authors,
            ContentType.BLOG_TAG: self.blog_tags,
            ContentType.URL_REDIRECT: self.url_redirects,
            ContentType.BLOG: self.blogs,
        }[content_type]


class PoisonKind(StrEnum):
    """A way one object can be hostile to whoever stores it (smuves_sync/testing/fake_hubspot/
    poison.py serves each). The first five are storable, the last two are not."""

    NUL_IN_BODY = "nul_in_body"  # a \u0000 inside a long text of the document
    NUL_IN_KEY = "nul_in_key"  # one more key, with a \u0000 in it
    NUL_IN_NAME = "nul_in_name"  # a \u0000 in the name (a promoted field)
    LONE_SURROGATE = "lone_surrogate"  # \ud800 in the name and \udfff in a text, unpaired
    DUPLICATE_ID = "duplicate_id"  # listed twice in its page; the second copy renamed
    NUMERIC_ID = "numeric_id"  # as DUPLICATE_ID, the second copy's id a JSON number: "4" and 4
    NO_ID = "no_id"  # no `id` at all (not storable; against the spec)
    BAD_FIELD = "bad_field"  # the name is a number (not storable; against the spec)


# The poisons whose objects still match HubSpot's schemas (the others cannot: an id that is a
# number or missing, a name that is not a string).
SPEC_VALID_POISONS = frozenset(
    {
        PoisonKind.NUL_IN_BODY,
        PoisonKind.NUL_IN_KEY,
        PoisonKind.NUL_IN_NAME,
        PoisonKind.LONE_SURROGATE,
        PoisonKind.DUPLICATE_ID,
    }
)
# The poisons that leave nothing a store could keep.
UNSTORABLE_POISONS = frozenset({PoisonKind.NO_ID, PoisonKind.BAD_FIELD})


@dataclass(frozen=True, slots=True)
class Poison:
    """Serve the object in `slot` of a type (HubDB rows: of the table in `table_slot`) spoilt.

    Slots count objects in creation order from 0, as the listings serve them; the object keeps
    its place and its archived flag.
    """

    kind: PoisonKind
    content_type: ContentType
    slot: int
    table_slot: int = 0

    def __post_init__(self) -> None:
        if self.slot < 0 or self.table_slot < 0:
            raise ValueError("poison slots count from 0")


@dataclass(frozen=True, slots=True)
class Churn:
    """What one version step does to each collection, as shares of its live objects.

    `added` is a share of the collection's initial size, so repeated steps add steadily;
    `unarchived` a share of the objects archived before the step, which come back (and are
    edited as they do). `purged` (a share of the live objects' number) empties HubSpot's
    recycle bin of that many objects archived before the step, then of live ones when the bin
    holds fewer: they leave both listings, as a purge or a deleted HubDB row does. `types`
    limits the step to those content types (None: every type; a HubDB table follows its
    rows). Counts are rounded, so tiny collections may see no change at all.
    """

    changed: float = 0.10
    deleted: float = 0.02
    added: float = 0.02
    archived: float = 0.01
    unarchived: float = 0.0
    types: tuple[ContentType, ...] | None = None
    purged: float = 0.0

    def __post_init__(self) -> None:
        shares = (
            self.changed,
            self.deleted,
            self.added,
            self.archived,
            self.unarchived,
            self.purged,
        )
        if any(share < 0 for share in shares) or self.changed + self.deleted + self.archived > 1:
            raise ValueError("churn shares must be >= 0 and changed+deleted+archived <= 1")
        if self.unarchived > 1:
            raise ValueError("the unarchived share must be <= 1")
        if self.types is not None:
            # From JSON (the admin endpoint) the types arrive as a list of words.
            object.__setattr__(self, "types", tuple(ContentType(t) for t in self.types))

    def touches(self, content_type: ContentType) -> bool:
        """Whether this step changes objects of `content_type`."""
        return self.types is None or content_type in self.types


class FaultKind(StrEnum):
    """A way a response can go wrong on purpose."""

    STATUS = "status"  # an HTTP error status with HubSpot's JSON error body
    RATE_LIMIT = "rate_limit"  # a 429 with `policy`; not counted by the real limiter
    NOT_JSON = "not_json"  # 200 with an HTML body
    TRUNCATED = "truncated"  # 200 with a JSON page cut in the middle
    MISSING_RESULTS = "missing_results"  # 200 JSON without `results`
    WRONG_TYPES = "wrong_types"  # 200 JSON whose `results` is not a list, `total` not a number
    REPEAT_CURSOR = "repeat_cursor"  # the page's next cursor equals the cursor it was asked for
    SLOW = "slow"  # the normal response, `delay_ms` later
    # Before answering, `deleted` objects at the start of the listing asked for are deleted
    # and `created` new live ones created (at its end): people editing the portal while a
    # client pages through it. With offset cursors (ServerConfig.cursors) the deletions
    # move later objects across page boundaries, as HubSpot's listings do.
    DRIFT = "drift"


@dataclass(frozen=True, slots=True)
class FaultRule:
    """Inject one kind of fault into the listing requests this rule matches.

    A rule matches requests of `content_type` (any when None) for `portal_id` (any when None)
    and counts them 1, 2, 3 …; it fires on the numbers in `on_requests` and otherwise with
    probability `share`, drawn from the server's fault seed, so a run is reproducible.
    """

    kind: FaultKind
    share: float = 0.0
    on_requests: tuple[int, ...] = ()
    content_type: ContentType | None = None
    portal_id: int | None = None
    status: int = 500
    policy: str = "TEN_SECONDLY_ROLLING"
    retry_after_s: int | None = None
    delay_ms: int = 0
    deleted: int = 0
    created: int = 0
    # drift: objects of the listing edited (their `updatedAt` moved to now), counted from its
    # start (those a client paging through it has already seen)
    edited: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:
            raise ValueError("fault share must be in [0, 1]")
        if any(number < 1 for number in self.on_requests):
            raise ValueError("on_requests counts matching requests from 1")
        if self.deleted < 0 or self.created < 0 or self.edited < 0:
            raise ValueError("a drift deletes, creates and edits zero or more objects")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How the server behaves: latency, limits, faults. Limits of None are not enforced."""

    latency_ms: float = 0.0
    ten_second_limit: int | None = 190
    secondly_limit: int | None = None
    daily_limit: int | None = 1_000_000
    # HubSpot often omits Retry-After on 429s; the fake sends it only when asked to.
    send_retry_after: bool = False
    faults: tuple[FaultRule, ...] = ()
    fault_seed: int = 0
    # "spec": `created`/`updated` as in the OpenAPI schemas; "both": also `createdAt`/`updatedAt`.
    timestamps: TimestampStyle = "spec"
    # "keyed": the default order's `after` cursor names the last object served, so it survives
    # deletions; "offset": it is a position, as HubSpot's are (see query.py).
    cursors: CursorStyle = "keyed"
    # Whether `advance` and drifts date what they do by the server's clock, as HubSpot dates an
    # edit when it is made (the default), or on the synthetic timeline of 2025 (lifecycle.py).
    # `clock_skew_seconds` moves that clock away from the machine's (negative: behind).
    real_clock: bool = True
    clock_skew_seconds: float = 0.0

    def __post_init__(self) -> None:
        limits = (self.ten_second_limit, self.secondly_limit, self.daily_limit)
        if self.latency_ms < 0 or any(limit is not None and limit < 1 for limit in limits):
            raise ValueError("latency must be >= 0 and limits >= 1 (or None)")


def encode_setup(portals: tuple[PortalSpec, ...], config: ServerConfig) -> str:
    """Serialise portals and config to JSON (the launcher's --config-json)."""
    return json.dumps({"portals": [asdict(p) for p in portals], "config": asdict(config)})


def decode_setup(text: str) -> tuple[tuple[PortalSpec, ...], ServerConfig]:
    """Inverse of `encode_setup`; raises ValueError on unknown or invalid fields."""
    raw = json.loads(text)
    portals = tuple(_portal_from_dict(p) for p in raw["portals"])
    config_raw = _known(ServerConfig, raw.get("config", {}))
    faults = decode_faults(config_raw.pop("faults", []))
    return portals, ServerConfig(**config_raw, faults=faults)


def _portal_from_dict(raw: dict[str, Any]) -> PortalSpec:
    values = _known(PortalSpec, raw)
    values["poison"] = tuple(poison_from_dict(p) for p in values.get("poison", ()))
    return PortalSpec(**values)


def poison_from_dict(raw: dict[str, Any]) -> Poison:
    """A poison from its JSON form (`asdict`)."""
    values = _known(Poison, raw)
    values["kind"] = PoisonKind(values["kind"])
    values["content_type"] = ContentType(values["content_type"])
    return Poison(**values)


def poison_from_text(text: str) -> Poison:
    """Parse the launcher's `--poison` syntax: `kind=no_id,type=blog_post,slot=3[,table=1]`."""
    raw = _options(text, "poison", {"type": "content_type", "table": "table_slot"})
    for name in ("slot", "table_slot"):
        if name in raw:
            raw[name] = int(raw[name])
    return poison_from_dict(raw)


def encode_faults(faults: tuple[FaultRule, ...]) -> list[dict[str, Any]]:
    """Fault rules as JSON-ready dicts (the admin endpoint's body)."""
    return [asdict(fault) for fault in faults]


def decode_faults(raw: list[dict[str, Any]]) -> tuple[FaultRule, ...]:
    """Inverse of `encode_faults`."""
    return tuple(_fault_from_dict(dict(fault)) for fault in raw)


def fault_from_text(text: str) -> FaultRule:
    """Parse the launcher's `--fault` syntax: `kind=status,status=503,type=blog_post,share=0.1`."""
    raw = _options(text, "fault")
    if "type" in raw:
        raw["content_type"] = raw.pop("type")
    if "on" in raw:
        raw["on_requests"] = [int(n) for n in raw.pop("on").split("+") if n]
    return _fault_from_dict(raw)


def _fault_from_dict(raw: dict[str, Any]) -> FaultRule:
    values = _known(FaultRule, raw)
    values["kind"] = FaultKind(values["kind"])
    if values.get("content_type") is not None:
        values["content_type"] = ContentType(values["content_type"])
    values["on_requests"] = tuple(int(n) for n in values.get("on_requests", ()))
    if "share" in values:
        values["share"] = float(values["share"])
    counts = ("portal_id", "status", "retry_after_s", "delay_ms", "deleted", "created", "edited")
    for name in counts:
        if values.get(name) is not None:
            values[name] = int(values[name])
    return FaultRule(**values)


def _options(text: str, what: str, renamed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The launcher's `key=value,…` syntax as a dict; a key in `renamed` under its new name."""
    raw: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{what} option {part!r} is not key=value")
        key = key.strip()
        raw[(renamed or {}).get(key, key)] = value.strip()
    return raw


def _known(cls: type, raw: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    unknown = set(raw) - names
    if unknown:
        raise ValueError(f"unknown {cls.__name__} fields: {sorted(unknown)}")
    return dict(raw)
