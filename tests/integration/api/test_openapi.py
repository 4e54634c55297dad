"""The OpenAPI document: kept in the repository, served by the app, and the same as what the
app generates; error answers outside the routes keep the `{code, message}` shape."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

import smuves_sync.api
from smuves_sync.api import openapi_document

STORED = Path(smuves_sync.api.__file__).with_name("openapi.json")
REGENERATE = "smuves serve --print-openapi > smuves_sync/api/openapi.json"


def test_the_stored_document_matches_the_app() -> None:
    stored = json.loads(STORED.read_text(encoding="utf-8"))
    assert stored == openapi_document(), f"the API changed: regenerate with `{REGENERATE}`"


async def test_the_served_document_is_the_stored_one(client: httpx.AsyncClient) -> None:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    assert response.json() == json.loads(STORED.read_text(encoding="utf-8"))


def test_every_v1_operation_documents_its_errors() -> None:
    for path, operations in openapi_document()["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in operations.items():
            documented = set(operation["responses"])
            assert {"401", "422"} <= documented, (method, path)
            if "{" in path:
                assert "404" in documented, (method, path)
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    schema = response["content"]["application/json"]["schema"]["$ref"]
                    assert schema.endswith(("/ErrorBody", "/DuplicateJobsBody")), (path, status)


async def test_unknown_paths_and_methods_answer_in_the_error_shape(
    client: httpx.AsyncClient,
) -> None:
    missing = await client.get("/v2/nothing")
    assert missing.status_code == 404 and missing.json()["code"] == "NOT_FOUND"
    assert set(missing.json()) == {"code", "message"}
    wrong = await client.put("/v1/portals")
    assert wrong.status_code == 405 and wrong.json()["code"] == "METHOD_NOT_ALLOWED"
