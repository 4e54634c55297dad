"""The Postgres job queue: thin Python over the SQL functions of migrations/functions/queue.sql
and runs.sql (called through `smuves_sync.db.jobs`), fencing every state change
with the job's lease.

Public API:

    Queue(db: Database, settings: Settings, *, worker_id: str | None = None)
        .claim(kinds, *, limit=1, run_id=None, now=None)                -> list[Job]
        .heartbeat(job, *, now=None)                                    -> Job
        .checkpoint(job, cursor, processed, *, total=None, now=None)    -> Job
        .complete(job, *, processed=None, now=None)                     -> Job
        .complete_many(jobs, *, now=None)                               -> list[int]
        .complete_and_claim(done, kinds, *, limit, now=None)  -> (list[int], list[Job])
        .fail(job, error, *, retryable=None, public=None, now=None)     -> Job
        .park(job, until, reason, *, now=None)        -> Job (until: a time or a wait)
        .fail_run_token_refused(job, message, public, *, now=None)      -> Job
        .release(job, *, now=None)                                      -> Job
        .portal_token(job)                                              -> bytes | None
        .portal_credentials(job)                      -> PortalCredentials (token, time zone)
        .reconcile(*, now=None)                                         -> list[Run]
    Wakeups(conninfo, *, kinds=None)   async context; .ready(), .wait(timeout) -> bool
    default_worker_id(prefix=None) -> str;  error_text(error) -> str

Fenced calls raise `smuves_sync.errors.LeaseLost` when the job was taken over.
"""

from smuves_sync.queue.api import Queue, default_worker_id, error_text
from smuves_sync.queue.wakeups import Wakeups

__all__ = ["Queue", "Wakeups", "default_worker_id", "error_text"]
