"""What every subcommand shares: settings, running a coroutine, and exit codes scripts can trust.

Exit codes: 0 success; 1 the work ran and failed (a failed or partially failed run);
2 usage or configuration error (click's own code for bad usage); 3 ALL_DUPLICATE_JOBS.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from enum import IntEnum
from typing import Any, TypeVar

import click

from smuves_sync.errors import (
    AllDuplicateJobs,
    ConfigurationError,
    InvalidInput,
    MigrationError,
    NotFound,
    SmuvesError,
)

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


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
    if isinstance(error, ConfigurationError | InvalidInput | NotFound | MigrationError):
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
