"""Where the driver's errors become the package's: every use of a connection in ``db`` runs
inside `translated()`, so nothing outside ``smuves_sync.db`` sees (or catches) a psycopg error.

    with translated():
        await cur.execute(sql, params)

    psycopg.OperationalError, InterfaceError   -> DatabaseUnavailable (retryable; a pool's
        (psycopg_pool.PoolTimeout among them)      timeout, a lost connection, a conflict)
    psycopg.errors.InsufficientPrivilege       -> DatabaseRefused (a NotPermitted)
    any other ProgrammingError                 -> SchemaMismatch
    any other psycopg.Error                    -> DatabaseError

The driver's error is the new one's ``__cause__``; the message is the driver's with any
password taken out (a connection error can quote the connection string). Every other
exception, ``asyncio.CancelledError`` among them, passes unchanged, and so does one already
translated: the scopes nest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from smuves_sync.errors import (
    DatabaseError,
    DatabaseRefused,
    DatabaseUnavailable,
    SchemaMismatch,
)

# A password in a key=value connection string, or in a URL's user:password@ part.
_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(\w+://[^:/@\s]*):[^@\s]*@")


def without_password(text: str) -> str:
    """`text` with the password of any connection string or URL in it replaced by ``***``."""
    return _URL_PASSWORD.sub(r"\1:***@", _PASSWORD.sub(r"\1***", text))


def translate(error: psycopg.Error) -> DatabaseError:
    """The package's error for the driver's `error` (not raised; its cause is set)."""
    kind: type[DatabaseError]
    if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        kind = DatabaseUnavailable
    elif isinstance(error, psycopg.errors.InsufficientPrivilege):
        kind = DatabaseRefused
    elif isinstance(error, psycopg.ProgrammingError):
        kind = SchemaMismatch
    else:
        kind = DatabaseError
    translated_error = kind(without_password(str(error)) or type(error).__name__)
    translated_error.sqlstate = error.sqlstate
    translated_error.__cause__ = error
    return translated_error


@contextmanager
def translated() -> Iterator[None]:
    """Raise the package's error in place of a driver error raised in the block."""
    try:
        yield
    except psycopg.Error as error:
        raise translate(error) from error


def refusal(error: BaseException) -> psycopg.errors.InsufficientPrivilege | None:
    """The driver's refusal behind `error` (a `DatabaseRefused`), if it is one."""
    cause = error.__cause__
    return cause if isinstance(cause, psycopg.errors.InsufficientPrivilege) else None
