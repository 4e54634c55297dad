-- Row factory statements (tests/support/factories.py): plant rows in any state, with any timestamps.
-- Users and a whole backlog come from the testing aids' seed_user and seed_backlog
-- (smuves_sync/testing/sql/scratch.sql), which the benchmarks plant with too.

-- name: plant_portal
-- The insert trigger makes the owner a member.
INSERT INTO public.portals (id, name, owner_id, token_encrypted, time_zone)
VALUES (%(portal_id)s, %(name)s, %(owner_id)s, %(token_encrypted)s, %(time_zone)s)
RETURNING id

-- name: plant_member
INSERT INTO public.portal_members (portal_id, user_id, role)
VALUES (%(portal_id)s, %(user_id)s, %(role)s)

-- name: plant_run
INSERT INTO public.runs (portal_id, owner_id, kind, status, content_types, created_at,
                         started_at, finished_at, full_read)
VALUES (%(portal_id)s, %(owner_id)s, %(kind)s, %(status)s, %(content_types)s::text[],
        coalesce(%(created_at)s, now()), %(started_at)s, %(finished_at)s, %(full_read)s)
RETURNING id

-- name: plant_job
-- A planted error is told the same to the portal's users unless they are given their own.
INSERT INTO public.jobs (run_id, portal_id, kind, content_type, status, attempts, max_attempts,
                         run_after, locked_at, locked_by, lease_token, heartbeat_at, total,
                         processed, cursor, last_error, last_error_public, idempotency_key,
                         created_at, finished_at)
VALUES (%(run_id)s, %(portal_id)s, %(kind)s, %(content_type)s, %(status)s::text, %(attempts)s,
        %(max_attempts)s, coalesce(%(run_after)s, now()),
        CASE WHEN %(status)s::text = 'running' THEN coalesce(%(locked_at)s, now()) ELSE %(locked_at)s END,
        %(locked_by)s, %(lease_token)s,
        CASE WHEN %(status)s::text = 'running' THEN coalesce(%(heartbeat_at)s, %(locked_at)s, now())
             ELSE %(heartbeat_at)s END, %(total)s, %(processed)s, %(cursor)s, %(last_error)s,
        coalesce(%(last_error_public)s, %(last_error)s),
        %(idempotency_key)s, coalesce(%(created_at)s, now()), %(finished_at)s)
RETURNING id

-- name: plant_content_item
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, name, data, content_hash,
                                  first_seen_run, changed_run, language, translated_from_id)
VALUES (%(portal_id)s, %(content_type)s, %(hubspot_id)s, %(name)s, %(data)s, %(content_hash)s,
        %(run_id)s, %(run_id)s, %(language)s, %(translated_from_id)s)

-- name: plant_content_rows
-- n rows of one type with ids '00000001'…, every tenth archived.
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, name, slug, url, state,
                                  language, hubspot_updated_at, archived, data, content_hash,
                                  first_seen_run, changed_run)
SELECT %(portal_id)s, %(content_type)s, lpad(g::text, 8, '0'), 'Page ' || g, 'page-' || g,
       'https://www.example.com/page-' || g, 'PUBLISHED', 'en',
       timestamptz '2030-01-01 00:00:00+00' + g * interval '1 minute', g %% 10 = 0,
       jsonb_build_object('id', g::text, 'name', 'Page ' || g, 'htmlTitle', repeat('x', 200)),
       md5(g::text), %(run_id)s, %(run_id)s
FROM generate_series(1, %(n)s) AS g

-- name: plant_content_reject
INSERT INTO public.content_rejects (portal_id, run_id, content_type, hubspot_id, reason, raw,
                                    raw_size)
VALUES (%(portal_id)s, %(run_id)s, %(content_type)s, %(hubspot_id)s, %(reason)s, %(raw)s,
        length(%(raw)s))
RETURNING id

-- name: plant_content_sync
INSERT INTO public.content_syncs (portal_id, content_type, run_id, job_id, confirmed_at, seen,
                                  deleted)
VALUES (%(portal_id)s, %(content_type)s, %(run_id)s, %(job_id)s, now(), 0, 0)

-- name: plant_fetch_read
INSERT INTO public.fetch_reads (job_id, run_id, portal_id, content_type, mode, reason, since,
                                listing_started_at)
VALUES (%(job_id)s, %(run_id)s, %(portal_id)s, %(content_type)s, %(mode)s, %(reason)s,
        %(since)s, now())

-- name: plant_fetch_seen
INSERT INTO public.fetch_seen (job_id, portal_id, hubspot_id)
SELECT %(job_id)s, %(portal_id)s, h FROM unnest(%(hubspot_ids)s::text[]) AS h

-- name: plant_export
INSERT INTO public.exports (run_id, portal_id, content_type, format, status)
VALUES (%(run_id)s, %(portal_id)s, %(content_type)s, %(format)s, %(status)s)
RETURNING id

-- name: plant_notification
INSERT INTO public.notifications (user_id, run_id, kind, message)
VALUES (%(user_id)s, %(run_id)s, %(kind)s, %(message)s)
RETURNING id

-- name: plant_schedule
INSERT INTO public.schedules (portal_id, owner_id, cron_expression, content_types, next_run_at)
VALUES (%(portal_id)s, %(owner_id)s, %(cron_expression)s, %(content_types)s::text[],
        %(next_run_at)s)
RETURNING id
