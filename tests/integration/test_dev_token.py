"""`smuves dev token` signs a token the HTTP API takes for a member of a portal (the demo
portal's owner by default), from the settings' JWT secret and audience; `smuves portal list`
names every portal's owner, members and last sync."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from smuves_sync.api import create_app
from smuves_sync.db import DbRole, pool_for
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FakeHubSpot, PortalSpec
from tests.support import SECRET, Served, smuves, smuves_env
from tests.support.logins import runtime_url, runtime_urls

DEMO = PortalSpec(1001, "demo-private-app-token", site_pages=3)
OTHER = PortalSpec(1002, "pat-na1-other")
pytestmark = pytest.mark.hubspot(DEMO, OTHER, ten_second_limit=None)
JWT_SECRET = "a-playground-secret-of-its-own-0123456789"
AUDIENCE = "authenticated"


@pytest.fixture
async def env(db_url: str, hubspot: Served[FakeHubSpot]) -> dict[str, str]:
    """A playground's shell: the demo portal added with no owner, another owned by ops@."""
    env = smuves_env(
        db_url, hubspot.base_url, SMUVES_JWT_SECRET=JWT_SECRET, SMUVES_JWT_AUDIENCE=AUDIENCE
    )
    for spec, more in ((DEMO, ()), (OTHER, ("--owner", "ops@other.example"))):
        name = f"Portal {spec.portal_id}"
        args = ("portal", "add", str(spec.portal_id), "--name", name, *more, "--token-stdin")
        added = await smuves(env, *args, stdin=spec.token + "\n")
        assert added.code == 0, added.stderr
    return env


@pytest.fixture
async def api(db_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The HTTP API with the playground's JWT settings."""
    settings = Settings(
        database_url=db_url,
        **runtime_urls(db_url),
        jwt_secret=SecretStr(JWT_SECRET),
        jwt_audience=AUDIENCE,
        secret_key=SecretStr(SECRET),
    )
    async with pool_for(runtime_url(db_url, DbRole.APP), max_size=2) as pool:
        transport = httpx.ASGITransport(app=create_app(settings, pool=pool))
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def portals_seen(api: httpx.AsyncClient, token: str) -> list[int]:
    response = await api.get("/v1/portals", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return [portal["id"] for portal in response.json()["items"]]


async def test_the_default_token_sees_the_demo_portal(
    env: dict[str, str], api: httpx.AsyncClient
) -> None:
    done = await smuves(env, "dev", "token")
    assert done.code == 0, done.stderr
    assert JWT_SECRET not in done.stdout + done.stderr
    assert await portals_seen(api, done.stdout.strip()) == [DEMO.portal_id]


async def test_a_token_for_another_member_sees_their_portals(
    env: dict[str, str], api: httpx.AsyncClient
) -> None:
    by_portal = await smuves(env, "dev", "token", "--portal", "1002")
    by_email = await smuves(env, "dev", "token", "--email", "OPS@other.example")
    for done in (by_portal, by_email):
        assert done.code == 0, done.stderr
        assert await portals_seen(api, done.stdout.strip()) == [OTHER.portal_id]


async def test_a_token_for_someone_who_is_no_member_is_refused(env: dict[str, str]) -> None:
    for args, says in [
        (("--email", "ops@other.example", "--portal", "1001"), "is not a member of portal 1001"),
        (("--email", "nobody@example.com"), "no user nobody@example.com here"),
        (("--portal", "4040"), "portal 4040 not found"),
        (("--email", "not an email"), "is not an email address"),
    ]:
        done = await smuves(env, "dev", "token", *args)
        assert (done.code, done.stdout) == (2, ""), args
        assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


@pytest.mark.parametrize("missing", ["SMUVES_JWT_SECRET", "SMUVES_JWT_AUDIENCE"])
async def test_no_token_without_the_jwt_settings(db_url: str, missing: str) -> None:
    jwt = {"SMUVES_JWT_SECRET": JWT_SECRET, "SMUVES_JWT_AUDIENCE": AUDIENCE}
    jwt.pop(missing)
    done = await smuves(smuves_env(db_url, **jwt), "dev", "token")
    assert (done.code, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and f"{missing} is not set" in done.stderr


async def test_portal_list_names_owner_members_and_last_sync(env: dict[str, str]) -> None:
    synced = await smuves(env, "sync", "1001", "--types", "site_page")
    assert synced.code == 0, synced.stdout + synced.stderr
    run_id = int(synced.stdout.split("run ", 1)[1].split(":", 1)[0])

    listed = await smuves(env, "portal", "list")
    assert listed.code == 0, listed.stderr
    [demo] = [line for line in listed.stdout.splitlines() if "1001" in line]
    for expected in ("Portal 1001", "operator@localhost", " 1 ", f"(run {run_id})"):
        assert expected in demo, demo
    [other] = [line for line in listed.stdout.splitlines() if "1002" in line]
    assert "ops@other.example" in other and "never" in other

    rows = json.loads((await smuves(env, "portal", "list", "--json")).stdout)
    assert [(r["id"], r["owner_email"], r["members"]) for r in rows] == [
        (1001, "operator@localhost", 1),
        (1002, "ops@other.example", 1),
    ]
    assert rows[0]["last_sync"]["run_id"] == run_id and rows[1]["last_sync"] is None
