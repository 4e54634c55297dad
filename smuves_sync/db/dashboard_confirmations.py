"""dashboard_confirmations: the single-use nonces of the dashboard's confirmation pages
(dashboard_confirmations.sql).

    nonce = await dashboard_confirmation_issue(db, session="3f…", action="run_stop",
                                               target={"run_id": 7}, ttl=timedelta(minutes=10))
    async with db.transaction() as tx:           # spent in the transaction that acts
        if await dashboard_confirmation_consume(tx, nonce, session="3f…", action="run_stop",
                                                target={"run_id": 7}):
            ...                                  # act, and write the audit row

Only the nonce's sha256 is stored. Written and read as the login role; `now` is for tests.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from psycopg.rows import scalar_row
from psycopg.types.json import Jsonb

from smuves_sync.db.database import Database


def _hash(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


async def dashboard_confirmation_issue(
    db: Database,
    *,
    session: str,
    action: str,
    target: Mapping[str, Any],
    ttl: timedelta,
    now: datetime | None = None,
) -> str:
    """A new nonce for confirming `action` on `target`, by `session`, within `ttl`."""
    nonce = secrets.token_urlsafe(32)
    params = {
        "nonce_hash": _hash(nonce),
        "session": session,
        "action": action,
        "target": Jsonb(dict(target)),
        "ttl": ttl,
        "now": now,
    }
    await db.only("dashboard_confirmation_issue", params, row=scalar_row)
    return nonce


async def dashboard_confirmation_consume(
    db: Database,
    nonce: str,
    *,
    session: str,
    action: str,
    target: Mapping[str, Any],
    now: datetime | None = None,
) -> bool:
    """Spend `nonce`: True when it was issued to `session` for `action` on `target` and has
    not expired; False otherwise (unknown, spent, expired, or issued for something else)."""
    params = {
        "nonce_hash": _hash(nonce),
        "session": session,
        "action": action,
        "target": Jsonb(dict(target)),
        "now": now,
    }
    valid: bool | None = await db.one("dashboard_confirmation_consume", params, row=scalar_row)
    return bool(valid)
