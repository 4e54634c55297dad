"""Totals of several content types at once, as a fetch starts (the orchestrator's counting).

    totals = await count_totals(client, types, timeout=3.0, portal_id=123)  # type -> total

A type's total is its live plus its archived objects (``limit=1`` requests, the two at once).
The first type's live count goes alone: a token HubSpot refuses (401) is asked that one
request, and raises `PortalNeedsReconnect`; only when HubSpot accepts the token do the other
counts follow, the types at once. Otherwise nothing is raised for HubSpot's sake: a type whose
count fails (429, 5xx, 403, a malformed answer) or is not done within `timeout` is left out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from smuves_sync.errors import HubSpotAuthError, HubSpotError, PortalNeedsReconnect
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.models import ContentType

log = logging.getLogger(__name__)


async def count_totals(
    client: HubSpotClient, content_types: Sequence[ContentType], *, timeout: float, portal_id: int
) -> dict[ContentType, int]:
    """The totals of `content_types` HubSpot gave within `timeout` seconds (see above)."""
    if not content_types:
        return {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    first = content_types[0]
    probe = asyncio.create_task(client.count(first), name=f"smuves-count-{first}-probe")
    tasks: dict[ContentType, asyncio.Task[int]] = {}
    try:
        await asyncio.wait([probe], timeout=timeout)
        if probe.done() and isinstance(probe.exception(), HubSpotAuthError):
            raise PortalNeedsReconnect(portal_id)
        tasks = {
            t: asyncio.create_task(
                _count_type(client, t, live=probe if t is first else None),
                name=f"smuves-count-{t}",
            )
            for t in content_types
        }
        await asyncio.wait(tasks.values(), timeout=max(deadline - loop.time(), 0))
    finally:
        probe.cancel()
        for task in tasks.values():
            task.cancel()  # the late ones; a finished task ignores it
        await asyncio.gather(probe, *tasks.values(), return_exceptions=True)
    return _totals(tasks, timeout, portal_id)


def _totals(
    tasks: dict[ContentType, asyncio.Task[int]], timeout: float, portal_id: int
) -> dict[ContentType, int]:
    """What the finished counts found; each left out is logged, its job counts it."""
    totals: dict[ContentType, int] = {}
    for content_type, task in tasks.items():
        if task.cancelled():
            log.info(
                "portal %s: %s not counted within %gs at the start; its job counts it",
                portal_id,
                content_type,
                timeout,
            )
            continue
        error = _first_error(task.exception())
        if error is None:
            totals[content_type] = task.result()
        elif isinstance(error, HubSpotError):
            log.info(
                "portal %s: %s not counted at the start (%s); its job counts it",
                portal_id,
                content_type,
                error,
            )
        else:
            log.error(
                "portal %s: counting %s at the start failed unexpectedly; its job counts it",
                portal_id,
                content_type,
                exc_info=error,
            )
    return totals


async def _count_type(
    client: HubSpotClient, content_type: ContentType, live: asyncio.Task[int] | None = None
) -> int:
    """Live plus archived objects of one type, the two counts at once (`live`: the live count
    already asked for)."""
    async with asyncio.TaskGroup() as group:
        if live is None:
            live = group.create_task(client.count(content_type))
        archived = group.create_task(client.count(content_type, archived=True))
    return await live + archived.result()


def _first_error(error: BaseException | None) -> BaseException | None:
    """The first error a task group gathered (the one that cancelled its siblings)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
