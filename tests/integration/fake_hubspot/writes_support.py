"""What the write tests share: a small portal, its objects' ids and the spec files by API."""

from __future__ import annotations

from smuves_sync.testing.fake_hubspot import FakeHubSpot
from tests.integration.fake_hubspot.conftest import SMALL

PORTAL = SMALL.portal_id
PAGES_V3 = "Pages_rollout59888_v3_pages.json"
PAGES_DATED = "Pages_rollout59888_2026-03_pages.json"
POSTS_V3 = "Posts_rollout635_v3_posts.json"
HUBDB_V3 = "Hubdb_rollout243927_v3_hubdb.json"
SITE = "/cms/v3/pages/site-pages"
POSTS = "/cms/v3/blogs/posts"
TABLES = "/cms/v3/hubdb/tables"


def live_ids(fake: FakeHubSpot, content_type: str, n: int = 1) -> list[str]:
    """Ids of the first `n` live objects of a type."""
    return [item.hubspot_id for item in fake.ground_truth(PORTAL, content_type, archived=False)][:n]


def archived_id(fake: FakeHubSpot, content_type: str) -> str:
    """The id of an archived object of a type."""
    return fake.ground_truth(PORTAL, content_type, archived=True)[0].hubspot_id


def table_rows(fake: FakeHubSpot, n: int = 3) -> tuple[str, list[str]]:
    """A live table's id and the ids of its first `n` live rows."""
    table = live_ids(fake, "hubdb_table")[0]
    rows = [
        item.hubspot_id.split(":")[1]
        for item in fake.ground_truth(PORTAL, "hubdb_row", archived=False)
        if item.hubspot_id.startswith(table + ":")
    ]
    return table, rows[:n]
