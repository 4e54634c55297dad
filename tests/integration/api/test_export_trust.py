"""An exports row cannot send a worker or the API to a file of an attacker's choosing.

Written as the attack an audit reproduced: with the worker login, claim a job of one's own
portal, point a pending export at a `.pth` file of the worker's site-packages (which Python
runs at its next start) or at another tenant's export, and let the next worker write it or the
API serve it. Through the real runtime logins, each step is refused: neither login may write
an export's path; the worker writes the export's one derived place, whatever a row says, 0600
in a 0700 directory; the API serves only that place, a regular file reached through no link.
A portal's deletion takes its export files along.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.export_files import ExportFile, export_file_path, portal_export_dir
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import ContentType, ExportFormat, JobKind
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.export import handle_export
from tests.integration.api.conftest import User, written_export
from tests.support import query
from tests.support.factories import Factory
from tests.support.sql import query_as

TYPE = ContentType.BLOG_POST


async def _pending_export(client: httpx.AsyncClient, factory: Factory, owner: User) -> int:
    """A portal of `owner` with three posts and an export of them started through the API."""
    portal = await factory.portal(owner.id)
    await factory.content_rows(await factory.run(portal), 3, content_type=TYPE)
    started = await client.post(
        f"/v1/portals/{portal}/exports", json={"content_type": str(TYPE)}, headers=owner.headers
    )
    assert started.status_code == 202, started.text
    export_id: int = started.json()["export"]["id"]
    return export_id


async def test_an_export_row_sends_no_worker_and_no_download_to_another_file(
    client: httpx.AsyncClient,
    factory: Factory,
    admin_pool: Pool,
    worker_login_pool: Pool,
    api_login_pool: Pool,
    api_settings: Settings,
    alice: User,
    bob: User,
    tmp_path: Path,
) -> None:
    export_dir = api_settings.export_dir
    _, bobs_file = await written_export(factory, admin_pool, bob, export_dir, b"bob's secrets")
    export_id = await _pending_export(client, factory, alice)
    pth = tmp_path / "site-packages" / "smuves-evil.pth"
    pth.parent.mkdir()

    # Alice holds the worker login: she claims the job of her own export, lease and all.
    worker = Database(worker_login_pool)
    [job] = await Queue(worker, api_settings).claim([JobKind.EXPORT])
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("exporttrust_set_path", {"export_id": export_id, "path": str(pth)}),
        ("exporttrust_insert", {"run_id": job.run_id, "portal_id": job.portal_id}),
    ]
    for name, params in attempts:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            await query_as(
                worker_login_pool,
                name,
                as_portal=job.portal_id,
                lease=(job.id, job.lease_token),
                **{"path": str(bobs_file), **params},
            )
        # The API's login, as the portal's owner, no better.
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            await query_as(api_login_pool, name, as_user=alice.id, **{"path": str(pth), **params})

    # A row that says elsewhere all the same (written by hand, or before this rule): the next
    # worker writes the export's own place, and with the loosest umask it is still private.
    await query(admin_pool, "exporttrust_set_path", export_id=export_id, path=str(pth))
    ctx = JobContext(job, worker, api_settings, RateLimitRegistry(), "the next worker")
    loosest = os.umask(0)
    try:
        await handle_export(ctx)
    finally:
        os.umask(loosest)
    assert not pth.exists()
    own = export_file_path(
        export_dir, ExportFile(job.portal_id, job.run_id, TYPE, ExportFormat.CSV)
    )
    assert own.read_text(encoding="utf-8").count("\n") == 4  # the header and three posts
    assert stat.S_IMODE(own.stat().st_mode) == 0o600
    assert stat.S_IMODE(own.parent.stat().st_mode) == 0o700
    assert bobs_file.read_bytes() == b"bob's secrets"

    # The download serves the export's own file, whatever the row's path says.
    await query(admin_pool, "exporttrust_set_path", export_id=export_id, path=str(bobs_file))
    download = f"/v1/exports/{export_id}/download"
    served = await client.get(download, headers=alice.headers)
    assert (served.status_code, served.content) == (200, own.read_bytes())

    # A link in the file's place, or in its portal directory's, to Bob's file: not served.
    own.unlink()
    own.symlink_to(bobs_file)
    assert (await client.get(download, headers=alice.headers)).status_code == 410
    own.unlink()
    alices_dir = own.parent
    alices_dir.rmdir()
    (bobs_file.parent / own.name).write_bytes(b"bob's secrets")
    alices_dir.symlink_to(bobs_file.parent, target_is_directory=True)
    refused = await client.get(download, headers=alice.headers)
    assert (refused.status_code, refused.json()["code"]) == (410, "EXPORT_FILE_GONE")


async def test_deleting_a_portal_removes_its_export_files_only(
    client: httpx.AsyncClient,
    factory: Factory,
    admin_pool: Pool,
    api_settings: Settings,
    alice: User,
    bob: User,
) -> None:
    export_dir = api_settings.export_dir
    alices_id, alices_file = await written_export(factory, admin_pool, alice, export_dir, b"a")
    _, bobs_file = await written_export(factory, admin_pool, bob, export_dir, b"b")
    [export] = ((await client.get(f"/v1/exports/{alices_id}", headers=alice.headers)).json(),)
    portal = export["portal_id"]

    response = await client.delete(f"/v1/portals/{portal}", headers=alice.headers)

    assert response.status_code == 204
    assert not portal_export_dir(export_dir, portal).exists()
    assert not alices_file.exists()
    assert bobs_file.read_bytes() == b"b"
