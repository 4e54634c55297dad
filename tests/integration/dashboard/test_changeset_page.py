"""The dashboard's changeset page: the preview of an imported changeset (in-process, signed
in)."""

from __future__ import annotations

import httpx

from smuves_sync.changesets import Changes, import_changeset
from smuves_sync.changesets.files import ChangeRow
from smuves_sync.db import Database
from tests.integration.dashboard.test_pages import rows_of
from tests.integration.test_content_store import record
from tests.integration.test_content_versions import TYPE, fetch
from tests.support.factories import Factory


async def test_a_changeset_shows_its_counts_requests_warnings_and_fields(
    dashboard: httpx.AsyncClient,
    signed_in: str,
    factory: Factory,
    db: Database,
    worker_db: Database,
) -> None:
    portal = await factory.portal()
    await fetch(factory, worker_db, portal, [record("1", htmlTitle="<b>Old</b>"), record("2")])
    await fetch(
        factory, worker_db, portal, [record("1", htmlTitle="<b>Old</b>"), record("2", name="x")]
    )
    rows = [
        ChangeRow("1", None, {"htmlTitle": "<i>New</i>", "slug": "post-2"}),
        ChangeRow("2", 1, {"useFeaturedImage": "perhaps"}),
        ChangeRow("3", None, {"name": "x"}),
    ]
    changeset, _ = await import_changeset(
        db, portal, Changes(TYPE, rows), owner_id=None, filename="posts.csv"
    )

    page = await dashboard.get(f"/changesets/{changeset.id}")
    missing = await dashboard.get("/changesets/999999")

    assert page.status_code == 200
    html = page.text
    assert f"<h1>Changeset {changeset.id}</h1>" in html and "from posts.csv" in html
    assert "<strong>1</strong> changed" in html and "<strong>2</strong> invalid" in html
    assert "about <strong>3</strong> HubSpot requests (blog_post 3)" in html
    assert "blog_post 1: slug &#39;post-2&#39; is taken by blog_post 2" in html
    items = rows_of(html, "changeset-items")
    assert len(items) == 4  # two fields of post 1, one row each for the invalid posts
    title = next(row for row in items if "htmlTitle" in row)
    assert "&lt;b&gt;Old&lt;/b&gt;" in title and "&lt;i&gt;New&lt;/i&gt;" in title
    assert "<i>" not in html
    assert "useFeaturedImage: &#39;perhaps&#39; is not true or false" in items[2]
    assert "has no blog_post 3" in items[3]
    assert missing.status_code == 404


async def test_the_page_needs_a_signed_in_operator(dashboard: httpx.AsyncClient) -> None:
    page = await dashboard.get("/changesets/1")
    assert page.status_code == 303 and page.headers["location"] == "/login"
