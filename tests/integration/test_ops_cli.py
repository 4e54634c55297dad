"""`smuves runs / run / jobs / stats / admin …`: what they print and the exit codes scripts see."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import Result

from smuves_sync.db import Database
from smuves_sync.export_files import ExportFile, export_file_path
from smuves_sync.models import ContentType, ExportFormat, JobKind, JobStatus, RunStatus
from tests.support import db_now, invoke, json_out, query
from tests.support.factories import Factory

ERROR = "HubSpotRetryableError: HubSpot answered 500 (portal, site_page, HTTP 500)"


async def test_runs_lists_newest_first_with_filters(db_url: str, factory: Factory) -> None:
    portal = await factory.portal()
    first = await factory.run(portal, status=RunStatus.FAILED)
    await factory.job(first, status=JobStatus.FAILED, total=10, processed=3)
    second = await factory.run(portal, kind=JobKind.EXPORT, status=RunStatus.RUNNING)
    elsewhere = await factory.run(status=RunStatus.COMPLETED)

    listed = json_out(await invoke(db_url, "runs", "--json"))
    of_portal = json_out(await invoke(db_url, "runs", "--portal", str(portal), "--json"))
    failed = json_out(await invoke(db_url, "runs", "--status", "failed", "--json"))
    exports = json_out(await invoke(db_url, "runs", "--kind", "export", "--limit", "5", "--json"))
    table = await invoke(db_url, "runs", "--portal", str(portal))

    assert [r["id"] for r in listed] == [elsewhere.id, second.id, first.id]
    assert [r["id"] for r in of_portal] == [second.id, first.id]
    [f] = failed
    assert (f["id"], f["status"], f["jobs"], f["jobs_failed"], f["processed"], f["total"]) == (
        first.id,
        "failed",
        1,
        1,
        3,
        10,
    )
    assert f["content_types"] == [str(t) for t in ContentType]
    assert [r["id"] for r in exports] == [second.id]
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert any(f"│ {first.id} " in line and "failed" in line and "3/10" in line for line in lines)
    assert not any(f"│ {elsewhere.id} " in line for line in lines)


async def test_runs_with_nothing_to_show_and_bad_filters(db_url: str) -> None:
    empty = await invoke(db_url, "runs")
    unknown_portal = await invoke(db_url, "runs", "--portal", "999")
    bad_status = await invoke(db_url, "runs", "--status", "done")

    assert (empty.exit_code, empty.stdout.strip()) == (0, "no runs")
    assert (unknown_portal.exit_code, unknown_portal.stderr.strip()) == (
        2,
        "Error: portal 999 not found",
    )
    assert bad_status.exit_code == 2
    assert "'done' is not one of" in bad_status.stderr


async def test_run_shows_each_job(db_url: str, factory: Factory) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    failed = await factory.job(
        run, status=JobStatus.FAILED, attempts=3, total=500, processed=200, last_error=ERROR
    )
    running = await factory.job(
        run,
        content_type=ContentType.BLOG_POST,
        status=JobStatus.RUNNING,
        attempts=1,
        total=1000,
        processed=300,
        locked_by="host-a:41",
    )

    shown = json_out(await invoke(db_url, "run", str(run.id), "--json"))
    table = await invoke(db_url, "run", str(run.id))

    assert (shown["id"], shown["status"], shown["portal_id"]) == (run.id, "running", run.portal_id)
    assert [
        (j["id"], j["content_type"], j["status"], j["processed"], j["total"], j["attempts"])
        for j in shown["jobs"]
    ] == [
        (failed.id, "site_page", "failed", 200, 500, 3),
        (running.id, "blog_post", "running", 300, 1000, 1),
    ]
    assert shown["jobs"][0]["last_error"] == ERROR
    assert all("lease_token" not in j for j in shown["jobs"])
    assert table.exit_code == 0
    assert f"jobs of run {run.id}" in table.stdout
    assert ERROR in table.stdout
    row = next(line for line in table.stdout.splitlines() if f"│ {running.id} " in line)
    assert "300/1000" in row and "1/3" in row and "host-a:41" in row


async def test_run_says_how_many_objects_could_not_be_stored_and_why(
    db_url: str, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.COMPLETED)
    await factory.job(run, status=JobStatus.COMPLETED)
    await factory.content_reject(run, "7", reason="field 'name' is int, expected text")
    await factory.content_reject(run)

    shown = json_out(await invoke(db_url, "run", str(run.id), "--json"))
    table = await invoke(db_url, "run", str(run.id))

    note = (
        "2 objects could not be stored: site_page 2 (field 'name' is int, expected text; and 1 "
        "other reason)"
    )
    assert shown["rejected"] == {
        "objects": 2,
        "message": note,
        "by_type": [
            {
                "content_type": "site_page",
                "objects": 2,
                "reason": "field 'name' is int, expected text",
                "reasons": 2,
            }
        ],
    }
    assert table.exit_code == 0
    assert "2 objects could not be stored" in table.stdout
    assert f"FROM content_rejects WHERE run_id = {run.id}" in " ".join(table.stdout.split())
    clean = await factory.run(status=RunStatus.COMPLETED)
    quiet = await invoke(db_url, "run", str(clean.id))
    assert "could not be stored" not in quiet.stdout
    assert json_out(await invoke(db_url, "run", str(clean.id), "--json"))["rejected"] == {
        "objects": 0,
        "message": None,
        "by_type": [],
    }


@pytest.mark.parametrize("args", [["run", "424242"], ["jobs", "--run", "424242"]])
async def test_an_unknown_run_is_exit_code_2(db_url: str, args: list[str]) -> None:
    result = await invoke(db_url, *args)
    assert result.exit_code == 2
    assert "run 424242 not found" in result.stderr
    assert result.stdout == ""


async def test_jobs_filters(db_url: str, factory: Factory) -> None:
    run = await factory.run()
    failed = await factory.job(run, status=JobStatus.FAILED)
    pending = await factory.job(run, content_type=ContentType.BLOG_POST)
    export = await factory.job(await factory.run(kind=JobKind.EXPORT), status=JobStatus.FAILED)

    def ids(result: Result) -> list[int]:
        return [j["id"] for j in json_out(result)]

    assert ids(await invoke(db_url, "jobs", "--json")) == [export.id, pending.id, failed.id]
    assert ids(await invoke(db_url, "jobs", "--status", "failed", "--json")) == [
        export.id,
        failed.id,
    ]
    assert ids(await invoke(db_url, "jobs", "--status", "failed", "--kind", "fetch", "--json")) == [
        failed.id
    ]
    assert ids(
        await invoke(db_url, "jobs", "--status", "pending", "--status", "failed", "--json")
    ) == [export.id, pending.id, failed.id]
    assert ids(await invoke(db_url, "jobs", "--portal", str(run.portal_id), "--json")) == [
        pending.id,
        failed.id,
    ]
    assert ids(await invoke(db_url, "jobs", "--run", str(run.id), "--limit", "1", "--json")) == [
        pending.id
    ]
    assert (await invoke(db_url, "jobs", "--status", "completed")).stdout.strip() == "no jobs"


async def test_stats_reads_the_lease_from_the_database(
    db_url: str, factory: Factory, db: Database
) -> None:
    now = await db_now(db)
    stuck = await factory.job(status=JobStatus.RUNNING, locked_at=now - timedelta(minutes=10))
    await factory.job(status=JobStatus.PENDING, run_after=now - timedelta(hours=1))
    await factory.job(await factory.run(kind=JobKind.EXPORT), status=JobStatus.COMPLETED)

    default = json_out(await invoke(db_url, "stats", "--json"))
    table = await invoke(db_url, "stats")
    await query(db, "set_job_lease", kind="fetch", lease=timedelta(minutes=20))
    long_lease = json_out(await invoke(db_url, "stats", "--json"))

    assert default["depth"] == [
        {"kind": "export", "status": "completed", "jobs": 1},
        {"kind": "fetch", "status": "pending", "jobs": 1},
        {"kind": "fetch", "status": "running", "jobs": 1},
    ]
    [pending] = default["pending"]
    assert (pending["kind"], pending["due"], pending["waiting"]) == ("fetch", 1, 0)
    assert pending["oldest_due_age_seconds"] >= 3600
    assert [(e["id"], e["locked_by"]) for e in default["expired_leases"]] == [(stuck.id, "factory")]
    assert default["expired_leases"][0]["silent_for_seconds"] >= 600
    assert long_lease["expired_leases"] == []
    assert table.exit_code == 0
    assert "queue depth" in table.stdout
    assert "running jobs past their lease: 1" in table.stdout


async def test_admin_reconcile_settles_finished_runs(
    db_url: str, factory: Factory, db: Database
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    await factory.job(run, status=JobStatus.COMPLETED)
    await factory.job(run, content_type=ContentType.BLOG_POST, status=JobStatus.FAILED)
    open_run = await factory.run(status=RunStatus.RUNNING)
    await factory.job(open_run, status=JobStatus.RUNNING)

    result = await invoke(db_url, "admin", "reconcile")
    again = json_out(await invoke(db_url, "admin", "reconcile", "--json"))

    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "settled 1 run(s)",
        f"  run {run.id} (portal {run.portal_id}): partially_failed",
    ]
    assert again == []
    [row] = await query(db, "opscheck_run", run_id=open_run.id)
    assert row["status"] == "running"


async def test_admin_requeue_and_its_refusals(db_url: str, factory: Factory, db: Database) -> None:
    portal = await factory.portal()
    old = await factory.run(portal, status=RunStatus.FAILED)
    failed = await factory.job(old, status=JobStatus.FAILED, attempts=3)
    blog = await factory.job(old, content_type=ContentType.BLOG_POST, status=JobStatus.FAILED)
    current = await factory.run(portal, status=RunStatus.RUNNING)
    running = await factory.job(
        current, content_type=ContentType.BLOG_POST, status=JobStatus.RUNNING
    )

    ok = await invoke(db_url, "admin", "requeue", str(failed.id))
    busy = await invoke(db_url, "admin", "requeue", str(running.id))
    blocked = await invoke(db_url, "admin", "requeue", str(blog.id))
    missing = await invoke(db_url, "admin", "requeue", "424242")

    assert (ok.exit_code, ok.stdout.strip()) == (0, f"job {failed.id} requeued (was failed)")
    [row] = await query(db, "opscheck_job", job_id=failed.id)
    assert (row["status"], row["attempts"]) == ("pending", 0)
    assert busy.exit_code == 2
    assert busy.stderr.strip() == (
        f"Error: job {running.id} is running: only failed or stopped jobs can be requeued"
    )
    assert blocked.exit_code == 2
    assert f"job {running.id} of run {current.id} already fetches the same portal and type" in (
        blocked.stderr
    )
    [row] = await query(db, "opscheck_job", job_id=blog.id)
    assert row["status"] == "failed"
    assert (missing.exit_code, missing.stderr.strip()) == (
        2,
        "Error: job 424242 not found (see `smuves jobs`)",
    )


async def test_admin_retry_failed(db_url: str, factory: Factory, db: Database) -> None:
    portal = await factory.portal()
    run = await factory.run(portal, status=RunStatus.FAILED)
    a = await factory.job(run, status=JobStatus.FAILED)
    b = await factory.job(run, content_type=ContentType.HUBDB_ROW, status=JobStatus.FAILED)
    other = await factory.job(status=JobStatus.FAILED)

    result = await invoke(db_url, "admin", "retry-failed", "--portal", str(portal))
    nothing = json_out(
        await invoke(db_url, "admin", "retry-failed", "--run", str(run.id), "--json")
    )
    unknown = await invoke(db_url, "admin", "retry-failed", "--run", "424242")

    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "requeued 2 of 2 failed job(s)",
        f"  job {b.id}: requeued",
        f"  job {a.id}: requeued",
    ]
    assert nothing == []
    [row] = await query(db, "opscheck_job", job_id=other.id)
    assert row["status"] == "failed"
    assert (unknown.exit_code, unknown.stderr.strip()) == (
        2,
        "Error: run 424242 not found (see `smuves runs`)",
    )


async def test_admin_prune(db_url: str, factory: Factory, db: Database) -> None:
    now = await db_now(db)
    old = await factory.run(status=RunStatus.COMPLETED, finished_at=now - timedelta(days=45))
    await factory.job(old, status=JobStatus.COMPLETED)
    recent = await factory.run(status=RunStatus.COMPLETED, finished_at=now - timedelta(days=5))

    dry = json_out(
        await invoke(db_url, "admin", "prune", "--older-than", "30d", "--dry-run", "--json")
    )
    done = await invoke(db_url, "admin", "prune", "--older-than", "30d")

    assert dry == {
        "dry_run": True,
        "older_than_seconds": 30 * 86_400,
        "runs": 1,
        "jobs": 1,
        "exports": 0,
        "notifications": 0,
    }
    assert (done.exit_code, done.stdout.strip()) == (
        0,
        "deleted 1 run(s), 1 job(s), 0 export(s), 0 notification(s) older than 30d",
    )
    left = await query(db, "opscheck_ids")
    assert [(r["what"], r["id"]) for r in left] == [("run", recent.id)]


async def test_admin_prune_removes_the_files_of_the_exports_it_deletes(
    db_url: str, factory: Factory, db: Database, tmp_path: Path
) -> None:
    now = await db_now(db)
    files = []
    for days in (45, 5):
        run = await factory.run(
            kind=JobKind.EXPORT,
            status=RunStatus.COMPLETED,
            finished_at=now - timedelta(days=days),
        )
        await factory.export(run, status=JobStatus.COMPLETED)
        named = ExportFile(run.portal_id, run.id, ContentType.SITE_PAGE, ExportFormat.CSV)
        path = export_file_path(tmp_path, named)
        path.parent.mkdir(parents=True)
        path.write_text("hubspot_id\n")
        files.append(path)
    old, recent = files
    env = {"SMUVES_EXPORT_DIR": str(tmp_path)}

    dry = await invoke(db_url, "admin", "prune", "--older-than", "30d", "--dry-run", env=env)
    assert dry.exit_code == 0 and old.exists()
    done = await invoke(db_url, "admin", "prune", "--older-than", "30d", env=env)

    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1] == f"removed 1 export file(s) from {tmp_path}"
    assert not old.exists() and recent.exists()


@pytest.mark.parametrize("age", ["0d", "30", "30x", "-1d", "d"])
async def test_admin_prune_refuses_a_bad_age(db_url: str, factory: Factory, age: str) -> None:
    await factory.run(status=RunStatus.COMPLETED)
    result = await invoke(db_url, "admin", "prune", "--older-than", age)
    assert result.exit_code == 2
    assert f"invalid age {age!r}" in result.stderr
