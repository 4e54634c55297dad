"""How `smuves stats` shows the workers: alive or dead, what they work, when last seen.

JSON (times ISO 8601 with offset, the interval in seconds):

    worker  {id, name, host, pid, kinds, concurrency, run_id, heartbeat_every_seconds,
             started_at, last_seen_at, job_ids, alive}
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from smuves_sync.cli.ops_output import JSONValue, record_json, when
from smuves_sync.db.workers import NO_WORKER, WorkerRow


def worker_json(worker: WorkerRow) -> dict[str, JSONValue]:
    """A registered worker as a JSON object."""
    return record_json(worker, rename={"heartbeat_every": "heartbeat_every_seconds"})


def workers_table(workers: Sequence[WorkerRow]) -> Table:
    """The registered workers, alive or dead, with what they work and when last seen."""
    live = sum(1 for w in workers if w.alive)
    table = Table(title=f"workers: {live} alive", title_justify="left")
    headers = ("worker", "host", "pid", "kinds", "concurrency", "jobs in hand", "started")
    for header in (*headers, "last seen", "state"):
        table.add_column(header, no_wrap=True)
    for w in workers:
        table.add_row(
            w.name,
            w.host,
            str(w.pid),
            ",".join(w.kinds) + (f" (run {w.run_id})" if w.run_id is not None else ""),
            str(w.concurrency),
            f"{len(w.job_ids)}" + (f": {', '.join(map(str, w.job_ids))}" if w.job_ids else ""),
            when(w.started_at),
            when(w.last_seen_at),
            "alive" if w.alive else "dead",
        )
    if not live:
        table.caption = NO_WORKER.removeprefix("waiting: ")
    return table
