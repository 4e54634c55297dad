"""The dotenv file: commands read it (after the environment), code-built Settings never do, and
`update_env_file` keeps what it does not set."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from dotenv import dotenv_values

from smuves_sync.cli import cli
from smuves_sync.cli.envfile import env_file, update_env_file
from smuves_sync.cli.session import load_settings
from smuves_sync.settings import Settings


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with a .env, and SMUVES_ENV_FILE unset as on an operator's shell."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SMUVES_ENV_FILE")
    (tmp_path / ".env").write_text(
        "SMUVES_HUBSPOT_BASE_URL=http://127.0.0.1:8711\nSMUVES_EXPORT_DIR=from-dotenv\n"
        "SMUVES_SECRET_KEY=not a key\n"
    )
    return tmp_path


def test_commands_read_dot_env_and_the_environment_wins(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMUVES_EXPORT_DIR", "from-environment")
    monkeypatch.delenv("SMUVES_HUBSPOT_BASE_URL", raising=False)
    settings = load_settings()
    assert settings.hubspot_base_url == "http://127.0.0.1:8711"
    assert settings.export_dir == Path("from-environment")


def test_settings_built_in_code_never_read_dot_env(in_tmp: Path) -> None:
    assert Settings().hubspot_base_url == "https://api.hubapi.com"


def test_smuves_env_file_points_elsewhere_or_nowhere(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = in_tmp / "other.env"
    other.write_text("SMUVES_HUBSPOT_BASE_URL=http://127.0.0.1:9999\n")
    monkeypatch.setenv("SMUVES_ENV_FILE", str(other))
    assert env_file() == other
    assert load_settings().hubspot_base_url == "http://127.0.0.1:9999"
    monkeypatch.setenv("SMUVES_ENV_FILE", "")
    assert env_file() is None
    assert load_settings().hubspot_base_url == "https://api.hubapi.com"


def test_a_command_refuses_a_bad_key_found_in_dot_env(in_tmp: Path) -> None:
    result = CliRunner().invoke(cli, ["sync", "1001"], env={"SMUVES_SECRET_KEY": None})
    assert result.exit_code == 2
    assert "SMUVES_SECRET_KEY is not a valid key" in result.output


def test_update_keeps_other_lines_and_quotes_what_needs_it(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("# mine\nOTHER=1\nSMUVES_DATA_DIR=old\nexport SMUVES_DATA_DIR=older\n")
    update_env_file(
        path,
        {"SMUVES_DATA_DIR": "new dir", "SMUVES_DATABASE_URL": "postgresql://u:p#'\\x@h/db"},
        header="never shown: the file exists",
    )
    text = path.read_text()
    assert text.startswith("# mine\nOTHER=1\n") and "never shown" not in text
    assert text.count("SMUVES_DATA_DIR") == 1
    assert dotenv_values(path) == {
        "OTHER": "1",
        "SMUVES_DATA_DIR": "new dir",
        "SMUVES_DATABASE_URL": "postgresql://u:p#'\\x@h/db",
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_new_file_gets_the_header_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    update_env_file(path, {"SMUVES_SECRET_KEY": "k"}, header="line one\nline two")
    assert path.read_text() == "# line one\n# line two\nSMUVES_SECRET_KEY=k\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
