"""What every subcommand shares: running a coroutine, input checks, exit codes scripts can trust.

Exit codes: 0 success; 1 the work ran and failed (a failed or partially failed run);
2 usage or configuration error (click's own code for bad usage); 3 ALL_DUPLICATE_JOBS.

Ids typed on the command line (portal, run, job, schedule) are parsed by `ID`: a whole number
that fits Postgres's bigint, so an out-of-range id is a one-line refusal rather than a database
error. Arguments that are not valid UTF-8 are refused by `refuse_undecodable` before any
command runs: everything a command stores is UTF-8 text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from enum import IntEnum
from typing import Any, TypeVar

import click

from smuves_sync.errors import (
    AllDuplicateJobs,
    ConfigurationError,
    InvalidInput,
    MigrationError,
    NotFound,
    PortalNeedsReconnect,
    SmuvesError,
)

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

# Postgres's bigint: the type of every id column (portals.id is HubSpot's hub id).
BIGINT_MAX = 2**63 - 1


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    ALL_DUPLICATE_JOBS = 3


def command_error(message: str, exit_code: ExitCode) -> click.ClickException:
    """A click exception that prints `message` on stderr and exits with `exit_code`."""
    error = click.ClickException(message)
    # click reads the exit code from the instance; the class default is 1.
    error.exit_code = int(exit_code)  # type: ignore[misc]
    return error


def exit_code_for(error: SmuvesError) -> ExitCode:
    """Map an error of the tree to the exit code documented above."""
    if isinstance(error, AllDuplicateJobs):
        return ExitCode.ALL_DUPLICATE_JOBS
    if isinstance(
        error, ConfigurationError | InvalidInput | NotFound | MigrationError | PortalNeedsReconnect
    ):
        return ExitCode.USAGE
    return ExitCode.FAILED


def concurrency_option(*, maximum: int, default: int, help: str) -> Callable[[F], F]:
    """The `--concurrency` option: how many jobs a command works at once (1 to `maximum`)."""
    return click.option(
        "--concurrency",
        type=click.IntRange(1, maximum),
        default=default,
        show_default=True,
        help=help,
    )


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to the end; a smuves error becomes a clean message and exit code."""
    try:
        return asyncio.run(coroutine)
    except SmuvesError as error:
        raise command_error(str(error), exit_code_for(error)) from error


class DatabaseId(click.ParamType[int]):
    """A positive whole number that fits a bigint id column; anything else exits 2, one line."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """The id as an int, or a one-line refusal with exit code 2."""
        if isinstance(value, int) and not isinstance(value, bool):
            number: int | None = value
        else:
            try:
                number = int(str(value).strip())
            except ValueError:
                number = None
        if number is None or not 1 <= number <= BIGINT_MAX:
            what = param.get_error_hint(ctx).strip("'") if param and ctx else "the id"
            raise command_error(
                f"{what} must be an id, a whole number from 1 to {BIGINT_MAX}; got {str(value)!r}",
                ExitCode.USAGE,
            )
        return number


ID = DatabaseId()


def _undecodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def refuse_undecodable(args: Sequence[str]) -> None:
    """Exit 2 with one line when an argument is not valid UTF-8 (surrogate-escaped bytes)."""
    for arg in args:
        if _undecodable(arg):
            try:  # bytes from argv arrive as surrogate escapes: show those bytes
                raw = arg.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                raw = arg.encode("utf-8", "backslashreplace")
            shown = raw.decode("utf-8", "backslashreplace")
            raise command_error(
                f"the argument '{shown}' is not valid UTF-8; names and values are stored as "
                "UTF-8 text",
                ExitCode.USAGE,
            )
