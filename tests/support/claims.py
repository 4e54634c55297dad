"""Claiming through the real queue the way a worker with one slot does."""

from __future__ import annotations

from smuves_sync.models import Job
from smuves_sync.queue import Queue


async def claim_one_at_a_time(queue: Queue, jobs: int) -> list[Job]:
    """What a worker with one slot gets: claim one job, finish it, `jobs` times."""
    order: list[Job] = []
    for _ in range(jobs):
        [job] = await queue.claim(None)
        await queue.complete(job)
        order.append(job)
    return order
