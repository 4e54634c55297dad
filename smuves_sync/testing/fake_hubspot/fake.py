"""The fake HubSpot's state and its control API: portals, tokens, limits, faults, counters.

One lock guards everything: the server's event loop (possibly in another thread) and the test
calling `advance` or `ground_truth` never see a half-updated portal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from starlette.applications import Starlette

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.faults import FaultPlan
from smuves_sync.testing.fake_hubspot.limits import (
    DAILY,
    SECONDLY,
    TEN_SECONDLY,
    PortalLimiter,
    Verdict,
)
from smuves_sync.testing.fake_hubspot.portal import PortalModel, TruthItem
from smuves_sync.testing.fake_hubspot.spec import Churn, FaultRule, PortalSpec, ServerConfig


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


class FakeHubSpot:
    """Generated portals behind HubSpot's CMS listing endpoints; `app()` is the ASGI app."""

    def __init__(
        self,
        portals: Iterable[PortalSpec],
        config: ServerConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config or ServerConfig()
        self.clock = clock
        self.lock = threading.RLock()
        self.specs = tuple(portals)
        self._portals = {
            spec.portal_id: PortalModel(spec, self.config.timestamps) for spec in self.specs
        }
        if len(self._portals) != len(self.specs):
            raise ValueError("portal ids must be unique")
        self._tokens = {spec.token: spec.portal_id for spec in self.specs}
        if len(self._tokens) != len(self.specs):
            raise ValueError("each portal needs its own token")
        self._limiters = {pid: PortalLimiter(self.config, clock) for pid in self._portals}
        self._faults = FaultPlan(self.config.faults, self.config.fault_seed)
        self._stats = {pid: PortalStats() for pid in self._portals}
        self.unauthorized = 0

    # --- control API (tests, benchmarks, the admin endpoints) ---------------------------------

    def advance(self, portal_id: int, churn: Churn | None = None) -> int:
        """Move a portal to its next version (objects change, vanish, appear); returns it."""
        with self.lock:
            return self.portal(portal_id).advance(churn or Churn())

    def version(self, portal_id: int) -> int:
        """The portal's current content version (0 at start)."""
        with self.lock:
            return self.portal(portal_id).version

    def revoke_token(self, token: str) -> None:
        """Make a token answer 401 from now on."""
        with self.lock:
            self._tokens.pop(token, None)

    def add_token(self, portal_id: int, token: str) -> None:
        """Accept another token for a portal (a rotated or refreshed token)."""
        with self.lock:
            self.portal(portal_id)
            self._tokens[token] = portal_id

    def ground_truth(
        self,
        portal_id: int,
        content_type: ContentType | str,
        *,
        archived: bool | None = None,
        with_data: bool = False,
    ) -> list[TruthItem]:
        """Exactly what the listings of this type serve now (both archived passes by default)."""
        with self.lock:
            portal = self.portal(portal_id)
            return portal.ground_truth(
                ContentType(content_type), archived=archived, with_data=with_data
            )

    def stats(self, portal_id: int) -> PortalStats:
        """A snapshot of one portal's counters."""
        with self.lock:
            self.portal(portal_id)
            return self._stats[portal_id]

    def all_stats(self) -> dict[int, PortalStats]:
        """Snapshots of every portal's counters."""
        with self.lock:
            return dict(self._stats)

    def reset_stats(self) -> None:
        """Zero the counters (limits and fault sequences keep their state)."""
        with self.lock:
            self._stats = {pid: PortalStats() for pid in self._portals}
            self.unauthorized = 0

    def set_faults(self, faults: tuple[FaultRule, ...]) -> None:
        """Replace the fault rules; their request counts start again from 1."""
        with self.lock:
            self.config = replace(self.config, faults=faults)
            self._faults = FaultPlan(faults, self.config.fault_seed)

    def app(self) -> Starlette:
        """The ASGI application serving this fake."""
        from smuves_sync.testing.fake_hubspot.app import build_app

        return build_app(self)

    # --- used by the request handlers ----------------------------------------------------------

    def portal(self, portal_id: int) -> PortalModel:
        """The portal model; KeyError for a portal this fake does not host."""
        return self._portals[portal_id]

    def authenticate(self, authorization: str | None) -> int | None:
        """The portal a bearer token belongs to, or None (counted as unauthorized)."""
        scheme, _, token = (authorization or "").partition(" ")
        portal_id = self._tokens.get(token) if scheme.lower() == "bearer" else None
        if portal_id is None:
            self.unauthorized += 1
        return portal_id

    def admit(self, portal_id: int) -> Verdict:
        """Apply the portal's request limits to one request."""
        return self._limiters[portal_id].admit()

    def decide_fault(self, portal_id: int, content_type: ContentType) -> FaultRule | None:
        """The injected fault for this listing request, if any."""
        return self._faults.decide(portal_id, content_type)

    def record(
        self,
        portal_id: int,
        content_type: ContentType,
        status: int,
        verdict: Verdict,
        fault: FaultRule | None,
    ) -> None:
        """Count one answered request."""
        old = self._stats[portal_id]
        by_status = dict(old.by_status)
        by_status[status] = by_status.get(status, 0) + 1
        by_type = dict(old.by_content_type)
        by_type[content_type.value] = by_type.get(content_type.value, 0) + 1
        self._stats[portal_id] = replace(
            old,
            requests=old.requests + 1,
            by_status=by_status,
            by_content_type=by_type,
            limited_ten_secondly=old.limited_ten_secondly + (verdict.policy == TEN_SECONDLY),
            limited_secondly=old.limited_secondly + (verdict.policy == SECONDLY),
            limited_daily=old.limited_daily + (verdict.policy == DAILY),
            faults_injected=old.faults_injected + (fault is not None),
        )
