"""The dotenv file `smuves` commands read settings from (after the environment).

    path = env_file()                          # SMUVES_ENV_FILE, default ./.env; None if empty
    update_env_file(path, {"SMUVES_SECRET_KEY": key}, header="...")   # merge, mode 0600

Only the commands read it (`load_settings`); `Settings()` built in code never does, so a
playground `.env` in a checkout cannot change what the tests see. `make demo` writes the
settings it used here; other lines of an existing file are kept as they are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

DEFAULT_ENV_FILE = Path(".env")
# Values made of these characters are written bare; anything else is single-quoted.
_BARE = re.compile(r"^[A-Za-z0-9_./:@=,+%?&~-]*$")


def env_file() -> Path | None:
    """The dotenv file commands read: ``SMUVES_ENV_FILE``, default ``.env``; None if empty."""
    configured = os.environ.get("SMUVES_ENV_FILE")
    if configured is None:
        return DEFAULT_ENV_FILE
    return Path(configured) if configured.strip() else None


def _quoted(value: str) -> str:
    if _BARE.match(value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _assigns(line: str) -> str | None:
    match = re.match(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=", line)
    return match.group(1) if match else None


def update_env_file(path: Path, values: Mapping[str, str], *, header: str = "") -> None:
    """Set `values` in the dotenv file `path`, keeping its other lines; readable by you only."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    if not lines and header:
        lines = [f"# {line}".rstrip() for line in header.splitlines()]
    pending = dict(values)
    kept = []
    for line in lines:
        key = _assigns(line)
        if key in values:
            if key in pending:
                kept.append(f"{key}={_quoted(pending.pop(key))}")
            continue  # a second assignment of a key just written
        kept.append(line)
    kept.extend(f"{key}={_quoted(value)}" for key, value in pending.items())
    # Created 0600: it holds the secret key and the JWT secret.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write("\n".join(kept) + "\n")
    os.chmod(path, 0o600)
