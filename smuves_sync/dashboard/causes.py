"""A run's errors grouped by cause, so nine jobs that failed for one reason read as one row.

    causes = causes_of(jobs)       # [Cause(text="HubSpotRetryableError: …", jobs=(…9 jobs…))]

The cause of a job is its users' note (``last_error_public``: the kind of failure and what to
do, the same for every type that met it), or the error as raised when it has no note. The
errors as raised usually differ by a path or an id, so they stay with the cause, each once.
"""

from __future__ import annotations

from dataclasses import dataclass

from smuves_sync.models import ContentType, Job


@dataclass(frozen=True, slots=True)
class Cause:
    """Jobs whose last error has one cause: `text`, and the errors as raised behind it."""

    text: str
    jobs: tuple[Job, ...]

    @property
    def types(self) -> list[ContentType]:
        """The content types that met this cause, each once, in the jobs' order."""
        return list(dict.fromkeys(job.content_type for job in self.jobs))

    @property
    def raised(self) -> list[tuple[str, list[ContentType]]]:
        """Each error as raised that says more than `text`, with the types that raised it."""
        found: dict[str, list[ContentType]] = {}
        for job in self.jobs:
            if job.last_error and job.last_error != self.text:
                found.setdefault(job.last_error, []).append(job.content_type)
        return list(found.items())


def cause_text(job: Job) -> str | None:
    """What the cause of `job`'s last error is called; None when it has no error."""
    return job.last_error_public or job.last_error


def causes_of(jobs: list[Job]) -> list[Cause]:
    """The jobs with a last error, one `Cause` per text, the commonest first (ties: the one
    whose first job came first)."""
    grouped: dict[str, list[Job]] = {}
    for job in jobs:
        text = cause_text(job)
        if text:
            grouped.setdefault(text, []).append(job)
    # dicts keep insertion order and sorted() is stable: equal counts stay in job order.
    ordered = sorted(grouped.items(), key=lambda item: -len(item[1]))
    return [Cause(text, tuple(members)) for text, members in ordered]
