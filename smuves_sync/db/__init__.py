"""The only code that runs SQL: pool, embedded server, migrations, and one module per stored noun.

    open_pool(settings, *, role=None, min_size=None, max_size=None)   async context -> Pool
    runtime_pool(settings, role, *, min_size, max_size)  async context -> (Pool, conninfo)
    pool_for(conninfo, *, role=None, min_size=1, max_size=10, name=None, check_idle_after=2.0)
    database_url(settings)              async context -> str (starts the embedded server)
    with_login_urls(settings, url)      settings for a running server (embedded: derived logins)
    DbRole.APP / DbRole.WORKER          roles a pool acts as (None: the login role); .login is
                                        the runtime LOGIN role of each (.login_in(settings):
                                        of the install's SMUVES_ROLE_PREFIX)
    Database(pool)                      one, all, execute, stream, pipeline; transaction,
                                        as_user, for_portal, custom_plans (database.py)
    OnPool(pool)                        base of an app's context: .db, a Database on its pool
    migrate(conninfo, directory=None)   apply pending migrations -> list[Migration]
    queries()                           the merged named queries of db/queries/*.sql

The nouns, each a module of noun-verb functions taking a `Database`, with its
``queries/<noun>.sql``: jobs (and the queue's calls), runs, portals (members, users),
content, fetch_seen (what a fetch saw, the sweep over it, a type's last confirmation),
fetch_reads (how each fetch job reads its type, what it cost), rejects (objects a fetch could
not store), exports, schedules, notifications,
hubspot_minutes (HubSpot requests per minute), operator_actions (the dashboard's audit trail),
dashboard_confirmations (the single-use nonces of its confirmation pages),
workers (which worker processes are alive), stats (monitoring reads). Rows become the
package's records through `rows.model_row`.
"""

from smuves_sync.db.database import Database, OnPool
from smuves_sync.db.migrations import Migration, migrate
from smuves_sync.db.pool import (
    DbRole,
    Pool,
    database_url,
    open_pool,
    pool_for,
    runtime_pool,
    with_login_urls,
)
from smuves_sync.db.queries import queries

__all__ = [
    "Database",
    "DbRole",
    "Migration",
    "OnPool",
    "Pool",
    "database_url",
    "migrate",
    "open_pool",
    "pool_for",
    "queries",
    "runtime_pool",
    "with_login_urls",
]
