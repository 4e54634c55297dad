"""Fixtures for the fake HubSpot server's own tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import httpx
import pytest

from smuves_sync.testing.fake_hubspot import FakeHubSpot, serve_in_thread
from tests.support import fake_portal

TOKEN = "pat-na1-test-token"
SMALL = fake_portal(4242, "30,25,35,4,40,12,20,15,6", seed=11, archived_share=0.2, token=TOKEN)

Serve = Callable[[FakeHubSpot], str]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start fakes in background threads; all stop when the test ends."""
    with ExitStack() as stack:
        yield lambda fake: stack.enter_context(serve_in_thread(fake))


def client(base_url: str, token: str = TOKEN) -> httpx.AsyncClient:
    """An HTTP client carrying a bearer token."""
    return httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {token}"})


async def fetch_all(
    http: httpx.AsyncClient, path: str, *, archived: bool = False, limit: int = 100
) -> list[dict[str, object]]:
    """Follow `paging.next.after` to the end; returns every result."""
    results: list[dict[str, object]] = []
    params: dict[str, str | int] = {"limit": limit, "archived": str(archived).lower()}
    while True:
        response = await http.get(path, params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        results.extend(body["results"])
        following = body.get("paging", {}).get("next")
        if following is None:
            return results
        params["after"] = following["after"]
