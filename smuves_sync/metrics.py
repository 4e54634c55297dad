"""Process-wide Prometheus counters that code below the API can increment without importing it.

    from smuves_sync import metrics
    metrics.hubspot_response(response.status_code)     # every answer HubSpot gives
    metrics.hubspot_rate_limited("TEN_SECONDLY_ROLLING")  # every 429, by policy

`GET /metrics` of the HTTP API exposes them together with the queue figures it reads from the
database. Counters live in the process that increments them: with several worker processes,
set PROMETHEUS_MULTIPROC_DIR (prometheus-client's multiprocess mode) for every process on a
machine and the API process aggregates them.
"""

from __future__ import annotations

from prometheus_client import Counter

HUBSPOT_REQUESTS = Counter(
    "smuves_hubspot_requests",
    "HubSpot API requests answered, by HTTP status ('error': no answer, a transport failure).",
    ["status"],
)
HUBSPOT_RATE_LIMITED = Counter(
    "smuves_hubspot_rate_limited",
    "HubSpot 429 answers, by the policyName HubSpot gave ('unknown' when it gave none).",
    ["policy"],
)


def hubspot_response(status: int | None) -> None:
    """Count one HubSpot request by its answer's status (None: no answer)."""
    HUBSPOT_REQUESTS.labels(status="error" if status is None else str(status)).inc()


def hubspot_rate_limited(policy: str | None) -> None:
    """Count one 429 by its rate-limit policy."""
    HUBSPOT_RATE_LIMITED.labels(policy=policy or "unknown").inc()
