-- dashboard_confirmations (smuves_sync/db/dashboard_confirmations.py): the confirmation pages
-- the dashboard showed and nobody has acted on yet, written and read as the login role.

-- name: dashboard_confirmation_issue
-- One confirmation, valid for %(ttl)s; the expired ones are forgotten on the way (a range of
-- dashboard_confirmations_expires_idx).
WITH forgotten AS (
    DELETE FROM public.dashboard_confirmations AS c
    WHERE c.expires_at <= coalesce(%(now)s::timestamptz, now())
)
INSERT INTO public.dashboard_confirmations (nonce_hash, session, action, target, expires_at)
VALUES (%(nonce_hash)s, %(session)s, %(action)s, %(target)s,
        coalesce(%(now)s::timestamptz, now()) + %(ttl)s::interval)
RETURNING expires_at

-- name: dashboard_confirmation_consume
-- Spends the confirmation whatever comes of it (one try per nonce): true when it was shown to
-- this session, for this action on this target, and has not expired. No row: no such nonce
-- (never issued, or spent already). A concurrent consume of the same nonce waits for this
-- row's lock and then finds it gone.
DELETE FROM public.dashboard_confirmations AS c
WHERE c.nonce_hash = %(nonce_hash)s
RETURNING c.session = %(session)s
          AND c.action = %(action)s
          AND c.target = %(target)s
          AND c.expires_at > coalesce(%(now)s::timestamptz, now()) AS valid
