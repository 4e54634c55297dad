-- The operators' dashboard (smuves_sync/db/dashboard.py, `smuves dashboard`). Run as the
-- login role, across every tenant, like the on-call commands; every read runs in a
-- transaction that first runs dashboard_custom_plans, so the optional filters below
-- (`%(x)s IS NULL OR …`) are planned with their values and the partial indexes of
-- migrations/0010_dashboard.sql are used. %(now)s NULL means the database's clock.
-- content_types is cast to text[]: psycopg does not know the domain's array type.
--
-- The queries are grouped by the stored noun they read, each group headed by that noun.

-- name: dashboard_custom_plans
-- A prepared statement (psycopg prepares a query it has run five times on a connection) may
-- switch to a generic plan, which cannot drop an `IS NULL OR` branch nor prove a partial
-- index's predicate from a parameter: plan every statement of this transaction afresh.
SET LOCAL plan_cache_mode = force_custom_plan


-- jobs ---------------------------------------------------------------------------------------

-- name: job_count_by_state
-- Jobs of each kind in each state, each count stopping at %(cap)s + 1 (the caller shows
-- "more than cap"): pending due now, pending waiting for a later run_after (backoff, a parked
-- limit), running, failed, stopped, and completed in the last hour and day. Every count walks
-- one partial index (0002, 0010) and no count reads more than cap + 1 entries; `capped` says
-- that there are more than %(cap)s.
WITH clock AS (
    SELECT coalesce(%(now)s::timestamptz, now()) AS now
), kinds AS (
    SELECT k.kind FROM unnest(%(kinds)s::text[]) AS k (kind)
), counted AS (
    SELECT k.kind, 'pending_due' AS state,
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'pending' AND j.kind = k.kind
                                    AND j.run_after <= c.now
                                  LIMIT %(cap)s + 1) AS x) AS jobs
    FROM kinds AS k, clock AS c
    UNION ALL
    SELECT k.kind, 'pending_waiting',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'pending' AND j.kind = k.kind
                                    AND j.run_after > c.now
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k, clock AS c
    UNION ALL
    -- heartbeat_at IS NOT NULL holds for every running job; it lets jobs_lease_idx answer.
    SELECT k.kind, 'running',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'running' AND j.heartbeat_at IS NOT NULL
                                    AND j.kind = k.kind
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k
    UNION ALL
    SELECT k.kind, 'failed',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'failed' AND j.kind = k.kind
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k
    UNION ALL
    SELECT k.kind, 'stopped',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'stopped' AND j.kind = k.kind
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k
    UNION ALL
    SELECT k.kind, 'completed_hour',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'completed' AND j.kind = k.kind
                                    AND j.finished_at > c.now - interval '1 hour'
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k, clock AS c
    UNION ALL
    SELECT k.kind, 'completed_day',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'completed' AND j.kind = k.kind
                                    AND j.finished_at > c.now - interval '1 day'
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k, clock AS c
)
SELECT kind, state, least(jobs, %(cap)s) AS jobs, jobs > %(cap)s AS capped FROM counted

-- name: job_oldest_due
-- Per kind, how long the oldest due pending job has waited (NULL: none is due): one probe
-- of jobs_claimable_idx, oldest first.
SELECT k.kind,
       c.now - (SELECT j.run_after FROM public.jobs AS j
                WHERE j.status = 'pending' AND j.kind = k.kind AND j.run_after <= c.now
                ORDER BY j.run_after, j.id
                LIMIT 1) AS age
FROM unnest(%(kinds)s::text[]) AS k (kind),
     (SELECT coalesce(%(now)s::timestamptz, now()) AS now) AS c

-- name: job_completed_per_minute
-- Completed jobs in each of the last %(minutes)s minutes (the current one last), zeros
-- included; a range of jobs_completed_idx.
WITH clock AS (
    SELECT date_trunc('minute', coalesce(%(now)s::timestamptz, now())) AS minute
), done AS (
    SELECT date_trunc('minute', j.finished_at) AS minute, count(*) AS jobs
    FROM public.jobs AS j, clock AS c
    WHERE j.status = 'completed'
      AND j.finished_at >= c.minute - (%(minutes)s - 1) * interval '1 minute'
      AND j.finished_at < c.minute + interval '1 minute'
    GROUP BY 1
)
SELECT m.minute, coalesce(d.jobs, 0) AS value
FROM clock AS c
CROSS JOIN generate_series(c.minute - (%(minutes)s - 1) * interval '1 minute', c.minute,
                           interval '1 minute') AS m (minute)
LEFT JOIN done AS d ON d.minute = m.minute
ORDER BY m.minute

-- name: job_dead_page
-- Failed (or stopped) jobs, newest first, %(limit)s of them below id %(before_id)s (NULL: from
-- the newest), with their portal's name: the dead letter, a walk of jobs_dead_idx.
SELECT j.*, p.name AS portal_name
FROM public.jobs AS j
JOIN public.portals AS p ON p.id = j.portal_id
WHERE j.status = %(status)s
  AND (%(portal_id)s::bigint IS NULL OR j.portal_id = %(portal_id)s)
  AND (%(run_id)s::bigint IS NULL OR j.run_id = %(run_id)s)
  AND (%(content_type)s::text IS NULL OR j.content_type = %(content_type)s::text)
  AND (%(before_id)s::bigint IS NULL OR j.id < %(before_id)s)
ORDER BY j.id DESC
LIMIT %(limit)s

-- name: job_dead_count
-- How many jobs job_dead_page would page through, stopping at %(cap)s + 1.
SELECT count(*) AS jobs FROM (
    SELECT FROM public.jobs AS j
    WHERE j.status = %(status)s
      AND (%(portal_id)s::bigint IS NULL OR j.portal_id = %(portal_id)s)
      AND (%(run_id)s::bigint IS NULL OR j.run_id = %(run_id)s)
      AND (%(content_type)s::text IS NULL OR j.content_type = %(content_type)s::text)
    LIMIT %(cap)s + 1
) AS x

-- name: job_get_many
-- The jobs with these ids (those that exist), newest first.
SELECT j.*, p.name AS portal_name
FROM public.jobs AS j
JOIN public.portals AS p ON p.id = j.portal_id
WHERE j.id = ANY (%(job_ids)s::bigint[])
ORDER BY j.id DESC


-- runs ---------------------------------------------------------------------------------------

-- name: run_page
-- Runs newest first, filtered, %(limit)s of them after the keyset (%(before_created)s,
-- %(before_id)s) (NULL: from the newest), each with its jobs' progress. The page is chosen
-- first (runs_created_idx, runs_status_created_idx or runs_portal_created_idx), then each of
-- its runs' jobs are summed (jobs_run_idx).
SELECT r.id, r.portal_id, r.owner_id, r.kind, r.status,
       r.content_types::text[] AS content_types, r.created_at, r.started_at, r.finished_at,
       p.name AS portal_name, s.jobs, s.jobs_completed, s.jobs_failed, s.processed, s.total
FROM (
    SELECT * FROM public.runs AS r
    WHERE (%(portal_id)s::bigint IS NULL OR r.portal_id = %(portal_id)s)
      AND (%(kind)s::text IS NULL OR r.kind = %(kind)s::text)
      AND (%(status)s::text IS NULL OR r.status = %(status)s::text)
      AND (%(created_from)s::timestamptz IS NULL OR r.created_at >= %(created_from)s)
      AND (%(created_to)s::timestamptz IS NULL OR r.created_at < %(created_to)s)
      AND (%(before_created)s::timestamptz IS NULL
           OR (r.created_at, r.id) < (%(before_created)s::timestamptz, %(before_id)s::bigint))
    ORDER BY r.created_at DESC, r.id DESC
    LIMIT %(limit)s
) AS r
JOIN public.portals AS p ON p.id = r.portal_id
CROSS JOIN LATERAL (
    SELECT count(*) AS jobs,
           count(*) FILTER (WHERE j.status = 'completed') AS jobs_completed,
           count(*) FILTER (WHERE j.status = 'failed') AS jobs_failed,
           coalesce(sum(j.processed), 0)::bigint AS processed,
           sum(j.total)::bigint AS total
    FROM public.jobs AS j WHERE j.run_id = r.id
) AS s
ORDER BY r.created_at DESC, r.id DESC

-- name: run_in_flight
-- The newest %(limit)s pending or running runs (runs_open_idx), one row per job.
-- The run's columns are prefixed r_, as in run_detail.
SELECT r.id AS r_id, r.portal_id AS r_portal_id, r.owner_id AS r_owner_id, r.kind AS r_kind,
       r.status AS r_status, r.content_types::text[] AS r_content_types,
       r.created_at AS r_created_at, r.started_at AS r_started_at,
       r.finished_at AS r_finished_at, p.name AS portal_name, j.*
FROM (
    SELECT * FROM public.runs AS r
    WHERE r.status IN ('pending', 'running')
    ORDER BY r.id DESC
    LIMIT %(limit)s
) AS r
JOIN public.portals AS p ON p.id = r.portal_id
JOIN public.jobs AS j ON j.run_id = r.id
ORDER BY r.id DESC, j.id

-- name: run_count_in_flight
SELECT count(*) AS runs FROM public.runs AS r WHERE r.status IN ('pending', 'running')

-- name: run_operator_stop
-- migrations/0010: the run's open jobs end stopped, then the run settles. No row: no run.
SELECT r.id, r.portal_id, r.owner_id, r.kind, r.status,
       r.content_types::text[] AS content_types, r.created_at, r.started_at, r.finished_at
FROM public.operator_stop_run(%(run_id)s, %(now)s) AS r


-- notifications ------------------------------------------------------------------------------

-- name: notification_of_run
-- A run's notifications, newest first, with the recipient's email (notifications_run_idx).
SELECT n.id, n.user_id, u.email, n.kind, n.message, n.created_at, n.read_at
FROM public.notifications AS n
LEFT JOIN public.app_users AS u ON u.id = n.user_id
WHERE n.run_id = %(run_id)s
ORDER BY n.id DESC
LIMIT %(limit)s


-- portals ------------------------------------------------------------------------------------

-- name: portal_page
-- Portals by id, %(limit)s of them after %(after_id)s (NULL: from the first), with the owner's
-- email and whether a token is stored (never the token).
SELECT p.id, p.name, p.owner_id, u.email AS owner_email, p.created_at,
       p.token_encrypted IS NOT NULL AS has_token
FROM public.portals AS p
JOIN public.app_users AS u ON u.id = p.owner_id
WHERE (%(portal_id)s::bigint IS NULL OR p.id = %(portal_id)s)
  AND (%(after_id)s::bigint IS NULL OR p.id > %(after_id)s)
ORDER BY p.id
LIMIT %(limit)s

-- name: portal_fetch_state
-- For each of the portals and content types: its last finished fetch (any outcome), its last
-- completed one, and the fetch in flight now, if any. The first two walk jobs_fetched_idx
-- back from the newest; the third is one probe of jobs_in_flight_uniq.
SELECT p.portal_id, t.content_type,
       last.id AS last_job_id, last.run_id AS last_run_id, last.status AS last_status,
       last.finished_at AS last_finished_at, last.last_error AS last_error,
       done.id AS done_job_id, done.run_id AS done_run_id,
       done.finished_at AS done_finished_at, done.processed AS done_processed,
       open.id AS open_job_id, open.run_id AS open_run_id, open.status AS open_status,
       open.processed AS open_processed, open.total AS open_total
FROM unnest(%(portal_ids)s::bigint[]) AS p (portal_id)
CROSS JOIN unnest(%(content_types)s::text[]) AS t (content_type)
LEFT JOIN LATERAL (
    SELECT j.id, j.run_id, j.status, j.finished_at, j.last_error FROM public.jobs AS j
    WHERE j.kind = 'fetch' AND j.finished_at IS NOT NULL
      AND j.portal_id = p.portal_id AND j.content_type = t.content_type
    ORDER BY j.finished_at DESC
    LIMIT 1
) AS last ON true
LEFT JOIN LATERAL (
    SELECT j.id, j.run_id, j.finished_at, j.processed FROM public.jobs AS j
    WHERE j.kind = 'fetch' AND j.finished_at IS NOT NULL AND j.status = 'completed'
      AND j.portal_id = p.portal_id AND j.content_type = t.content_type
    ORDER BY j.finished_at DESC
    LIMIT 1
) AS done ON true
LEFT JOIN LATERAL (
    SELECT j.id, j.run_id, j.status, j.processed, j.total FROM public.jobs AS j
    WHERE j.status IN ('pending', 'running') AND j.kind = 'fetch'
      AND j.portal_id = p.portal_id AND j.content_type = t.content_type
    LIMIT 1
) AS open ON true
ORDER BY p.portal_id, array_position(%(content_types)s::text[], t.content_type)


-- content ------------------------------------------------------------------------------------

-- name: content_count_by_type
-- Stored objects of the portals by type: live, archived (still in HubSpot) and deleted
-- (gone from HubSpot). Reads every stored row of these portals: its cost grows with their
-- content, not with the queue.
SELECT c.portal_id, c.content_type::text AS content_type,
       count(*) FILTER (WHERE c.deleted_at IS NULL AND NOT c.archived) AS live,
       count(*) FILTER (WHERE c.deleted_at IS NULL AND c.archived) AS archived,
       count(*) FILTER (WHERE c.deleted_at IS NOT NULL) AS deleted
FROM public.content_items AS c
WHERE c.portal_id = ANY (%(portal_ids)s::bigint[])
GROUP BY c.portal_id, c.content_type


-- schedules ----------------------------------------------------------------------------------

-- name: schedule_of_portals
SELECT id, portal_id, owner_id, cron_expression, content_types::text[] AS content_types,
       enabled, next_run_at, last_run_at, created_at
FROM public.schedules
WHERE portal_id = ANY (%(portal_ids)s::bigint[])
ORDER BY portal_id, id


-- stats: HubSpot requests per minute ---------------------------------------------------------

-- name: hubspot_minute_record
-- Add one process's HubSpot requests and 429s to the current minute (migrations/0010).
SELECT public.record_hubspot_minute(%(requests)s, %(rate_limited)s, %(now)s)

-- name: hubspot_per_minute
-- Requests and 429s in each of the last %(minutes)s minutes (the current one last), zeros
-- included.
WITH clock AS (
    SELECT date_trunc('minute', coalesce(%(now)s::timestamptz, now())) AS minute
)
SELECT m.minute, coalesce(h.requests, 0) AS requests,
       coalesce(h.rate_limited, 0) AS rate_limited
FROM clock AS c
CROSS JOIN generate_series(c.minute - (%(minutes)s - 1) * interval '1 minute', c.minute,
                           interval '1 minute') AS m (minute)
LEFT JOIN public.hubspot_minutes AS h ON h.minute = m.minute
ORDER BY m.minute


-- operator actions (the audit trail) ---------------------------------------------------------

-- name: operator_action_record
INSERT INTO public.operator_actions (actor, client, session, action, target, outcome)
VALUES (%(actor)s, %(client)s, %(session)s, %(action)s, %(target)s, %(outcome)s)
RETURNING id, at, actor, client, session, action, target, outcome

-- name: operator_action_recent
SELECT id, at, actor, client, session, action, target, outcome
FROM public.operator_actions
ORDER BY id DESC
LIMIT %(limit)s
