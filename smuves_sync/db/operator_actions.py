"""operator_actions: the audit trail of the dashboard's buttons (operator_actions.sql).

    async with db.transaction() as tx:              # the action and its record commit together
        results = await jobs_retry_failed(tx, portal_id=portal_id)
        await operator_action_record(tx, actor="ada", action="jobs_retry_failed",
                                     target={"portal_id": portal_id}, outcome={...})
    recent = await operator_action_recent(db, limit=10)   # newest first

Written and read as the login role; `target` and `outcome` are JSON objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row


@dataclass(frozen=True, slots=True)
class OperatorAction:
    """One button pressed in the dashboard: who, what, to what, with what outcome, when."""

    id: int
    at: datetime
    actor: str
    client: str | None
    session: str | None
    action: str
    target: dict[str, Any]
    outcome: dict[str, Any]


async def operator_action_record(
    db: Database,
    *,
    actor: str,
    action: str,
    target: Mapping[str, Any],
    outcome: Mapping[str, Any],
    client: str | None = None,
    session: str | None = None,
) -> OperatorAction:
    """Write one audit row (in the caller's transaction, beside the action it records)."""
    params = {"actor": actor, "client": client, "session": session, "action": action}
    documents = {"target": Jsonb(dict(target)), "outcome": Jsonb(dict(outcome))}
    return await db.only(
        "operator_action_record", {**params, **documents}, row=model_row(OperatorAction)
    )


async def operator_action_recent(db: Database, *, limit: int = 20) -> list[OperatorAction]:
    """The newest audit rows first."""
    return await db.all("operator_action_recent", {"limit": limit}, row=model_row(OperatorAction))
