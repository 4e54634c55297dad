"""The thin admin wrappers in scripts/ for cron and on-call: they reach `smuves` and pass on
its output and exit code."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

from smuves_sync.db import Database
from smuves_sync.models import JobStatus, RunStatus
from tests.support import clean_env, db_now, query, run
from tests.support.factories import Factory

SCRIPTS = Path(__file__).parents[2] / "scripts"
# The `smuves` installed beside the interpreter running the tests.
SMUVES = str(Path(sys.executable).with_name("smuves"))


async def _script(db_url: str, name: str, *args: str) -> tuple[int, str, str]:
    env = clean_env(SMUVES_DATABASE_URL=db_url, SMUVES=SMUVES)
    done = await run(str(SCRIPTS / name), *args, env=env, timeout=60)
    return done.code, done.stdout, done.stderr


async def test_the_wrappers_run_their_commands(db_url: str, factory: Factory, db: Database) -> None:
    now = await db_now(db)
    settled = await factory.run(status=RunStatus.RUNNING)
    await factory.job(settled, status=JobStatus.COMPLETED)
    old = await factory.run(status=RunStatus.FAILED, finished_at=now - timedelta(days=60))
    failed = await factory.job(old, status=JobStatus.FAILED)

    code, out, _ = await _script(db_url, "stats.sh", "--json")
    assert code == 0
    assert json.loads(out)["depth"] == [
        {"kind": "fetch", "status": "completed", "jobs": 1},
        {"kind": "fetch", "status": "failed", "jobs": 1},
    ]

    code, out, _ = await _script(db_url, "reconcile.sh", "--json")
    assert (code, [r["id"] for r in json.loads(out)]) == (0, [settled.id])

    code, out, _ = await _script(db_url, "prune.sh", "--dry-run")
    assert (code, out.strip()) == (
        0,
        "would delete 1 run(s), 1 job(s), 0 export(s), 0 notification(s) older than 30d",
    )

    code, _, err = await _script(db_url, "requeue.sh", "424242")
    assert code == 2 and "job 424242 not found" in err

    code, out, _ = await _script(db_url, "retry_failed.sh", "--run", str(old.id))
    assert (code, out.splitlines()[0]) == (0, "requeued 1 of 1 failed job(s)")
    [row] = await query(db, "opscheck_job", job_id=failed.id)
    assert row["status"] == "pending"

    code, out, _ = await _script(db_url, "prune.sh", "90d")
    assert code == 0 and out.startswith("deleted 0 run(s)")
