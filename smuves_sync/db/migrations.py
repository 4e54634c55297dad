"""The migration runner behind ``smuves db migrate``.

Two kinds of file, applied in this order by one run under one session advisory lock (a second
migrator waits, then finds nothing to do; re-running is a no-op):

Versioned files, ``NNNN_snake_name.sql`` of the migrations directory: tables, types, domains,
indexes, grants on them, seed rows. Applied in version order, each in its own transaction,
and recorded in ``schema_migrations(version, name, checksum, applied_at)``. A file whose
checksum differs from the one recorded when it was applied is refused (they are forward only:
write a new file instead), and so is a database that has versions this code does not know.

Function files, ``functions/<noun>.sql``: every function, each in exactly one file, with its
grants, the triggers that call it and (functions/security.sql) the row-level security
policies, all written to be run again (``CREATE OR REPLACE FUNCTION``, ``CREATE OR REPLACE
TRIGGER``, ``DROP POLICY IF EXISTS`` then ``CREATE POLICY``, grants revoked then given).
After the versioned files, each function file whose checksum differs from the one recorded
in ``schema_functions(file, checksum, applied_at)`` (or that has none) is applied again, in
file-name order, all of them in one transaction with ``check_function_bodies`` off (a SQL
function may call one of a later file). Changing a function is editing its file. Changing a
signature, or removing a function, trigger or policy, takes a versioned file that drops the
old one too: a re-applied file only makes things.

The fold: a database migrated before the versioned history was folded into the baseline
(`smuves_sync.db.folded`) has exactly that history recorded; it is recorded as the baseline
instead, without running it, and the files after the baseline (the first drops the functions
the fold renamed) and the function files bring it to the same catalog as a new database's
(migrations/schema.sql, checked by the tests). Part of that history only is refused: migrate
it with the release it came from first.

Where the files are: an explicit directory (argument or ``SMUVES_MIGRATIONS_DIR``), else the
``migrations/`` directory at the top of the source tree (checkouts and editable installs), else
the copy a plain install puts under ``<prefix>/share/smuves-sync/migrations`` (pyproject's
data-files).

    applied = await migrate(conninfo, role_prefix=settings.role_prefix)   # newly applied
    changed = await set_login_passwords(conninfo, settings)   # runtime logins' passwords

After the files, `migrate` makes sure this install's runtime logins exist (named by the role
prefix, ``SMUVES_ROLE_PREFIX``: ``<prefix>_api_login``, ``<prefix>_worker_login``; empty:
``smuves_…``), each as harmless as migrations/0001_roles.sql requires and a member of its
group role, and grants them CONNECT on this database, which no other login of the server may
connect to.

`set_login_passwords` gives the runtime logins the passwords of the URLs the API and the
workers are configured with, so that a managed Postgres needs no hand-made ALTER ROLE: the
secret lives in the runtime URL only. The server gets libpq's SCRAM verifier, never the
password. Only the logins of the configured prefix are touched: another install's stay as
they are.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow

from smuves_sync.db.driver_errors import translated
from smuves_sync.db.folded import BASELINE_VERSIONS, FOLDED_HISTORY
from smuves_sync.db.pool import DbRole
from smuves_sync.db.queries import queries
from smuves_sync.errors import MigrationError
from smuves_sync.settings import Settings

log = logging.getLogger(__name__)

FILE_NAME = re.compile(r"^(?P<version>\d{4})_(?P<name>[a-z0-9]+(?:_[a-z0-9]+)*)\.sql$")
FUNCTIONS_FILE_NAME = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*\.sql$")
# The function files' folder, inside the migrations directory.
FUNCTIONS_DIR = "functions"
# The catalog of a freshly migrated database (`make schema`), beside the files: never applied.
SNAPSHOT = "schema.sql"
# An arbitrary constant shared by every smuves migrator (the letters "smuvesmg" as a number).
LOCK_KEY = 0x736D7576_65736D67
# What SMUVES_ROLE_PREFIX may be (settings.py checks the same): it becomes part of role names.
VALID_PREFIX = re.compile(r"^([a-z][a-z0-9_]{0,39})?$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One migration file."""

    version: int
    name: str
    path: Path
    checksum: str

    @property
    def filename(self) -> str:
        """``NNNN_name.sql``."""
        return self.path.name

    def read_sql(self) -> str:
        """The file's SQL text."""
        return self.path.read_text(encoding="utf-8")


def find_migrations_dir(override: Path | None = None) -> Path:
    """The directory to read migrations from (see the module docstring for the order)."""
    if override is not None:
        if not override.is_dir():
            raise MigrationError(f"migrations directory {override} does not exist")
        return override
    source_tree = Path(__file__).resolve().parents[2] / "migrations"
    if source_tree.is_dir():
        return source_tree
    shipped = Path(sys.prefix) / "share" / "smuves-sync" / "migrations"
    if shipped.is_dir():
        return shipped
    raise MigrationError(
        "no migrations directory found; set SMUVES_MIGRATIONS_DIR to the project's migrations/"
    )


def discover(directory: Path) -> list[Migration]:
    """Every migration file of `directory`, in version order; refuses stray or duplicate files."""
    found: dict[int, Migration] = {}
    for path in sorted(directory.glob("*.sql")):
        if path.name == SNAPSHOT:
            continue
        match = FILE_NAME.match(path.name)
        if match is None:
            raise MigrationError(f"{path.name}: migration files must be named NNNN_snake_name.sql")
        version = int(match["version"])
        if version in found:
            raise MigrationError(
                f"{path.name}: version {version:04d} is also used by {found[version].filename}"
            )
        checksum = hashlib.sha256(path.read_bytes()).hexdigest()
        found[version] = Migration(version, match["name"], path, checksum)
    return [found[v] for v in sorted(found)]


@dataclass(frozen=True, slots=True)
class FunctionsFile:
    """One file of functions/, applied again whenever its checksum changes."""

    name: str
    path: Path
    checksum: str

    def read_sql(self) -> str:
        """The file's SQL text."""
        return self.path.read_text(encoding="utf-8")


def discover_functions(directory: Path) -> list[FunctionsFile]:
    """The function files of `directory`/functions in file-name order (none: no folder)."""
    found = []
    for path in sorted((directory / FUNCTIONS_DIR).glob("*.sql")):
        if FUNCTIONS_FILE_NAME.match(path.name) is None:
            raise MigrationError(
                f"{FUNCTIONS_DIR}/{path.name}: function files must be named snake_name.sql"
            )
        checksum = hashlib.sha256(path.read_bytes()).hexdigest()
        found.append(FunctionsFile(path.name, path, checksum))
    return found


def _is_folded(applied: dict[int, tuple[str, str]]) -> bool:
    """Whether `applied` is the history the fold replaced; `MigrationError` for a part of it."""
    recorded = {(v, n, c) for v, (n, c) in applied.items()}
    folded = set(FOLDED_HISTORY)
    if recorded == folded:
        return True
    if recorded & folded:
        versions = ", ".join(f"{v:04d}_{n}" for v, n, _ in sorted(recorded & folded))
        raise MigrationError(
            f"the database has part of the migration history folded into the baseline "
            f"({versions}) but not all of it (0001-{len(FOLDED_HISTORY):04d}): migrate it with "
            "the checkout of smuves-sync it was migrated with first, or drop and re-create it"
        )
    return False


def _check_history(known: list[Migration], applied: dict[int, tuple[str, str]]) -> None:
    by_version = {m.version: m for m in known}
    for version, (name, checksum) in sorted(applied.items()):
        migration = by_version.get(version)
        if migration is None:
            raise MigrationError(
                f"the database has migration {version:04d}_{name} which this code does not "
                "know; upgrade smuves-sync before migrating"
            )
        if migration.checksum != checksum:
            raise MigrationError(
                f"{migration.filename} was changed after it was applied (checksum "
                f"{checksum[:12]} recorded, {migration.checksum[:12]} on disk); migrations "
                "are forward only: restore the file and add a new migration"
            )


async def migrate(
    conninfo: str, directory: Path | None = None, *, role_prefix: str = ""
) -> list[Migration]:
    """Apply every pending migration to the database at `conninfo`, then every changed function
    file, then `ensure_logins` of `role_prefix`; return the versioned migrations applied."""
    found = find_migrations_dir(directory)
    known = discover(found)
    functions = discover_functions(found)
    q = queries()
    newly_applied: list[Migration] = []
    with translated():
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            await conn.execute(q["migrations_lock"], {"key": LOCK_KEY})
            try:
                await conn.execute(q["migrations_ensure_ledger"])
                await conn.execute(q["migrations_ensure_functions_ledger"])
                applied = await _applied(conn)
                if _is_folded(applied):
                    applied = await _record_baseline(conn, known)
                _check_history(known, applied)
                for migration in known:
                    if migration.version not in applied:
                        await _apply(conn, migration)
                        newly_applied.append(migration)
                await _apply_functions(conn, functions)
                await ensure_logins(conn, role_prefix)
            finally:
                if not conn.broken:
                    await conn.execute(q["migrations_unlock"], {"key": LOCK_KEY})
    return newly_applied


async def _applied(conn: psycopg.AsyncConnection[TupleRow]) -> dict[int, tuple[str, str]]:
    cur = await conn.execute(queries()["migrations_applied"])
    return {row[0]: (row[1], row[2]) for row in await cur.fetchall()}


async def _record_baseline(
    conn: psycopg.AsyncConnection[TupleRow], known: list[Migration]
) -> dict[int, tuple[str, str]]:
    """Replace the folded history in the ledger by the baseline files, which it is."""
    baseline = [m for m in known if m.version in BASELINE_VERSIONS]
    if [m.version for m in baseline] != list(BASELINE_VERSIONS):
        raise MigrationError("the migrations directory lacks the baseline files of the fold")
    log.info("recording the folded history as the baseline %s", [m.filename for m in baseline])
    q = queries()
    async with conn.transaction():
        await conn.execute(q["migrations_forget_folded"])
        for migration in baseline:
            params = {"version": migration.version, "name": migration.name}
            await conn.execute(q["migrations_record"], {**params, "checksum": migration.checksum})
    return await _applied(conn)


async def _apply(conn: psycopg.AsyncConnection[TupleRow], migration: Migration) -> None:
    log.info("applying migration %s", migration.filename)
    q = queries()
    try:
        async with conn.transaction():
            await conn.execute(migration.read_sql().encode())
            await conn.execute(
                q["migrations_record"],
                {
                    "version": migration.version,
                    "name": migration.name,
                    "checksum": migration.checksum,
                },
            )
    except psycopg.Error as exc:
        raise MigrationError(f"{migration.filename} failed: {exc}") from exc


async def _apply_functions(
    conn: psycopg.AsyncConnection[TupleRow], functions: list[FunctionsFile]
) -> None:
    """Apply again, in one transaction, each function file whose checksum is not recorded."""
    q = queries()
    cur = await conn.execute(q["migrations_functions_applied"])
    recorded = {row[0]: row[1] for row in await cur.fetchall()}
    changed = [f for f in functions if recorded.get(f.name) != f.checksum]
    if not changed:
        return
    current = ""
    try:
        async with conn.transaction():
            await conn.execute(q["migrations_functions_begin"])
            for functions_file in changed:
                current = functions_file.name
                log.info("applying %s/%s", FUNCTIONS_DIR, functions_file.name)
                await conn.execute(functions_file.read_sql().encode())
                # Each file may SET LOCAL ROLE: the ledger is the migrating login's.
                await conn.execute(q["migrations_functions_reset_role"])
                await conn.execute(
                    q["migrations_functions_record"],
                    {"file": functions_file.name, "checksum": functions_file.checksum},
                )
    except psycopg.Error as exc:
        raise MigrationError(f"{FUNCTIONS_DIR}/{current} failed: {exc}") from exc


async def ensure_logins(conn: psycopg.AsyncConnection[TupleRow], role_prefix: str) -> None:
    """Create the runtime logins of `role_prefix` where missing, each in its group role, and
    let them (and no other runtime login) connect to this database. `MigrationError` for a
    login that exists with more rights than a runtime login may have. Nothing to do where the
    group roles do not exist (a database migrated from a directory of other files)."""
    q = queries()
    if not VALID_PREFIX.match(role_prefix):
        raise MigrationError(f"role prefix {role_prefix!r} is not a lower-case identifier")
    database = str(await _scalar(conn, "migrations_database", {}))
    for role in DbRole:
        if not await _scalar(conn, "migrations_group_exists", {"group": role.value}):
            continue
        login = role.login_of(role_prefix)
        names = {"login": sql.Identifier(login), "group": sql.Identifier(role.value)}
        state = await _login_state(conn, login, role)
        if not state[0]:
            # A concurrent migrator of another database may make it first.
            with contextlib.suppress(
                psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation
            ):
                await conn.execute(sql.SQL(q["migrations_login_create"]).format(**names))
            state = await _login_state(conn, login, role)
        if not state[1]:
            raise MigrationError(
                f"role {login} exists with more rights than a runtime login may have (it must "
                f"be LOGIN, INHERIT, no superuser, createrole, createdb, replication or "
                f"bypassrls, and a member of {role.value} only)"
            )
        if not state[2]:
            with contextlib.suppress(psycopg.errors.UniqueViolation):  # a concurrent migrator
                await conn.execute(sql.SQL(q["migrations_login_join"]).format(**names))
        await conn.execute(
            sql.SQL(q["migrations_login_connect"]).format(
                database=sql.Identifier(database), login=names["login"]
            )
        )


async def _scalar(
    conn: psycopg.AsyncConnection[TupleRow], name: str, params: dict[str, str]
) -> object:
    cur = await conn.execute(queries()[name], params)
    row = await cur.fetchone()
    assert row is not None  # each of these queries returns one row
    return row[0]


async def _login_state(
    conn: psycopg.AsyncConnection[TupleRow], login: str, role: DbRole
) -> tuple[bool, bool, bool]:
    """(exists, as harmless as a runtime login, a member of `role`)."""
    cur = await conn.execute(
        queries()["migrations_login_state"], {"login": login, "group": role.value}
    )
    row = await cur.fetchone()
    assert row is not None
    return bool(row[0]), bool(row[0]) and bool(row[1]), bool(row[0]) and bool(row[2])


def _login_password(url: str, login: str) -> str | None:
    """The password `url` carries for `login`; None when it has none or names another user
    (a pooler may append its tenant: ``smuves_api_login.<project>``)."""
    params = conninfo_to_dict(url)
    user = str(params.get("user") or "")
    password = params.get("password")
    if not password or (user != login and not user.startswith(login + ".")):
        return None
    return str(password)


async def set_login_passwords(conninfo: str, settings: Settings) -> list[str]:
    """Set the password of each runtime login of `settings`' role prefix from its configured
    URL; the logins set."""
    changed = []
    with translated():
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            for role in DbRole:
                login = role.login_in(settings)
                url = role.configured_url(settings)
                password = _login_password(url, login) if url else None
                if password is None:
                    continue
                verifier = conn.pgconn.encrypt_password(password.encode(), login.encode())
                statement = sql.SQL(queries()["migrations_login_password"]).format(
                    login=sql.Identifier(login), password=sql.Literal(verifier.decode())
                )
                await conn.execute(statement)
                changed.append(login)
    return changed
