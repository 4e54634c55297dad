"""Poisoned objects: the fake serves hostile objects in place, and still in the specs' shapes
wherever the spec allows the poison."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import ValidationError

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    Poison,
    PoisonKind,
    PortalSpec,
    ServerConfig,
)
from smuves_sync.testing.fake_hubspot.cli import argument_parser, setup_from_args
from smuves_sync.testing.fake_hubspot.spec import (
    SPEC_VALID_POISONS,
    decode_setup,
    encode_setup,
)
from tests.integration.fake_hubspot.conftest import TOKEN, Serve, client
from tests.integration.fake_hubspot.openapi import validate
from tests.support import fake_portal

PAGES_SPEC = "Pages_rollout59888_v3_pages.json"
SITE = "/cms/v3/pages/site-pages"
HUBDB_SPEC = "Hubdb_rollout243927_v3_hubdb.json"
TABLES = "/cms/v3/hubdb/tables"
# One poison of each kind on a site page, spread over the first two pages of 10.
SITE_POISONS = tuple(
    Poison(kind, ContentType.SITE_PAGE, slot=2 * index + 1) for index, kind in enumerate(PoisonKind)
)
ROW_POISON = Poison(PoisonKind.LONE_SURROGATE, ContentType.HUBDB_ROW, slot=4, table_slot=1)
TABLE_POISON = Poison(PoisonKind.NUL_IN_NAME, ContentType.HUBDB_TABLE, slot=0)
POISONS = (*SITE_POISONS, ROW_POISON, TABLE_POISON)
SPEC = fake_portal(4343, "30,0,0,2,10", seed=4, archived_share=0.0, token=TOKEN, poison=POISONS)


def raw_results(text: str) -> list[str]:
    """Each result of a listing body as the JSON text it was served as."""
    body = json.loads(text)
    decoder = json.JSONDecoder()
    start = text.index('"results":[') + len('"results":[')
    found: list[str] = []
    for _ in body["results"]:
        _, end = decoder.raw_decode(text, start)
        found.append(text[start:end])
        start = end + 1
    return found


async def test_each_poison_is_served_in_place_of_its_object(serve: Serve) -> None:
    fake = FakeHubSpot([SPEC], ServerConfig(ten_second_limit=None))
    truth = {
        t.hubspot_id: t for t in fake.ground_truth(SPEC.portal_id, "site_page", with_data=True)
    }
    ids = list(truth)
    async with client(serve(fake)) as http:
        response = await http.get(SITE, params={"limit": 10})
        following = await http.get(
            SITE, params={"limit": 10, "after": response.json()["paging"]["next"]["after"]}
        )
    first = response.json()["results"]
    # A duplicate in each page (slots 9 and 11): eleven objects for a limit of ten.
    assert len(first) == 11 and len(following.json()["results"]) == 11
    served = first + following.json()["results"]
    texts = raw_results(response.text) + raw_results(following.text)
    by_kind: dict[PoisonKind, list[tuple[dict[str, Any], str]]] = {}
    slot = 0
    kinds = {p.slot: p.kind for p in SITE_POISONS}
    position = 0
    while position < len(served):
        kind = kinds.get(slot)
        count = 2 if kind in (PoisonKind.DUPLICATE_ID, PoisonKind.NUMERIC_ID) else 1
        if kind is not None:
            pairs = zip(served[position : position + count], texts[position:], strict=False)
            by_kind[kind] = list(pairs)
        position += count
        slot += 1

    [(nul_body, nul_body_text)] = by_kind[PoisonKind.NUL_IN_BODY]
    assert "\\u0000" in nul_body_text
    assert "\x00" in nul_body["widgets"]["main_body"]["body"]["html"]
    [(nul_key, _)] = by_kind[PoisonKind.NUL_IN_KEY]
    assert any("\x00" in key for key in nul_key)
    [(nul_name, _)] = by_kind[PoisonKind.NUL_IN_NAME]
    assert "\x00" in nul_name["name"]
    [(lone, lone_text)] = by_kind[PoisonKind.LONE_SURROGATE]
    assert "\ud800" in lone["name"] and "\\ud800" in lone_text and "\\udfff" in lone_text
    (original, copy) = (pair[0] for pair in by_kind[PoisonKind.DUPLICATE_ID])
    assert original["id"] == copy["id"] and copy["name"] == original["name"] + " (second copy)"
    (original, copy) = (pair[0] for pair in by_kind[PoisonKind.NUMERIC_ID])
    assert copy["id"] == int(original["id"]) and isinstance(original["id"], str)
    [(no_id, _)] = by_kind[PoisonKind.NO_ID]
    assert "id" not in no_id
    [(bad, _)] = by_kind[PoisonKind.BAD_FIELD]
    assert bad["name"] == 12345
    # The ground truth keeps every object at its id, with what a store should keep for it.
    assert truth[ids[7]].data == by_kind[PoisonKind.LONE_SURROGATE][0][0]
    assert truth[ids[9]].data == by_kind[PoisonKind.DUPLICATE_ID][1][0]
    assert truth[ids[13]].data == no_id


async def test_poisons_the_spec_allows_keep_the_answers_valid(serve: Serve) -> None:
    fake = FakeHubSpot([SPEC], ServerConfig(ten_second_limit=None))
    valid = {p.slot for p in SITE_POISONS if p.kind in SPEC_VALID_POISONS}
    async with client(serve(fake)) as http:
        pages = (await http.get(SITE, params={"limit": 100})).json()
        tables = (await http.get(TABLES)).json()
        table_ids = [t["id"] for t in tables["results"]]
        rows = (await http.get(f"{TABLES}/{table_ids[1]}/rows")).json()
        one = await http.get(f"{SITE}/{pages['results'][7]['id']}")
    validate(HUBDB_SPEC, TABLES, 200, tables)
    validate(HUBDB_SPEC, TABLES + "/{tableIdOrName}/rows", 200, rows)
    assert "\x00" in tables["results"][0]["label"]
    assert "\ud800" in rows["results"][4]["name"]
    validate(PAGES_SPEC, SITE + "/{objectId}", 200, one.json())
    assert "\ud800" in one.json()["name"]
    truth_ids = [t.hubspot_id for t in fake.ground_truth(SPEC.portal_id, "site_page")]
    listed = {truth_ids.index(str(r["id"])) if "id" in r else 13 for r in pages["results"]}
    assert listed == set(range(30))
    spec_valid = [
        r for r in pages["results"] if "id" in r and truth_ids.index(str(r["id"])) in valid
    ]
    validate(PAGES_SPEC, SITE, 200, {**pages, "results": spec_valid})
    with pytest.raises(ValidationError):
        validate(PAGES_SPEC, SITE, 200, pages)  # the others are what the spec forbids


def test_poisons_travel_to_a_subprocess_and_come_from_flags() -> None:
    portals, _ = decode_setup(encode_setup((SPEC,), ServerConfig()))
    assert portals == (SPEC,)
    args = argument_parser().parse_args(
        [
            "--portal",
            "1001:t:20,0,10,1,5",
            "--poison",
            "1001:kind=no_id,type=blog_post,slot=3",
            "--poison",
            "1001:kind=lone_surrogate,type=hubdb_row,slot=2,table=0",
        ]
    )
    [portal], _ = setup_from_args(args)
    assert portal.poison == (
        Poison(PoisonKind.NO_ID, ContentType.BLOG_POST, 3),
        Poison(PoisonKind.LONE_SURROGATE, ContentType.HUBDB_ROW, 2, table_slot=0),
    )
    with pytest.raises(ValueError, match="not hosted"):
        setup_from_args(
            argument_parser().parse_args(["--poison", "7:kind=no_id,type=blog_post,slot=1"])
        )
    with pytest.raises(ValueError, match="one poison"):
        PortalSpec(1, "t", poison=(SPEC.poison[0], SPEC.poison[0]))
