"""`/healthz` and `/metrics`: for load balancers and Prometheus, never for tenants.

/healthz needs no token. It answers 200 when the database answers within two seconds and its
applied migrations are exactly the files this code ships; 503 with what is wrong otherwise.

/metrics is for the operator's Prometheus only, and left out of the tenants' OpenAPI document:

    SMUVES_METRICS_TOKEN set      it needs `Authorization: Bearer <that token>` (401 otherwise),
                                  on the API's port and on the metrics port alike
    smuves serve --metrics-port   it is served on that separate listener (`edges.Listeners`)
    neither                       the API's port answers 404, as for any unknown path

What it reports (Prometheus text format):

    smuves_jobs{kind,status}                          jobs in the table now
    smuves_oldest_pending_job_age_seconds{kind}       how late the oldest due pending job is
    smuves_job_duration_seconds{kind,status}          histogram of finished jobs still in the
                                                      table, created -> finished
    smuves_workers_live                               worker processes alive (seen within
                                                      three of their heartbeats)
    smuves_hubspot_requests_total{status}             from smuves_sync.metrics, per process
    smuves_hubspot_rate_limited_total{policy}

The queue figures are read from the database at each scrape (through SECURITY DEFINER
functions returning counts only), so they are the same whichever API process is asked.
Pruning old jobs lowers the duration histogram's counts; Prometheus reads that as a reset.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterator
from datetime import timedelta

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from smuves_sync.api.auth import unauthenticated
from smuves_sync.api.context import ApiContext, Context
from smuves_sync.api.edges import METRICS_LISTENER_STATE
from smuves_sync.api.errors import ApiError, error_response, error_responses
from smuves_sync.api.schemas import Health
from smuves_sync.db import Database
from smuves_sync.db.stats import (
    DurationBucket,
    JobCount,
    metrics_job_durations,
    metrics_jobs,
    migration_versions,
)
from smuves_sync.db.workers import metrics_workers_live
from smuves_sync.errors import DatabaseError
from smuves_sync.models import JobKind, JobStatus

router = APIRouter(tags=["operations"])

_HEALTH_TIMEOUT = timedelta(seconds=2)
# Upper bounds of the duration buckets, seconds: from a small HubDB table to a huge portal.
DURATION_BOUNDS = (1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 4 * 3600.0, 24 * 3600.0)


@router.get(
    "/healthz",
    response_model=Health,
    responses=error_responses(503),
    summary="Database reachable and migrations current",
)
async def healthz(ctx: Context) -> Health | JSONResponse:
    """503 DATABASE_UNREACHABLE or MIGRATIONS_NOT_CURRENT when not healthy."""
    try:
        applied = await migration_versions(Database(ctx.pool, connect_timeout=_HEALTH_TIMEOUT))
    except DatabaseError as exc:
        return error_response(
            503, "DATABASE_UNREACHABLE", f"the database does not answer: {type(exc).__name__}"
        )
    expected = ctx.expected_migrations
    missing = sorted(set(expected) - set(applied))
    unknown = sorted(set(applied) - set(expected))
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"not applied: {', '.join(f'{v:04d}' for v in missing)}")
        if unknown:
            problems.append(f"unknown to this code: {', '.join(f'{v:04d}' for v in unknown)}")
        return error_response(
            503,
            "MIGRATIONS_NOT_CURRENT",
            f"database migrations are not current ({'; '.join(problems)}); "
            "run `smuves db migrate` or deploy the matching code",
        )
    return Health(status="ok", migration=max(applied, default=0))


class _Snapshot(Collector):
    """Queue figures read from the database for one scrape."""

    def __init__(
        self, counts: list[JobCount], durations: list[DurationBucket], workers_live: int
    ) -> None:
        self._counts = counts
        self._durations = durations
        self._workers_live = workers_live

    def collect(self) -> Iterator[Metric]:
        jobs = GaugeMetricFamily(
            "smuves_jobs", "Jobs by kind and status.", labels=["kind", "status"]
        )
        found = {(c.kind, c.status): c.jobs for c in self._counts}
        for kind in JobKind:
            for status in JobStatus:
                jobs.add_metric(
                    [kind.value, status.value], found.get((kind.value, status.value), 0)
                )
        yield jobs

        oldest = GaugeMetricFamily(
            "smuves_oldest_pending_job_age_seconds",
            "Seconds the oldest due pending job has waited (0: none waiting).",
            labels=["kind"],
        )
        for kind in JobKind:
            ages = [
                c.oldest_pending_seconds
                for c in self._counts
                if c.kind == kind.value and c.oldest_pending_seconds is not None
            ]
            oldest.add_metric([kind.value], max(ages, default=0.0))
        yield oldest

        yield GaugeMetricFamily(
            "smuves_workers_live",
            "Worker processes alive: seen within three of their heartbeat intervals.",
            value=self._workers_live,
        )

        histogram = HistogramMetricFamily(
            "smuves_job_duration_seconds",
            "Finished jobs by duration from creation to finish (queue wait included).",
            labels=["kind", "status"],
        )
        series: dict[tuple[str, str], list[DurationBucket]] = {}
        for bucket in self._durations:
            series.setdefault((bucket.kind, bucket.status), []).append(bucket)
        for (kind_word, status_word), buckets in sorted(series.items()):
            per_bucket = {b.bucket: b.jobs for b in buckets}
            cumulative, running = [], 0
            for index, bound in enumerate([*DURATION_BOUNDS, float("inf")]):
                running += per_bucket.get(index, 0)
                cumulative.append(("+Inf" if bound == float("inf") else str(bound), running))
            histogram.add_metric(
                [kind_word, status_word], cumulative, sum_value=sum(b.seconds for b in buckets)
            )
        yield histogram


def _process_registry() -> CollectorRegistry:
    # prometheus-client's multiprocess mode: counters of every process sharing the directory.
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return registry
    return REGISTRY


def metrics_access(request: Request) -> None:
    """FastAPI dependency: 401 without the metrics token; 404 on the tenants' port without one."""
    token = request.app.state.metrics_token
    if token is None:
        if request.scope.get("state", {}).get(METRICS_LISTENER_STATE):
            return
        raise ApiError(404, "NOT_FOUND", "Not Found")
    scheme, _, given = (request.headers.get("authorization") or "").partition(" ")
    expected = token.get_secret_value().encode()
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
        raise unauthenticated("/metrics needs Authorization: Bearer <SMUVES_METRICS_TOKEN>")


async def render_metrics(ctx: ApiContext) -> bytes:
    """The exposition text: this process's counters and the database's queue figures."""
    async with ctx.db.transaction() as db:
        counts = await metrics_jobs(db)
        durations = await metrics_job_durations(db, DURATION_BOUNDS)
        workers_live = await metrics_workers_live(db)
    snapshot = CollectorRegistry()
    snapshot.register(_Snapshot(counts, durations, workers_live))
    return generate_latest(_process_registry()) + generate_latest(snapshot)


@router.get(
    "/metrics",
    response_class=Response,
    dependencies=[Depends(metrics_access)],
    include_in_schema=False,
    summary="Prometheus metrics",
)
async def metrics(ctx: Context) -> Response:
    """Queue figures from the database and this process's HubSpot counters."""
    return Response(await render_metrics(ctx), media_type=CONTENT_TYPE_LATEST)
