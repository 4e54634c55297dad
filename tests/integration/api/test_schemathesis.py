"""Property-based run of the served API (`smuves serve`, a real uvicorn in a subprocess) against
the OpenAPI document it serves: no 500, no answer whose status, content type or body the
document does not describe. Deterministic (derandomized) and bounded: a few dozen cases per
operation, with random ids, with the ids of a seeded user's rows, and with invalid input."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from smuves_sync.api import openapi_document
from smuves_sync.db import Pool
from smuves_sync.models import JobKind, JobStatus, RunStatus
from tests.factories import Factory
from tests.integration.api.conftest import (
    AUDIENCE,
    JWT_SECRET,
    SECRET_KEY,
    User,
    new_user,
    rows,
)

# About a thousand requests: slow, and given more than the default per-test time on a busy box.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

EXAMPLES = 20
_LISTENING = re.compile(r"Uvicorn running on (http://\S+)")
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@dataclass(frozen=True)
class Served:
    base_url: str
    user: User
    ids: dict[str, int | str]


async def _seed(
    factory: Factory, admin_pool: Pool, export_dir: Path
) -> tuple[User, dict[str, int | str]]:
    user = await new_user(factory, "fuzz")
    portal = await factory.portal(user.id, portal_id=12345)
    run = await factory.run(portal, owner=user.id, status=RunStatus.COMPLETED)
    await factory.job(run, status=JobStatus.COMPLETED)
    hubspot_id = await factory.content_item(run)
    export_run = await factory.run(
        portal, owner=user.id, kind=JobKind.EXPORT, status=RunStatus.COMPLETED
    )
    export_id = await factory.export(export_run, status=JobStatus.COMPLETED)
    export_dir.mkdir(parents=True, exist_ok=True)
    (export_dir / "fuzz.csv").write_text("hubspot_id\n1\n")
    await rows(
        admin_pool,
        "plant_export_file",
        export_id=export_id,
        path=str(export_dir / "fuzz.csv"),
        row_count=1,
        bytes=13,
    )
    notification = await factory.notification(user.id, run)
    ids = {
        "portal_id": portal,
        "run_id": run.id,
        "export_id": export_id,
        "notification_id": notification,
        "type": "site_page",
        "hubspot_id": hubspot_id,
    }
    return user, ids


@pytest.fixture
async def served(
    db_url: str, factory: Factory, admin_pool: Pool, tmp_path: Path
) -> AsyncIterator[Served]:
    """`smuves serve` on a free port of this test's database, and what was seeded in it."""
    user, ids = await _seed(factory, admin_pool, tmp_path / "exports")
    env = {
        **os.environ,
        "SMUVES_DATABASE_URL": db_url,
        "SMUVES_JWT_SECRET": JWT_SECRET,
        "SMUVES_JWT_AUDIENCE": AUDIENCE,
        "SMUVES_SECRET_KEY": SECRET_KEY,
        "SMUVES_EXPORT_DIR": str(tmp_path / "exports"),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "smuves_sync.cli",
        "serve",
        "--port",
        "0",
        "--log-level",
        "info",  # uvicorn says where it listens at this level
        env=env,
        stdout=asyncio.subprocess.DEVNULL,  # the access log
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        # uvicorn says where it listens once it does; read until then (or until it dies).
        async with asyncio.timeout(60):
            while not (found := _LISTENING.search((await process.stderr.readline()).decode())):
                assert process.returncode is None, "smuves serve exited"
        drain = asyncio.create_task(process.stderr.read())  # keep the pipe from filling
        yield Served(found.group(1), user, ids)
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
    # uvicorn re-raises the SIGTERM it handled once it has shut down cleanly.
    assert process.returncode in (0, -signal.SIGTERM), (await drain).decode()[-2000:]


def _explore(operation: Any, base_url: str, headers: dict[str, str], **strategy: Any) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(**strategy))
    def explore(case: Any) -> None:
        response = case.call(base_url=base_url, headers=headers, timeout=30)
        case.validate_response(response, checks=CHECKS)

    explore()


def _fuzz(served: Served) -> list[str]:
    schema = schemathesis.openapi.from_url(f"{served.base_url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    # Deleting the seeded portal would leave nothing for the operations after it.
    operations.sort(key=lambda op: op.method.upper() == "DELETE")
    headers = {"Authorization": f"Bearer {served.user.token}"}
    explored = []
    for operation in operations:
        names = [p.name for p in operation.path_parameters]
        passes: list[dict[str, Any]] = [{}]
        if names or len(operation.query) or len(operation.body):
            # Invalid input needs something to make invalid.
            passes.append({"generation_mode": GenerationMode.NEGATIVE})
        if names:
            passes.append({"path_parameters": {n: served.ids[n] for n in names}})
        for strategy in passes:
            _explore(operation, served.base_url, headers, **strategy)
        explored.append(f"{operation.method.upper()} {operation.path}")
    return explored


async def test_the_served_api_keeps_to_its_document(served: Served) -> None:
    explored = await asyncio.to_thread(_fuzz, served)
    documented = [
        f"{method.upper()} {path}"
        for path, operations in openapi_document()["paths"].items()
        for method in operations
    ]
    assert sorted(explored) == sorted(documented)
