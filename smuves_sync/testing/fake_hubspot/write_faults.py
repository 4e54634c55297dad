"""Faults of the write endpoints, and people editing objects between a client's read and write.

Kept apart from the listing faults (faults.py): a `WriteFault` counts only the requests it is
about (writes, or for `EDIT_AFTER_READ` the reads of objects), so adding write faults never
moves the sequence of a listing fault. A rule matches requests of `content_type` (any when
None) for `portal_id` (any when None) that name `object_id` (any when empty; HubDB rows as
"<tableId>:<rowId>", the ground truth's ids) and counts them 1, 2, 3 …; it fires on the
numbers in `on_requests`, otherwise with probability `share` drawn from the server's fault
seed, and on every matching request when it has neither.

What each kind does (a write request answers as if the fault were HubSpot's):

- `RATE_LIMIT`: a 429 of `policy` before anything is processed; nothing is committed.
- `STATUS`: the `status` answer before anything is processed; nothing is committed.
- `REJECT_BATCH`: a whole-request 400 (HubSpot refusing a batch for one bad input):
  nothing is committed. With `object_id`, only requests holding that input, so a client
  that splits the batch finds it.
- `REFUSE_INPUT`: the input `object_id` is refused: a batch answers 207 naming it in its
  error's `context.ids`, the others committed; a single PATCH answers 400.
- `COMMIT_THEN_STATUS`: the write commits, then the answer is `status` (502 by default).
- `COMMIT_THEN_DROP`: the write commits, then the connection is dropped without an answer.
- `EDIT_AFTER_READ`: after a read (GET by id, `batch/read`, a draft read) that served the
  object, a person edits `field` of it to `value` (None: the current text with " (edited)"
  added, a number plus one, a boolean flipped; no `field`: `headHtml`, which only pages and
  posts have, so other types must name one), dated by the fake's clock and listed in its
  revisions as a colleague's; `draft=True` edits the draft (a page's buffer, a table's draft
  row) instead. Without `object_id`, each object read is edited with probability
  `object_share` (seeded by its id). Each rule edits an object at most once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.lifecycle import key_salt, mix64


class WriteFaultKind(StrEnum):
    """A way a write (or the time after a read) can go wrong on purpose."""

    RATE_LIMIT = "rate_limit"
    STATUS = "status"
    REJECT_BATCH = "reject_batch"
    REFUSE_INPUT = "refuse_input"
    COMMIT_THEN_STATUS = "commit_then_status"
    COMMIT_THEN_DROP = "commit_then_drop"
    EDIT_AFTER_READ = "edit_after_read"


BEFORE = frozenset({WriteFaultKind.RATE_LIMIT, WriteFaultKind.STATUS, WriteFaultKind.REJECT_BATCH})
AFTER = frozenset({WriteFaultKind.COMMIT_THEN_STATUS, WriteFaultKind.COMMIT_THEN_DROP})


@dataclass(frozen=True, slots=True)
class WriteFault:
    """One write fault rule (see the module's text for what each kind does)."""

    kind: WriteFaultKind
    content_type: ContentType | None = None
    portal_id: int | None = None
    object_id: str = ""
    on_requests: tuple[int, ...] = ()
    share: float = 0.0
    status: int = 502
    policy: str = "TEN_SECONDLY_ROLLING"
    field: str = ""
    value: Any = None
    draft: bool = False
    object_share: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", WriteFaultKind(self.kind))
        if self.content_type is not None:
            object.__setattr__(self, "content_type", ContentType(self.content_type))
        object.__setattr__(self, "on_requests", tuple(int(n) for n in self.on_requests))
        if not 0.0 <= self.share <= 1.0 or not 0.0 <= self.object_share <= 1.0:
            raise ValueError("fault shares must be in [0, 1]")
        if any(number < 1 for number in self.on_requests):
            raise ValueError("on_requests counts matching requests from 1")
        if self.kind is WriteFaultKind.REFUSE_INPUT and not self.object_id:
            raise ValueError("refuse_input names the input it refuses (object_id)")
        pages = (ContentType.SITE_PAGE, ContentType.LANDING_PAGE, ContentType.BLOG_POST)
        unnamed = self.kind is WriteFaultKind.EDIT_AFTER_READ and not self.field
        if unnamed and self.content_type not in pages:
            raise ValueError("edit_after_read names its field, but for pages and posts")

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready form (the admin endpoint's body)."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> WriteFault:
        """Inverse of `as_json`; unknown fields are refused."""
        unknown = set(raw) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown WriteFault fields: {sorted(unknown)}")
        return cls(**raw)


def write_fault_from_text(text: str) -> WriteFault:
    """Parse the launcher's `--write-fault` syntax: `kind=refuse_input,object_id=12,type=…`."""
    raw: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"write fault option {part!r} is not key=value")
        raw[key.strip()] = value.strip()
    if "type" in raw:
        raw["content_type"] = raw.pop("type")
    if "on" in raw:
        raw["on_requests"] = [int(n) for n in raw.pop("on").split("+") if n]
    for name in ("portal_id", "status"):
        if name in raw:
            raw[name] = int(raw[name])
    for name in ("share", "object_share"):
        if name in raw:
            raw[name] = float(raw[name])
    if "draft" in raw:
        raw["draft"] = raw["draft"].lower() == "true"
    return WriteFault.from_json(raw)


@dataclass(frozen=True, slots=True)
class Fired:
    """What the rules decided for one write request."""

    before: WriteFault | None = None
    refused: frozenset[str] = frozenset()
    after: WriteFault | None = None


class WriteFaultPlan:
    """The write fault rules of a server and how many requests each has matched so far."""

    def __init__(self, rules: tuple[WriteFault, ...], seed: int) -> None:
        self.rules = rules
        self._salt = key_salt(f"write-faults|{seed}")
        self._counts = [0] * len(rules)
        self._edited: list[set[str]] = [set() for _ in rules]

    def _matches(self, rule: WriteFault, portal_id: int, content_type: ContentType) -> bool:
        return rule.content_type in (None, content_type) and rule.portal_id in (None, portal_id)

    def _fires(self, index: int, rule: WriteFault) -> bool:
        self._counts[index] += 1
        number = self._counts[index]
        if not rule.on_requests and rule.share <= 0.0:
            return True
        if number in rule.on_requests:
            return True
        draw = mix64(self._salt ^ (index << 40) ^ number) / 2.0**64
        return draw < rule.share

    def _firing(
        self, portal_id: int, content_type: ContentType, ids: list[str], *, edits_after_read: bool
    ) -> Iterator[tuple[int, WriteFault]]:
        """The (index, rule) of the rules of one family (the people's edits after a read, or
        the others) that match a request naming `ids` and fire on it; each match is counted."""
        for index, rule in enumerate(self.rules):
            if (rule.kind is WriteFaultKind.EDIT_AFTER_READ) is not edits_after_read:
                continue
            if not self._matches(rule, portal_id, content_type):
                continue
            if rule.object_id and rule.object_id not in ids:
                continue
            if self._fires(index, rule):
                yield index, rule

    def decide(self, portal_id: int, content_type: ContentType, ids: list[str]) -> Fired:
        """Count one write request naming `ids` against the rules; what fires (first wins)."""
        before: WriteFault | None = None
        after: WriteFault | None = None
        refused: set[str] = set()
        for _, rule in self._firing(portal_id, content_type, ids, edits_after_read=False):
            if rule.kind in BEFORE:
                before = before or rule
            elif rule.kind in AFTER:
                after = after or rule
            else:
                refused.add(rule.object_id)
        return Fired(before, frozenset(refused), after)

    def edits_after_read(
        self, portal_id: int, content_type: ContentType, ids: list[str]
    ) -> list[tuple[WriteFault, str]]:
        """The (rule, object id) edits people make after a read that served `ids`."""
        edits: list[tuple[WriteFault, str]] = []
        for index, rule in self._firing(portal_id, content_type, ids, edits_after_read=True):
            targets = (
                [rule.object_id]
                if rule.object_id
                else [i for i in ids if self._drawn(index, rule, i)]
            )
            for object_id in targets:
                if object_id not in self._edited[index]:
                    self._edited[index].add(object_id)
                    edits.append((rule, object_id))
        return edits

    def _drawn(self, index: int, rule: WriteFault, object_id: str) -> bool:
        draw = mix64(self._salt ^ (index << 40) ^ key_salt(object_id)) / 2.0**64
        return draw < rule.object_share
