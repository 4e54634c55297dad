-- Schedules (smuves_sync/db/schedules.py): `smuves schedule …` and the workers' scheduler.
-- content_types is cast to text[]: psycopg does not know the domain's array type.

-- name: schedule_add
-- No row back when the portal does not exist (or is not visible).
INSERT INTO public.schedules (portal_id, owner_id, cron_expression, content_types, next_run_at)
SELECT p.id, %(owner_id)s, %(cron_expression)s, %(content_types)s::text[], %(next_run_at)s
FROM public.portals AS p WHERE p.id = %(portal_id)s
RETURNING id, portal_id, owner_id, cron_expression, content_types::text[] AS content_types,
          enabled, next_run_at, last_run_at, created_at

-- name: schedule_list
-- Every schedule, or those of the portals %(portal_ids)s (one for `smuves schedule list
-- --portal`, a page of them for the dashboard).
SELECT id, portal_id, owner_id, cron_expression, content_types::text[] AS content_types,
       enabled, next_run_at, last_run_at, created_at
FROM public.schedules
WHERE (%(portal_ids)s::bigint[] IS NULL OR portal_id = ANY (%(portal_ids)s::bigint[]))
ORDER BY portal_id, id

-- name: schedule_get
SELECT id, portal_id, owner_id, cron_expression, content_types::text[] AS content_types,
       enabled, next_run_at, last_run_at, created_at
FROM public.schedules WHERE id = %(schedule_id)s

-- name: schedule_remove
DELETE FROM public.schedules WHERE id = %(schedule_id)s
RETURNING id, portal_id, owner_id, cron_expression, content_types::text[] AS content_types,
          enabled, next_run_at, last_run_at, created_at

-- name: schedule_clock
SELECT coalesce(%(now)s::timestamptz, now()) AS now

-- name: schedule_claim_due
-- One due schedule, locked until the transaction ends (claim_due_schedule), and
-- the time it is being fired at.
SELECT s.id, s.portal_id, s.owner_id, s.cron_expression,
       s.content_types::text[] AS content_types, s.enabled, s.next_run_at, s.last_run_at,
       s.created_at, coalesce(%(now)s::timestamptz, now()) AS fired_at
FROM public.claim_due_schedule(%(skip)s::bigint[], %(now)s) AS s

-- name: schedule_advance
-- After a due schedule's firing (or a skipped one): the next time, and when it last started a
-- run. False when the schedule is not due: nothing changed (advance_due_schedule).
SELECT public.advance_due_schedule(%(schedule_id)s, %(next_run_at)s, %(last_run_at)s,
                                   %(now)s) AS advanced

-- name: schedule_disable_due
-- A due schedule that cannot be fired: disabled, and its owner (else its portal's owner) told
-- %(message)s. NULL when the schedule is not due (nothing changed), else whether somebody
-- was told (disable_due_schedule).
SELECT public.disable_due_schedule(%(schedule_id)s, %(message)s, %(now)s) AS told

-- name: schedule_disable
-- The operator's: stop any schedule from firing.
UPDATE public.schedules SET enabled = false WHERE id = %(schedule_id)s
