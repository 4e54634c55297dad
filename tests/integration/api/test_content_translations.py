"""Language variants: `with=translations` on the content pages, and one object by its key."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from smuves_sync.db import Pool
from smuves_sync.models import ContentType
from tests.integration.api.conftest import User, get_ok
from tests.support import query
from tests.support.factories import Factory

PORTAL = 83
TAG = ContentType.BLOG_TAG


@pytest.fixture
async def portal(factory: Factory, alice: User, admin_pool: Pool) -> int:
    """Tag 11 (de) with its translations 13 (en), 15 (fr) and 16 (it, deleted); tag 12 alone;
    blog 20, translated from a blog 11 that is not stored (another type's group)."""
    portal_id = await factory.portal(alice.id, portal_id=PORTAL)
    run = await factory.run(portal_id, owner=alice.id)
    for hubspot_id, language, primary in [
        ("11", "de", None),
        ("12", "de", None),
        ("13", "en", "11"),
        ("15", "fr", "11"),
        ("16", "it", "11"),
    ]:
        await factory.content_item(
            run,
            hubspot_id,
            content_type=TAG,
            name=f"Tag {hubspot_id}",
            language=language,
            translated_from_id=primary,
        )
    await query(admin_pool, "plant_content_deleted", portal_id=portal_id, hubspot_id="16")
    await factory.content_item(
        run,
        "20",
        content_type=ContentType.BLOG,
        name="Blog",
        language="en",
        translated_from_id="11",
    )
    return portal_id


def variants(item: dict[str, Any]) -> list[tuple[str, str, str | None]] | None:
    if item["translations"] is None:
        return None
    return [(t["hubspot_id"], t["language"], t["translated_from_id"]) for t in item["translations"]]


async def test_a_page_with_translations_gives_each_object_its_language_group(
    client: httpx.AsyncClient, portal: int, alice: User
) -> None:
    page = await get_ok(client, alice, f"/v1/portals/{PORTAL}/content?with=translations")
    items = {item["hubspot_id"]: item for item in page["items"]}
    assert sorted(items) == ["11", "12", "13", "15", "20"]
    assert variants(items["11"]) == [("13", "en", "11"), ("15", "fr", "11")]
    assert variants(items["13"]) == [("11", "de", None), ("15", "fr", "11")]
    assert variants(items["12"]) == []
    # Blog 20's primary is blog 11, which is not stored; tag 11 is of another type.
    assert variants(items["20"]) == []
    assert items["13"]["translated_from_id"] == "11"
    assert items["11"]["data"] == {"id": "11", "name": "Tag 11"}


async def test_without_asking_there_are_no_translations(
    client: httpx.AsyncClient, portal: int, alice: User
) -> None:
    response = await client.get(
        f"/v1/portals/{PORTAL}/content?type=blog_tag", headers=alice.headers
    )
    items = response.json()["items"]
    assert [item["hubspot_id"] for item in items] == ["11", "12", "13", "15"]
    assert {variants(item) for item in items} == {None}
    assert [item["translated_from_id"] for item in items] == [None, None, "11", "11"]


async def test_one_object_with_its_translations(
    client: httpx.AsyncClient, portal: int, alice: User
) -> None:
    item = await get_ok(
        client, alice, f"/v1/portals/{PORTAL}/content/blog_tag/15?with=translations"
    )
    assert (item["content_type"], item["hubspot_id"], item["language"]) == ("blog_tag", "15", "fr")
    assert item["data"] == {"id": "15", "name": "Tag 15"}
    assert variants(item) == [("11", "de", None), ("13", "en", "11")]

    plain = await get_ok(client, alice, f"/v1/portals/{PORTAL}/content/blog_tag/11")
    assert (plain["name"], variants(plain)) == ("Tag 11", None)


async def test_a_translation_whose_primary_is_gone_still_finds_its_siblings(
    client: httpx.AsyncClient, portal: int, alice: User, admin_pool: Pool
) -> None:
    await query(admin_pool, "plant_content_deleted", portal_id=PORTAL, hubspot_id="11")
    response = await client.get(
        f"/v1/portals/{PORTAL}/content/blog_tag/13?with=translations", headers=alice.headers
    )
    assert variants(response.json()) == [("15", "fr", "11")]


@pytest.mark.parametrize(
    "path",
    [
        "content/blog_tag/99",  # never stored
        "content/blog_tag/16",  # deleted
        "content/blog/11",  # another type's id
    ],
)
async def test_an_object_that_is_not_live_is_404(
    client: httpx.AsyncClient, portal: int, alice: User, path: str
) -> None:
    response = await client.get(f"/v1/portals/{PORTAL}/{path}", headers=alice.headers)
    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"


async def test_another_users_object_is_404_like_a_missing_one(
    client: httpx.AsyncClient, portal: int, bob: User
) -> None:
    for path in ("content/blog_tag/11?with=translations", "content?with=translations"):
        response = await client.get(f"/v1/portals/{PORTAL}/{path}", headers=bob.headers)
        assert response.status_code == 404
