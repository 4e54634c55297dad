"""Property-based run of the served API (`smuves serve`, a real uvicorn in a subprocess) against
the OpenAPI document it serves: no 500, no answer whose status, content type or body the
document does not describe. Deterministic (derandomized) and bounded: a few dozen cases per
operation, with random ids, with the ids of a seeded user's rows, and with invalid input."""

from __future__ import annotations

import asyncio
import re
import signal
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
from schemathesis.core.result import Err

from smuves_sync.api import openapi_document
from tests.integration.api.conftest import (
    User,
    new_user,
    plant_one_of_everything,
    serve_env,
    smuves_serve,
    stderr_until,
)
from tests.support.factories import Factory

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


async def _seed(factory: Factory, export_dir: Path) -> tuple[User, dict[str, int | str]]:
    user = await new_user(factory, "fuzz")
    ids = await plant_one_of_everything(factory, user, 12345, export_dir)
    return user, ids


@pytest.fixture
async def served(
    db_url: str, factory: Factory, tmp_path: Path, hubspot_accounts: str
) -> AsyncIterator[Served]:
    """`smuves serve` on a free port of this test's database, and what was seeded in it."""
    user, ids = await _seed(factory, tmp_path / "exports")
    env = serve_env(
        db_url,
        SMUVES_EXPORT_DIR=str(tmp_path / "exports"),
        SMUVES_HUBSPOT_BASE_URL=hubspot_accounts,
    )
    # uvicorn says where it listens at the info level
    async with smuves_serve(env, "--port", "0", "--log-level", "info") as process:
        found, _ = await stderr_until(process, _LISTENING)
        assert process.stderr is not None
        drain = asyncio.create_task(process.stderr.read())  # keep the pipe from filling
        yield Served(found.group(1), user, ids)
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
    operations = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):  # the app's document is not valid OpenAPI
            raise result.err()
        operations.append(result.ok())
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
