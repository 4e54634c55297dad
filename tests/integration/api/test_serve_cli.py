"""`smuves serve`: refuses to start without its secrets; prints the OpenAPI document."""

from __future__ import annotations

import json

from click.testing import CliRunner

from smuves_sync.api import openapi_document
from smuves_sync.cli import cli
from smuves_sync.token_crypto import new_secret_key
from tests.integration.api.conftest import serve_refusal


def test_serve_without_a_jwt_secret_is_a_usage_error() -> None:
    result = serve_refusal({"SMUVES_JWT_SECRET": None, "SMUVES_SECRET_KEY": new_secret_key()})
    assert result.exit_code == 2
    assert "SMUVES_JWT_SECRET is not set" in result.output


def test_print_openapi_prints_the_apps_document() -> None:
    result = CliRunner().invoke(cli, ["serve", "--print-openapi"], env={"SMUVES_JWT_SECRET": None})
    assert result.exit_code == 0
    assert json.loads(result.output) == openapi_document()
