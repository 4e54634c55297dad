"""The fake's control API, one shape wherever the fake runs.

`FakeHubSpot` implements it in this process; `FakeHubSpotRemote` (and `FakeHubSpotProcess`,
which started the server) over the /_fake admin endpoints of a fake in another process. A
test or fixture typed against `FakeControl` works with either.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.portal import TruthItem
from smuves_sync.testing.fake_hubspot.spec import Churn, FaultRule
from smuves_sync.testing.fake_hubspot.write_faults import WriteFault


@dataclass(frozen=True, slots=True)
class PortalStats:
    """What one portal's clients asked for and what they got."""

    requests: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    by_content_type: dict[str, int] = field(default_factory=dict)
    limited_ten_secondly: int = 0
    limited_secondly: int = 0
    limited_daily: int = 0
    faults_injected: int = 0

    @property
    def status_429(self) -> int:
        """Every 429 sent: by the limits and by injected faults."""
        return self.by_status.get(429, 0)

    @property
    def share_429(self) -> float:
        """429s as a share of all requests."""
        return self.status_429 / self.requests if self.requests else 0.0

    def as_json(self) -> dict[str, object]:
        """A JSON-ready form (status codes as string keys)."""
        return {
            "requests": self.requests,
            "by_status": {str(k): v for k, v in sorted(self.by_status.items())},
            "by_content_type": dict(sorted(self.by_content_type.items())),
            "limited_ten_secondly": self.limited_ten_secondly,
            "limited_secondly": self.limited_secondly,
            "limited_daily": self.limited_daily,
            "faults_injected": self.faults_injected,
            "status_429": self.status_429,
        }

    @classmethod
    def from_json(cls, raw: dict[str, object]) -> PortalStats:
        """Inverse of `as_json`."""
        by_status = raw["by_status"]
        by_type = raw["by_content_type"]
        assert isinstance(by_status, dict) and isinstance(by_type, dict)
        return cls(
            requests=int(str(raw["requests"])),
            by_status={int(k): int(v) for k, v in by_status.items()},
            by_content_type={str(k): int(v) for k, v in by_type.items()},
            limited_ten_secondly=int(str(raw["limited_ten_secondly"])),
            limited_secondly=int(str(raw["limited_secondly"])),
            limited_daily=int(str(raw["limited_daily"])),
            faults_injected=int(str(raw["faults_injected"])),
        )


class FakeControl(ABC):
    """Drive a fake from a test: versions, tokens, faults, ground truth, counters."""

    @abstractmethod
    def advance(self, portal_id: int, churn: Churn | None = None) -> int:
        """Move a portal to its next version (objects change, vanish, appear); returns it."""

    @abstractmethod
    def version(self, portal_id: int) -> int:
        """The portal's current content version (0 at start)."""

    @abstractmethod
    def revoke_token(self, token: str) -> None:
        """Make a token answer 401 from now on."""

    @abstractmethod
    def add_token(self, portal_id: int, token: str) -> None:
        """Accept another token for a portal (a rotated or refreshed token)."""

    @abstractmethod
    def set_faults(self, faults: tuple[FaultRule, ...]) -> None:
        """Replace the fault rules; their request counts start again from 1."""

    @abstractmethod
    def set_write_faults(self, faults: tuple[WriteFault, ...]) -> None:
        """Replace the write fault rules (write_faults.py); their counts start again from 1."""

    @abstractmethod
    def person_edit(
        self,
        portal_id: int,
        content_type: ContentType | str,
        hubspot_id: str,
        fields: dict[str, Any],
        *,
        draft: bool = False,
    ) -> None:
        """A colleague edits an object in HubSpot now: `fields` are top-level keys (HubDB
        cells as `values.<column>`; rows named "<tableId>:<rowId>"); `draft=True` edits the
        draft (a page's or post's buffer, a table's draft row) instead of live."""

    @abstractmethod
    def write_log(self, portal_id: int) -> list[dict[str, Any]]:
        """Every committed write, in order: {"seq", "op", "type", "id", "keys", "at"}; `op` is
        live, draft, push_live, reset_draft, row_draft, publish, person or person_draft."""

    @abstractmethod
    def write_stats(self, portal_id: int) -> dict[str, int]:
        """The write counters: write_requests, committed_<op>, fault_<kind>."""

    @abstractmethod
    def unpublished_rows(self, portal_id: int, table: str) -> list[str]:
        """The rows ("<tableId>:<rowId>") whose draft differs from the published table."""

    @abstractmethod
    def all_stats(self) -> dict[int, PortalStats]:
        """Snapshots of every portal's counters."""

    @abstractmethod
    def reset_stats(self) -> None:
        """Zero the counters, the write counters too (limits, fault sequences and the write
        log keep their state)."""

    def stats(self, portal_id: int) -> PortalStats:
        """A snapshot of one portal's counters."""
        return self.all_stats()[portal_id]

    def ground_truth(
        self,
        portal_id: int,
        content_type: ContentType | str,
        *,
        archived: bool | None = None,
        with_data: bool = False,
    ) -> list[TruthItem]:
        """Exactly what the listings of this type serve now (both archived passes by default)."""
        return self._truth(portal_id, ContentType(content_type), archived, with_data)

    @abstractmethod
    def _truth(
        self, portal_id: int, content_type: ContentType, archived: bool | None, with_data: bool
    ) -> list[TruthItem]:
        """`ground_truth` with its arguments checked."""
