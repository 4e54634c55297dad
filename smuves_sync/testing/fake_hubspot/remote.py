"""The control API of a fake in another process, through its /_fake admin endpoints (admin.py).

    fake = FakeHubSpotRemote("http://127.0.0.1:8765")   # e.g. started by scripts/fake_hubspot.py
    fake.advance(1001)
    fake.stats(1001).requests
    serves_portal("http://127.0.0.1:8711", 1001, "demo-token")   # is that a fake of ours?

Each call blocks briefly on a loopback request; use it from fixtures or between the awaited
steps of a test.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import httpx

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.control import FakeControl, PortalStats
from smuves_sync.testing.fake_hubspot.portal import TruthItem
from smuves_sync.testing.fake_hubspot.spec import Churn, FaultRule, encode_faults
from smuves_sync.testing.fake_hubspot.write_faults import WriteFault


def serves_portal(base_url: str, portal_id: int, token: str, *, timeout_s: float = 5.0) -> bool:
    """True when `base_url` answers the account details of `token` as portal `portal_id`, as a
    fake serving that portal does; False for anything else listening there, or nothing."""
    try:
        with httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout_s) as client:
            response = client.get(
                "/account-info/v3/details", headers={"Authorization": f"Bearer {token}"}
            )
        return response.status_code == 200 and response.json().get("portalId") == portal_id
    except (httpx.HTTPError, ValueError, AttributeError):
        # Not HTTP, not JSON, or JSON that is not an object: not a fake of ours.
        return False


class FakeHubSpotRemote(FakeControl):
    """A running fake, driven over HTTP at `base_url`."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def _call(
        self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None
    ) -> Any:
        with httpx.Client(base_url=self.base_url, timeout=60.0) as client:
            response = client.request(method, path, json=body, params=params)
        response.raise_for_status()
        return response.json()

    # --- control API (FakeControl documents it) ------------------------------------------------

    def advance(self, portal_id: int, churn: Churn | None = None) -> int:
        body = {} if churn is None else asdict(churn)
        return int(self._call("POST", f"/_fake/portals/{portal_id}/advance", body)["version"])

    def version(self, portal_id: int) -> int:
        return int(self._call("GET", f"/_fake/portals/{portal_id}")["version"])

    def revoke_token(self, token: str) -> None:
        self._call("POST", "/_fake/tokens/revoke", {"token": token})

    def add_token(self, portal_id: int, token: str) -> None:
        self._call("POST", "/_fake/tokens", {"portal_id": portal_id, "token": token})

    def set_faults(self, faults: tuple[FaultRule, ...]) -> None:
        self._call("PUT", "/_fake/faults", {"faults": encode_faults(faults)})

    def set_write_faults(self, faults: tuple[WriteFault, ...]) -> None:
        self._call("PUT", "/_fake/write-faults", {"faults": [f.as_json() for f in faults]})

    def person_edit(
        self,
        portal_id: int,
        content_type: ContentType | str,
        hubspot_id: str,
        fields: dict[str, Any],
        *,
        draft: bool = False,
    ) -> None:
        body = {
            "type": ContentType(content_type).value,
            "id": hubspot_id,
            "fields": fields,
            "draft": draft,
        }
        self._call("POST", f"/_fake/portals/{portal_id}/person-edit", body)

    def write_log(self, portal_id: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call("GET", f"/_fake/portals/{portal_id}/write-log")[
            "items"
        ]
        return items

    def write_stats(self, portal_id: int) -> dict[str, int]:
        raw = self._call("GET", f"/_fake/portals/{portal_id}/write-stats")["counters"]
        return {str(k): int(v) for k, v in raw.items()}

    def unpublished_rows(self, portal_id: int, table: str) -> list[str]:
        path = f"/_fake/portals/{portal_id}/unpublished-rows"
        return [str(r) for r in self._call("GET", path, params={"table": table})["rows"]]

    def all_stats(self) -> dict[int, PortalStats]:
        raw = self._call("GET", "/_fake/stats")["portals"]
        return {int(pid): PortalStats.from_json(stats) for pid, stats in raw.items()}

    def reset_stats(self) -> None:
        self._call("POST", "/_fake/stats/reset")

    def _truth(
        self, portal_id: int, content_type: ContentType, archived: bool | None, with_data: bool
    ) -> list[TruthItem]:
        params: dict[str, str] = {"type": content_type.value, "data": str(with_data).lower()}
        if archived is not None:
            params["archived"] = str(archived).lower()
        raw = self._call("GET", f"/_fake/portals/{portal_id}/truth", params=params)
        return [TruthItem.from_json(item) for item in raw["items"]]
