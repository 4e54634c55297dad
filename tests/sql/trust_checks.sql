-- Statements of the queue trust tests (tests/integration/test_queue_trust.py): what a runtime
-- login might try against the queue, written as an attacker would.

-- name: trust_set_portal
SELECT pg_catalog.set_config('app.portal_id', %(portal_id)s::text, true)

-- name: trust_set_lease
SELECT pg_catalog.set_config('app.job_id', %(job_id)s::text, true),
       pg_catalog.set_config('app.lease_token', %(lease_token)s::text, true)

-- name: trust_insert_leased_job
-- A job "already running" under a lease token the caller chose.
INSERT INTO public.jobs (run_id, portal_id, kind, content_type, status, locked_at, locked_by,
                         lease_token, heartbeat_at)
VALUES (%(run_id)s, %(portal_id)s, 'fetch', 'site_page', 'running', now(), 'me',
        %(lease_token)s, now())

-- name: trust_lease_a_job
UPDATE public.jobs SET status = 'running', lease_token = %(lease_token)s, locked_at = now(),
                       heartbeat_at = now(), locked_by = 'me'
WHERE id = %(job_id)s

-- name: trust_move_job
UPDATE public.jobs SET portal_id = %(portal_id)s, run_id = %(run_id)s WHERE id = %(job_id)s

-- name: trust_portal_token
SELECT portal_id, token_encrypted FROM public.portal_token(%(job_id)s, %(lease_token)s)

-- name: trust_claim_at
SELECT id, lease_token FROM public.claim_jobs('me', NULL, 10, p_now => %(now)s)

-- name: trust_heartbeat_at
SELECT id FROM public.heartbeat_job(%(job_id)s, %(lease_token)s, %(now)s)

-- name: trust_reconcile_at
SELECT id FROM public.reconcile_stuck_runs(%(now)s)

-- name: trust_schedule_due_at
SELECT id FROM public.claim_due_schedule(p_now => %(now)s)

-- name: trust_enqueue
SELECT id, portal_id, status FROM public.enqueue_job(%(run_id)s, %(content_type)s,
                                                       p_schedule_id => %(schedule_id)s)

-- name: trust_job_lease
SELECT status, lease_token, locked_by FROM public.jobs WHERE id = %(job_id)s

-- name: trust_set_user
SELECT pg_catalog.set_config('app.user_id', %(user_id)s::text, true)

-- name: trust_record_minute_at
SELECT public.record_hubspot_minute(%(requests)s, 0, %(now)s)

-- name: trust_minutes
SELECT minute, requests FROM public.hubspot_minutes ORDER BY minute

-- name: trust_create_run
-- A run the caller makes itself, with whatever status it likes.
INSERT INTO public.runs (portal_id, owner_id, kind, content_types)
VALUES (%(portal_id)s, %(owner_id)s, 'fetch', ARRAY['blog_post']::public.content_type[])
RETURNING id

-- name: trust_create_finished_run
INSERT INTO public.runs (portal_id, kind, status, content_types, finished_at)
VALUES (%(portal_id)s, 'fetch', 'completed', ARRAY['blog_post']::public.content_type[], now())
RETURNING id

-- name: trust_runs_of_portal
SELECT id FROM public.runs WHERE portal_id = %(portal_id)s ORDER BY id

-- name: trust_read_lease
SELECT lease_token FROM public.jobs WHERE id = %(job_id)s

-- name: trust_deface_content
UPDATE public.content_items SET name = 'defaced' WHERE portal_id = %(portal_id)s
RETURNING hubspot_id

-- name: trust_make_schedule_due
UPDATE public.schedules SET next_run_at = now() - interval '1 day'
WHERE portal_id = %(portal_id)s
RETURNING id

-- name: trust_plant_content
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, data, content_hash)
VALUES (%(portal_id)s, 'site_page', 'planted', '{}', 'planted')
RETURNING hubspot_id

-- name: trust_content_names
SELECT hubspot_id, name FROM public.content_items WHERE portal_id = %(portal_id)s
ORDER BY hubspot_id

-- name: trust_take_over_lease
-- Another worker's claim of the job: a new lease token.
UPDATE public.jobs SET lease_token = gen_random_uuid(), locked_by = 'another worker'
WHERE id = %(job_id)s

-- name: trust_advance_schedule
SELECT public.advance_due_schedule(%(schedule_id)s, now() + interval '1 hour') AS advanced

-- name: trust_disable_schedule
SELECT public.disable_due_schedule(%(schedule_id)s, 'Pay up at evil.example') AS told

-- name: trust_notify
INSERT INTO public.notifications (user_id, schedule_id, kind, message)
SELECT s.owner_id, s.id, 'schedule_disabled', 'Pay up at evil.example'
FROM public.schedules AS s WHERE s.id = %(schedule_id)s
RETURNING id

-- name: trust_schedule
SELECT enabled, next_run_at FROM public.schedules WHERE id = %(schedule_id)s

-- name: trust_notifications_of_schedule
SELECT message FROM public.notifications WHERE schedule_id = %(schedule_id)s

-- name: trust_enqueue_priority
SELECT id, priority FROM public.enqueue_job(%(run_id)s, %(content_type)s,
                                               %(priority)s::smallint,
                                               p_schedule_id => %(schedule_id)s)

-- name: trust_claim_with_short_leases
-- A claim whose caller chooses the leases: there is none (the leases are job_leases').
SELECT id FROM public.claim_jobs('me', NULL, 10, interval '1 second', interval '1 second')

-- name: trust_create_full_run
-- A run for a due schedule that asks for a full read, which a schedule never does.
INSERT INTO public.runs (portal_id, owner_id, kind, content_types, full_read)
VALUES (%(portal_id)s, %(owner_id)s, 'fetch', ARRAY['blog_post']::public.content_type[], true)
RETURNING id
