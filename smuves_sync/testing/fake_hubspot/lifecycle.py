"""The life of one collection's objects across portal versions, kept as compact arrays.

A collection (one content type of a portal, or the rows of one HubDB table) is a row of
slots 0, 1, 2 …; a slot is one object forever. Version 0 has `initial` slots, a seeded share of
them archived. Each version step changes, deletes and archives a seeded sample of the live
slots and appends new ones. Only per-slot small integers are stored (a few bytes each); the
objects themselves are generated from (collection key, slot, revision) when served.

Timeline (milliseconds since the epoch, UTC): initial objects are created between 2021-01-01
and 2025-01-01 in slot order. A step that was given the moment it happened (`Timeline.record`:
the fake's clock when `advance` was called, as HubSpot dates an edit when it is made) dates
everything it does within `STEP_SPAN_MS` after that moment; a step without one "happens" on
day k after 2025-01-01 and dates what it does within the day before. Either way `created`
grows with the slot number and every change moves `updated` strictly forward.

Besides version steps, `drift` deletes and creates objects within a version, as people do in
HubSpot while a client pages through a listing: the objects it creates are dated one
millisecond apart from the start of the current version, after every object before them.
"""

from __future__ import annotations

import hashlib
import random
from array import array
from collections.abc import Callable, Iterable, Sequence

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.spec import Churn

T0_MS = 1_609_459_200_000  # 2021-01-01T00:00:00Z
T1_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z
DAY_MS = 86_400_000
NEVER = 0xFFFF  # "not archived" in the archived-at-step array
DRIFTED = 0xFFFE  # "deleted by a drift" in the deleted-at-step array (any non-zero: deleted)
PURGED = 0xFFFC  # "purged by `Lifecycle.purge`" in the deleted-at-step array
CONTROLLED = 0xFFFD  # "archived by `archive`" in the archived-at-step array (moment kept aside)
# The types HubSpot deletes by archiving without moving `updated`: its CMS pages, posts,
# authors and tags (HubSpot's CRM connectors miss exactly this). Archiving the other types
# (tables, rows, redirects, blogs) moves `updated`, as before.
ARCHIVE_KEEPS_UPDATED = frozenset(
    {
        ContentType.SITE_PAGE,
        ContentType.LANDING_PAGE,
        ContentType.BLOG_POST,
        ContentType.BLOG_AUTHOR,
        ContentType.BLOG_TAG,
    }
)
_MASK64 = (1 << 64) - 1


# What one clocked step's changes are spread over: enough distinct milliseconds that a page
# of objects rarely shares one, short enough to count as "when `advance` was called".
STEP_SPAN_MS = 1_000


def version_time_ms(step: int) -> int:
    """The moment version `step` comes into being on the synthetic (unclocked) timeline."""
    return T1_MS + step * DAY_MS


class Timeline:
    """When each version step happened: a portal's steps, shared by its collections.

    `record(now_ms)` dates the next step at the fake's clock (never before the previous
    step's span has ended, so `updated` only moves forward); steps recorded as None follow
    the synthetic timeline. `window(step)` is the span a step's changes are dated in.
    """

    def __init__(self) -> None:
        self._moments: list[int | None] = []

    def record(self, now_ms: int | None) -> None:
        """The next step happened at `now_ms` (None: on the synthetic timeline)."""
        if now_ms is not None:
            now_ms = max(now_ms, self.end(len(self._moments)) + 1)
        self._moments.append(now_ms)

    def window(self, step: int) -> tuple[int, int]:
        """(start, length) of the span step `step` (>= 1) dates its changes in."""
        moment = self._moments[step - 1] if step - 1 < len(self._moments) else None
        if moment is None:
            return version_time_ms(step - 1), DAY_MS
        return moment, STEP_SPAN_MS

    def end(self, step: int) -> int:
        """When version `step` is complete: everything it did is dated before this."""
        if step == 0:
            return T1_MS
        start, length = self.window(step)
        return start + length


def mix64(value: int) -> int:
    """A fast, well-spread 64-bit hash of an integer (splitmix64's finaliser)."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


def key_salt(key: str) -> int:
    """A stable 64-bit number for a text key (stable across processes, unlike hash())."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")


class Lifecycle:
    """Which slots exist, which are archived and at which revision, at the current version."""

    def __init__(
        self,
        key: str,
        initial: int,
        archived_share: float,
        content_type: ContentType | None = None,
        timeline: Timeline | None = None,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self.key = key
        self.timeline = timeline or Timeline()
        # The fake's clock, which dates a drift (None: the synthetic timeline).
        self._clock_ms = clock_ms
        # What a step's `Churn.types` is checked against (None: every step applies).
        self.content_type = content_type
        self.archive_moves_updated = content_type not in ARCHIVE_KEEPS_UPDATED
        self.salt = key_salt(key)
        self.initial = initial
        self.version = 0
        self.born = array("H", bytes(2 * initial))
        self.revision = array("H", bytes(2 * initial))
        self.deleted = array("H", bytes(2 * initial))
        self.archived = array("H", [NEVER]) * initial
        # (first slot, number of slots) appended by each step; index 0 is the initial batch.
        self.batches: list[tuple[int, int]] = [(0, initial)]
        self.last_change_step = 0
        # Bumped by every change (version steps and drifts): cached views of it are stale.
        self.generation = 0
        # Creation times of the slots `drift` made, and edit times of those it edited (ms).
        self._drift_created: dict[int, int] = {}
        self._drift_edited: dict[int, int] = {}
        # When `archive` archived a slot (ms); its archived-at-step entry is CONTROLLED.
        self._archived_at: dict[int, int] = {}
        self._live: dict[bool, array[int]] = {}
        rng = random.Random(f"{key}|archived")
        for slot in rng.sample(range(initial), round(initial * archived_share)):
            self.archived[slot] = 0

    @property
    def size(self) -> int:
        """Slots ever created (live, archived and deleted)."""
        return len(self.born)

    def catch_up(self, history: Sequence[Churn]) -> None:
        """Apply the steps of `history` this collection has not seen yet."""
        while self.version < len(history):
            self._step(history[self.version])

    def _step(self, churn: Churn) -> None:
        step = self.version + 1
        if self.content_type is not None and not churn.touches(self.content_type):
            churn = Churn(changed=0.0, deleted=0.0, added=0.0, archived=0.0)
        present = self.live(archived=False)
        # Read before this step archives anything: what was archived may come back.
        wanted = churn.unarchived or churn.purged
        archived_before = self.live(archived=True) if wanted else array("l")
        # Cumulative cut points, so rounding can never pick more slots than there are.
        n = len(present)
        cuts = [
            round(n * churn.changed),
            round(n * (churn.changed + churn.deleted)),
            min(n, round(n * (churn.changed + churn.deleted + churn.archived))),
        ]
        rng = random.Random(f"{self.key}|step{step}")
        chosen = rng.sample(list(present), cuts[2])
        changed, deleted, archived = chosen[: cuts[0]], chosen[cuts[0] : cuts[1]], chosen[cuts[1] :]
        for slot in changed:
            self.revision[slot] = step
        for slot in deleted:
            self.deleted[slot] = step
        for slot in archived:
            self.archived[slot] = step
        returned: list[int] = []
        if churn.unarchived:
            # A draw of its own: steps without un-archivals replay exactly as they always did.
            back = random.Random(f"{self.key}|step{step}|unarchived")
            count = min(len(archived_before), round(len(archived_before) * churn.unarchived))
            returned = back.sample(list(archived_before), count)
        for slot in returned:
            self.archived[slot] = NEVER
            self._archived_at.pop(slot, None)
            self.revision[slot] = step
        purged = 0
        if churn.purged:
            purged = self._purge_step(
                step, round(n * churn.purged), archived_before, returned, chosen
            )
        added = round(self.initial * churn.added)
        self.batches.append((self.size, added))
        self.born.extend([step] * added)
        self.revision.extend(array("H", [0]) * added)
        self.deleted.extend(array("H", [0]) * added)
        self.archived.extend(array("H", [NEVER]) * added)
        if chosen or added or returned or purged:
            self.last_change_step = step
        self.version = step
        self.generation += 1
        self._live.clear()

    def _purge_step(
        self,
        step: int,
        count: int,
        archived_before: array[int],
        returned: list[int],
        chosen: list[int],
    ) -> int:
        """Purge `count` objects, from the recycle bin first (what was archived before the
        step and stays so), then live ones the step left alone. A draw of its own: steps
        without purges replay exactly as they always did."""
        rng = random.Random(f"{self.key}|step{step}|purged")
        back = set(returned)
        binned = [slot for slot in archived_before if slot not in back]
        purged = rng.sample(binned, min(count, len(binned)))
        if len(purged) < count:
            busy = set(chosen)
            live = [slot for slot in self.live(archived=False) if slot not in busy]
            purged += rng.sample(live, min(count - len(purged), len(live)))
        for slot in purged:
            self.deleted[slot] = step
        return len(purged)

    def purge(self, slots: list[int]) -> int:
        """Within the current version: the objects in `slots` leave both listings (purged
        from the recycle bin, a HubDB row deleted); returns how many existed."""
        gone = [slot for slot in slots if self.exists(slot)]
        for slot in gone:
            self.deleted[slot] = PURGED
        if gone:
            self.generation += 1
            self._live.clear()
        return len(gone)

    def drift(self, *, archived: bool, deleted: int, created: int, edited: int = 0) -> None:
        """Within the current version: delete the first `deleted` objects of the listing with
        this `archived` flag (those a client paging through it has already seen, so the rest
        move forward), edit the `edited` after them (their `updatedAt` moves to now) and
        create `created` new live ones (at the listing's end)."""
        listing = list(self.live(archived=archived))
        for slot in listing[:deleted]:
            self.deleted[slot] = DRIFTED
        now = self._clock_ms() if self._clock_ms is not None else 0
        start = max([self.timeline.end(self.version), now, *self._drift_created.values()])
        for number, slot in enumerate(listing[deleted : deleted + edited]):
            self._drift_edited[slot] = max(start, self.updated_ms(slot)) + 1 + number
        for number in range(created):
            slot = self.size
            self._drift_created[slot] = start + 1 + number
            self.born.append(self.version)
            self.revision.append(0)
            self.deleted.append(0)
            self.archived.append(NEVER)
        self.generation += 1
        self._live.clear()

    def archive(self, slots: Iterable[int]) -> list[int]:
        """Archive these live slots now, as HubSpot's DELETE does: they move to the archived
        listing with `archivedAt` set to the fake's clock; returns the slots archived."""
        done = [slot for slot in dict.fromkeys(slots) if self.exists(slot)]
        done = [slot for slot in done if not self.is_archived(slot)]
        start = self._moment()
        for number, slot in enumerate(done):
            self.archived[slot] = CONTROLLED
            self._archived_at[slot] = start + 1 + number
        self._changed()
        return done

    def unarchive(self, slots: Iterable[int]) -> list[int]:
        """Bring these archived slots back live: `archivedAt` goes back to the epoch and, for
        the types whose archiving keeps `updated`, `updated` stays where it was."""
        done = [slot for slot in dict.fromkeys(slots) if self.exists(slot)]
        done = [slot for slot in done if self.is_archived(slot)]
        start = self._moment()
        for number, slot in enumerate(done):
            if self.archive_moves_updated:
                self._drift_edited[slot] = max(start, self.updated_ms(slot)) + 1 + number
            self.archived[slot] = NEVER
            self._archived_at.pop(slot, None)
        self._changed()
        return done

    def _moment(self) -> int:
        """Now by the fake's clock, never before anything already dated in this version."""
        now = self._clock_ms() if self._clock_ms is not None else 0
        dated = (*self._drift_created.values(), *self._drift_edited.values())
        return max([self.timeline.end(self.version), now, *dated, *self._archived_at.values()])

    def _changed(self) -> None:
        self.generation += 1
        self._live.clear()

    def live(self, *, archived: bool) -> array[int]:
        """Slots served by a listing with this `archived` flag, in slot order."""
        cached = self._live.get(archived)
        if cached is None:
            deleted, flags = self.deleted, self.archived
            cached = array(
                "l",
                (
                    slot
                    for slot in range(self.size)
                    if not deleted[slot] and (flags[slot] != NEVER) is archived
                ),
            )
            self._live[archived] = cached
        return cached

    def memory_bytes(self) -> int:
        """Bytes held by the per-slot arrays and the cached listings."""
        arrays = [self.born, self.revision, self.deleted, self.archived, *self._live.values()]
        return sum(a.itemsize * len(a) for a in arrays)

    def exists(self, slot: int) -> bool:
        """True when the slot is served by one of the two listings."""
        return 0 <= slot < self.size and not self.deleted[slot]

    def is_archived(self, slot: int) -> bool:
        """True when the slot is served only with archived=true."""
        return self.archived[slot] != NEVER

    def fraction(self, slot: int, tag: int) -> float:
        """A deterministic number in [0, 1) for this slot and purpose."""
        return mix64(self.salt ^ (slot * 0x9E3779B1) ^ (tag << 48)) / 2.0**64

    def created_ms(self, slot: int) -> int:
        """Creation time; strictly increasing with the slot number."""
        if slot in self._drift_created:
            return self._drift_created[slot]
        step = self.born[slot]
        if step == 0:
            spacing = (T1_MS - T0_MS) // max(self.initial, 1)
            return T0_MS + slot * spacing + int(self.fraction(slot, 1) * spacing)
        first, count = self.batches[step]
        start, length = self.timeline.window(step)
        return start + (slot - first + 1) * length // (count + 1)

    def updated_ms(self, slot: int) -> int:
        """Last update time; moves forward (never back) each time a step changes or un-archives
        the slot, and when it is archived unless its type keeps `updated` on archiving
        (ARCHIVE_KEEPS_UPDATED)."""
        edited = max(self._edited_ms(slot), self._drift_edited.get(slot, 0))
        step = self.archived[slot]
        if step in (NEVER, 0) or not self.archive_moves_updated:
            return edited
        if step == CONTROLLED:
            return max(edited, self._archived_at[slot])
        start, length = self.timeline.window(step)
        return max(edited, start + 1 + int(self.fraction(slot, 3) * (length - 2)))

    def _edited_ms(self, slot: int) -> int:
        revision = self.revision[slot]
        if revision:
            start, length = self.timeline.window(revision)
            changed = start + 1 + int(self.fraction(slot, 2 + revision) * (length - 2))
            return max(changed, self._drift_created.get(slot, 0) + 1)
        if slot in self._drift_created:
            return self._drift_created[slot]
        created = self.created_ms(slot)
        end = self.timeline.end(self.born[slot])
        return created + int(self.fraction(slot, 2) * (end - created) * 0.5)

    def archived_ms(self, slot: int) -> int | None:
        """When the slot was archived, or None while it is live."""
        step = self.archived[slot]
        if step == NEVER:
            return None
        if step == CONTROLLED:
            return self._archived_at[slot]
        if step == 0:
            updated = self._edited_ms(slot)
            return updated + 1 + int(self.fraction(slot, 3) * (T1_MS - updated - 2))
        start, length = self.timeline.window(step)
        return start + 1 + int(self.fraction(slot, 3) * (length - 2))
