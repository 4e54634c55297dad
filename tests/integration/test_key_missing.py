"""A worker that cannot decrypt a portal's token (it was encrypted with a key this worker does
not have: a rotation whose processes do not all run with NEW,OLD) parks the job, no attempt
spent, with a reason a person acts on, instead of failing it for good; logged once."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from pydantic import SecretStr

from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.token_crypto import new_secret_key
from smuves_sync.workers.runner import Runner
from tests.support import SECRET, Sync, db_now, fake_portal, query

SPEC = fake_portal(7301, "30,0,20,0,0,0,0,0,0", seed=2)
NEW = new_secret_key()
WANTED = [ContentType.SITE_PAGE, ContentType.BLOG_POST]

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


async def test_a_token_under_a_key_the_worker_lacks_parks_the_job(
    sync: Sync, caplog: pytest.LogCaptureFixture
) -> None:
    portal = await sync.plant_portal()  # its token is under SECRET, the old key
    started = await start_fetch(sync.worker_db, portal, WANTED)
    before = await db_now(sync.db)
    # This worker was started with only the new key.
    settings = sync.settings_with(secret_key=SecretStr(NEW))

    with caplog.at_level(logging.WARNING, logger="smuves_sync.workers.runner"):
        runner = Runner(sync.worker_db, settings, kinds=[JobKind.FETCH], concurrency=1, burst=True)
        await runner.run()

    assert (runner.stats.parked, runner.stats.failed) == (len(WANTED), 0)
    jobs = await query(sync.db, "token_jobs_of_run", run_id=started.run.id)
    assert [(j["status"], j["attempts"]) for j in jobs] == [("pending", 0)] * len(WANTED)
    for job in jobs:
        assert "encrypted with a key this worker does not have" in job["last_error"]
        assert job["last_error_public"] == job["last_error"]
        assert "SMUVES_SECRET_KEY=NEW,OLD" in job["last_error"]
        assert job["run_after"] >= before + timedelta(minutes=15)
    told = [r for r in caplog.records if "key this worker does not have" in r.getMessage()]
    assert len(told) == 1 and told[0].exc_info is None  # once, and not as a crash
    assert sync.fake.stats(portal).requests == 0 and sync.fake.unauthorized == 0

    # A worker with both keys reads the token once the wait is over.
    both = sync.settings_with(secret_key=SecretStr(f"{NEW},{SECRET}"))
    await query(sync.db, "token_jobs_due_now", run_id=started.run.id)
    await Runner(sync.worker_db, both, kinds=[JobKind.FETCH], concurrency=2, burst=True).run()
    jobs = await query(sync.db, "token_jobs_of_run", run_id=started.run.id)
    assert {j["status"] for j in jobs} == {"completed"}
