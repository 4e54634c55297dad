"""A fake HubSpot CMS API for tests, benchmarks and the demo; never imported by the product.

    fake = FakeHubSpot([PortalSpec(portal_id=1, token="t", site_pages=500)], ServerConfig())
    with serve_in_thread(fake) as base_url:        # or: with serve_in_subprocess(specs, config)
        ...                                        # point the client at base_url
    fake.ground_truth(1, "site_page")              # exactly what the listings serve
    fake.advance(1)                                # next version: changes, deletions, additions
    fake.stats(1).status_429                       # counters per portal
    PortalSpec(..., poison=(Poison(PoisonKind.NO_ID, ContentType.BLOG_POST, slot=3),))

`FakeHubSpot` (in this process), `FakeHubSpotProcess` (the handle `serve_in_subprocess` yields)
and `FakeHubSpotRemote` (any running fake, by URL) share one control API: `FakeControl`.

Modules: spec (configuration records), lifecycle (objects across versions), content and hubdb
(object bodies), query (paging, sorting, filters), portal (a portal and its ground truth),
limits (rate limits and headers), faults (injection), poison (hostile objects), bodies (error
bodies), control (the control API, counters), fake (state), app and admin (HTTP), remote (the
control API over HTTP), runner (thread / subprocess), cli (the launcher's flags); writes
(the overlay writes leave), write_ops (checking and committing a write), write_routes,
hubdb_writes and write_http (the write endpoints), write_faults, write_control and
write_admin (write faults, people's edits, the write log).
"""

from smuves_sync.testing.fake_hubspot.control import FakeControl, PortalStats
from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot
from smuves_sync.testing.fake_hubspot.limits import FakeClock
from smuves_sync.testing.fake_hubspot.portal import TruthItem
from smuves_sync.testing.fake_hubspot.remote import FakeHubSpotRemote, serves_portal
from smuves_sync.testing.fake_hubspot.runner import (
    FakeHubSpotProcess,
    serve_in_subprocess,
    serve_in_thread,
)
from smuves_sync.testing.fake_hubspot.spec import (
    Churn,
    FaultKind,
    FaultRule,
    Poison,
    PoisonKind,
    PortalSpec,
    ServerConfig,
)
from smuves_sync.testing.fake_hubspot.write_faults import WriteFault, WriteFaultKind

__all__ = [
    "Churn",
    "FakeClock",
    "FakeControl",
    "FakeHubSpot",
    "FakeHubSpotProcess",
    "FakeHubSpotRemote",
    "FaultKind",
    "FaultRule",
    "Poison",
    "PoisonKind",
    "PortalSpec",
    "PortalStats",
    "ServerConfig",
    "TruthItem",
    "WriteFault",
    "WriteFaultKind",
    "serve_in_subprocess",
    "serve_in_thread",
    "serves_portal",
]
