"""The fake HubSpot's state and its control API: portals, tokens, limits, faults, counters.

One lock guards everything: the server's event loop (possibly in another thread) and the test
calling `advance` or `ground_truth` never see a half-updated portal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from starlette.applications import Starlette

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.control import FakeControl, PortalStats
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
from smuves_sync.testing.fake_hubspot.write_control import FakeWrites
from smuves_sync.testing.fake_hubspot.write_faults import WriteFault


class FakeHubSpot(FakeControl):
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
        offsets = self.config.cursors == "offset"
        self._portals = {
            spec.portal_id: PortalModel(
                spec,
                self.config.timestamps,
                offset_cursors=offsets,
                clock_ms=self._hubspot_ms if self.config.real_clock else None,
            )
            for spec in self.specs
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
        self.writes = FakeWrites(self)

    def _hubspot_ms(self) -> int:
        """HubSpot's clock, which dates edits: the machine's, moved by the configured skew."""
        return round((time.time() + self.config.clock_skew_seconds) * 1000)

    # --- control API (FakeControl documents it; tests, benchmarks, the admin endpoints) -------

    def advance(self, portal_id: int, churn: Churn | None = None) -> int:
        with self.lock:
            return self.portal(portal_id).advance(churn or Churn())

    def version(self, portal_id: int) -> int:
        with self.lock:
            return self.portal(portal_id).version

    def revoke_token(self, token: str) -> None:
        with self.lock:
            self._tokens.pop(token, None)

    def add_token(self, portal_id: int, token: str) -> None:
        with self.lock:
            self.portal(portal_id)
            self._tokens[token] = portal_id

    def _truth(
        self, portal_id: int, content_type: ContentType, archived: bool | None, with_data: bool
    ) -> list[TruthItem]:
        with self.lock:
            return self.portal(portal_id).ground_truth(
                content_type, archived=archived, with_data=with_data
            )

    def all_stats(self) -> dict[int, PortalStats]:
        with self.lock:
            return dict(self._stats)

    def reset_stats(self) -> None:
        with self.lock:
            self._stats = {pid: PortalStats() for pid in self._portals}
            self.unauthorized = 0
            self.writes.reset_stats()

    def set_faults(self, faults: tuple[FaultRule, ...]) -> None:
        with self.lock:
            self.config = replace(self.config, faults=faults)
            self._faults = FaultPlan(faults, self.config.fault_seed)

    def set_write_faults(self, faults: tuple[WriteFault, ...]) -> None:
        with self.lock:
            self.writes.set_faults(faults)

    def person_edit(
        self,
        portal_id: int,
        content_type: ContentType | str,
        hubspot_id: str,
        fields: dict[str, Any],
        *,
        draft: bool = False,
    ) -> None:
        with self.lock:
            self.writes.person_edit(
                portal_id, ContentType(content_type), hubspot_id, fields, draft=draft
            )

    def write_log(self, portal_id: int) -> list[dict[str, Any]]:
        with self.lock:
            return self.writes.log(portal_id)

    def write_stats(self, portal_id: int) -> dict[str, int]:
        with self.lock:
            return self.writes.stats(portal_id)

    def unpublished_rows(self, portal_id: int, table: str) -> list[str]:
        with self.lock:
            return self.writes.unpublished_rows(portal_id, table)

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
        content_type: ContentType | str,
        status: int,
        verdict: Verdict,
        fault: FaultRule | None,
    ) -> None:
        """Count one answered request (of a content type, or "account_info")."""
        old = self._stats[portal_id]
        by_status = dict(old.by_status)
        by_status[status] = by_status.get(status, 0) + 1
        by_type = dict(old.by_content_type)
        key = content_type.value if isinstance(content_type, ContentType) else content_type
        by_type[key] = by_type.get(key, 0) + 1
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
