"""`make demo`'s Python entry on a small portal: the README's first command stays tested."""

from __future__ import annotations

import csv
import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import SecretStr
from rich.console import Console

from smuves_sync.cli.common import ExitCode
from smuves_sync.models import RunStatus
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import new_secret_key
from tests.support import clean_env, run
from tests.support.logins import runtime_urls

pytestmark = pytest.mark.slow

DEMO = Path(__file__).parents[2] / "scripts" / "demo.py"


def load_demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("smuves_demo", DEMO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


async def test_the_demo_syncs_the_fake_portal_and_exports_its_site_pages(
    db_url: str, tmp_path: Path
) -> None:
    demo = load_demo()
    settings = Settings(
        database_url=db_url,
        **runtime_urls(db_url),
        export_dir=tmp_path / "exports",
        secret_key=SecretStr(new_secret_key()),
        poll_interval_seconds=0.2,
    )
    output = io.StringIO()
    console = Console(file=output, width=120)

    result = await demo.run_demo(settings, console, scale=0.02)
    demo.print_summary(console, result)

    spec = demo.demo_portal(0.02)
    assert result.code is ExitCode.OK
    assert result.fetch.run.status is RunStatus.COMPLETED
    expected = (
        spec.site_pages
        + spec.landing_pages
        + spec.blog_posts
        + spec.hubdb_tables
        + spec.hubdb_tables * spec.rows_per_table
        + spec.blog_authors
        + spec.blog_tags
        + spec.url_redirects
        + spec.blogs
    )
    assert sum(j.processed for j in result.fetch.jobs) == expected
    path = result.export_file
    assert path.parent == (tmp_path / "exports" / "portal-1001").resolve()
    with path.open(newline="", encoding="utf-8") as stream:
        assert len(list(csv.DictReader(stream))) == spec.site_pages == result.export.row_count
    assert f"The CSV is at {path}" in output.getvalue().replace("\n", "")


async def test_the_demo_on_a_configured_database_without_the_workers_login_says_so(
    db_url: str,
) -> None:
    done = await run(
        sys.executable, str(DEMO), "--scale", "0.01", env=clean_env(SMUVES_DATABASE_URL=db_url)
    )

    assert done.code == ExitCode.USAGE
    assert "SMUVES_WORKER_DATABASE_URL is not set" in " ".join(done.stdout.split())
