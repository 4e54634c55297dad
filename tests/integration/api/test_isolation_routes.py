"""Isolation through the API, route by route, derived from the app so a new route cannot slip
past: user B, holding user A's ids, gets 404 from every route that takes an id (exactly what
an id that exists nowhere gets), and nothing of A's from the routes that take none."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from smuves_sync.cli.portal import add_portal
from smuves_sync.db import Database, Pool
from smuves_sync.errors import InvalidInput
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher
from tests.integration.api.conftest import User, make_token, plant_one_of_everything
from tests.support import query
from tests.support.factories import Factory

# Routes that take no id, with what B may see there (checked below).
NO_ID_ROUTES = {
    ("GET", "/v1/portals"),
    ("POST", "/v1/portals"),
    ("GET", "/v1/notifications"),
}
# Not tenant data: served to anyone.
PUBLIC_ROUTES = {
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
}
# A valid body for each route that needs one: B's request must fail on ownership, not input.
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/v1/portals/{portal_id}/fetches"): {"content_types": ["site_page"]},
    ("POST", "/v1/portals/{portal_id}/exports"): {"content_type": "site_page"},
    ("POST", "/v1/portals/{portal_id}/changesets"): {
        "content_type": "site_page",
        "changes": [{"hubspot_id": "1", "fields": {"name": "mine"}}],
    },
}


@dataclass(frozen=True)
class TenantA:
    ids: dict[str, int | str]


def _routes(app: FastAPI) -> list[tuple[str, str]]:
    """(method, path) of every route the app serves, included routers flattened."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # FastAPI before included routers were kept apart: already flat
        routes: Iterable[Any] = app.routes
    else:
        routes = iter_route_contexts(app.routes)
    found: list[tuple[str, str]] = []
    for route in routes:
        assert route.path is not None and route.methods, route
        found.extend((method, route.path) for method in sorted(route.methods) if method != "HEAD")
    return found


@pytest.fixture
async def tenant_a(factory: Factory, api_settings: Settings, alice: User) -> TenantA:
    ids = await plant_one_of_everything(
        factory, alice, 91, api_settings.export_dir, running=True, name="A's portal"
    )
    return TenantA(ids)


async def _call(
    client: httpx.AsyncClient, method: str, path: str, ids: dict[str, int | str], user: User
) -> httpx.Response:
    names = re.findall(r"{(\w+)}", path)
    unknown = [n for n in names if n not in ids]
    assert not unknown, f"{method} {path}: give tenant A an id for {unknown} in this test"
    url = path.format(**{n: ids[n] for n in names})
    body = BODIES.get((method, path))
    return await client.request(method, url, json=body, headers=user.headers)


async def test_every_route_is_covered(app: FastAPI) -> None:
    for method, path in _routes(app):
        if "{" in path:
            assert path.startswith("/v1/"), path
        else:
            assert (method, path) in NO_ID_ROUTES | PUBLIC_ROUTES, (
                f"{method} {path} is new: say in this test what another user may see there"
            )


async def test_another_users_ids_are_404_on_every_route(
    app: FastAPI,
    client: httpx.AsyncClient,
    tenant_a: TenantA,
    admin_pool: Pool,
    alice: User,
    bob: User,
) -> None:
    await _factory_portal_for(bob, admin_pool)
    walked = []
    nowhere = {
        name: value if name == "type" else 9_000_000 + i
        for i, (name, value) in enumerate(tenant_a.ids.items())
    }
    for method, path in _routes(app):
        if "{" not in path:
            continue
        foreign = await _call(client, method, path, tenant_a.ids, bob)
        absent = await _call(client, method, path, nowhere, bob)
        assert foreign.status_code == 404, (method, path, foreign.text)
        assert foreign.json()["code"] == absent.json()["code"] == "NOT_FOUND"
        # The same words as for an id that exists nowhere, with only the number changed.
        assert re.sub(r"\d+", "N", foreign.text) == re.sub(r"\d+", "N", absent.text)
        walked.append((method, path))
    assert len(walked) >= 10

    # Nothing of A's changed: the run still runs, no run was added, the notification is
    # unread, the portal is there; and A still sees all of it.
    run = await client.get(f"/v1/runs/{tenant_a.ids['run_id']}", headers=alice.headers)
    assert run.json()["status"] == "running"
    assert await query(admin_pool, "check_runs_of_portal", portal_id=91) == [{"runs": 2}]
    notes = await client.get("/v1/notifications", headers=alice.headers)
    assert notes.json()["items"][0]["read_at"] is None
    download = await client.get(
        f"/v1/exports/{tenant_a.ids['export_id']}/download", headers=alice.headers
    )
    assert download.status_code == 200


async def _factory_portal_for(user: User, admin_pool: Pool) -> None:
    """B has a portal of their own, so B's lists are not trivially empty."""
    await Factory(admin_pool).portal(user.id, portal_id=92, name="B's portal")


async def test_routes_without_ids_show_nothing_of_another_user(
    client: httpx.AsyncClient, tenant_a: TenantA, admin_pool: Pool, alice: User, bob: User
) -> None:
    await _factory_portal_for(bob, admin_pool)
    portals = await client.get("/v1/portals", headers=bob.headers)
    assert [p["id"] for p in portals.json()["items"]] == [92]
    notes = await client.get("/v1/notifications", headers=bob.headers)
    assert notes.status_code == 200 and notes.json()["items"] == []
    taken = await client.post(
        "/v1/portals", json={"id": 91, "name": "mine now", "token": "t"}, headers=bob.headers
    )
    assert taken.status_code == 409
    mine = await client.get("/v1/portals", headers=alice.headers)
    assert [p["name"] for p in mine.json()["items"]] == ["A's portal"]


async def test_every_v1_route_wants_a_token(
    app: FastAPI, client: httpx.AsyncClient, tenant_a: TenantA
) -> None:
    for method, path in _routes(app):
        if not path.startswith("/v1/"):
            continue
        names = re.findall(r"{(\w+)}", path)
        url = path.format(**{n: tenant_a.ids[n] for n in names})
        response = await client.request(method, url, json=BODIES.get((method, path)))
        assert response.status_code == 401, (method, path)
        assert response.json()["code"] == "UNAUTHENTICATED"


async def test_a_squatter_ends_up_seeing_nothing_of_the_portal(
    app: FastAPI,
    client: httpx.AsyncClient,
    factory: Factory,
    admin_pool: Pool,
    db: Database,
    api_settings: Settings,
    bob: User,
) -> None:
    """Hub ids are public: Bob (the squatter) tries to take Acme's portal 700 first. Today he
    cannot connect it without a token of portal 700; a squat from before that (planted here,
    with a run, content and a notification) is undone by the operator's --transfer-to, after
    which Bob sees nothing of it on any route, and the real owner sees it all."""
    for token in ("pat-na1-squatters-own-portal", "not-a-token-at-all"):
        refused = await client.post(
            "/v1/portals", json={"id": 700, "name": "Acme", "token": token}, headers=bob.headers
        )
        assert refused.status_code == 422, refused.text
    assert await query(admin_pool, "check_portal_rows", portal_id=700) == [
        {"portals": 0, "runs": 0, "jobs": 0, "content": 0}
    ]

    # The squat an earlier version let through, with one of everything a path can name.
    ids = await plant_one_of_everything(
        factory, bob, 700, api_settings.export_dir, name="Acme (Bob's)"
    )

    cipher = TokenCipher(api_settings.secret_key)
    acme_token = SecretStr("pat-na1-acme-real-token")
    with pytest.raises(InvalidInput, match=f"owned by {bob.email}"):
        await add_portal(
            db,
            cipher,
            700,
            "Acme",
            acme_token,
            owner_email="ops@acme.example",
            settings=api_settings,
        )
    added = await add_portal(
        db, cipher, 700, "Acme", acme_token, transfer_to="ops@acme.example", settings=api_settings
    )
    assert added.removed_members == (bob.email,)

    for method, path in _routes(app):
        if "{" in path:
            response = await _call(client, method, path, ids, bob)
            assert response.status_code == 404, (method, path, response.text)
    assert (await client.get("/v1/portals", headers=bob.headers)).json()["items"] == []
    assert (await client.get("/v1/notifications", headers=bob.headers)).json()["items"] == []
    assert await query(admin_pool, "check_notifications_of_user", user_id=bob.id) == []
    retry = await client.post(
        "/v1/portals",
        json={"id": 700, "name": "Mine", "token": "pat-na1-acme-real-token"},
        headers=bob.headers,
    )
    assert retry.status_code == 409  # even with Acme's own token: only the owner reconnects

    ops = uuid.uuid4()
    ops_headers = {"Authorization": f"Bearer {make_token(ops, email='ops@acme.example')}"}
    mine = await client.get("/v1/portals", headers=ops_headers)
    assert [(p["id"], p["role"]) for p in mine.json()["items"]] == [(700, "owner")]
    content = await client.get("/v1/portals/700/content?type=site_page", headers=ops_headers)
    assert content.status_code == 200 and len(content.json()["items"]) == 1
