-- Portals, their owners and members (smuves_sync/db/portals.py). The login role writes
-- portals for `smuves portal add` and reads every portal for the dashboard (portal_page,
-- portal_fetch_state); the API's statements run as smuves_app inside `Database.as_user`,
-- where row-level security limits them to the caller's portals.

-- name: portal_get
SELECT id, name, owner_id, created_at, token_rejected_at FROM public.portals
WHERE id = %(portal_id)s

-- name: portal_needs_reconnect
-- Whether HubSpot refused the portal's stored token; no row when the portal is not there (for
-- the worker role: its own portal, which is all it may see; the worker reads no other column
-- of portals).
SELECT token_rejected_at IS NOT NULL AS needs_reconnect FROM public.portals
WHERE id = %(portal_id)s

-- name: portal_ownership
-- Who has the portal: its owner and the other members, by email. The portal's row stays
-- locked until the transaction ends, so what is decided on this read still holds when it is
-- written. No row: no such portal.
SELECT p.id, p.name, p.owner_id, o.email AS owner_email,
       array(SELECT u.email FROM public.portal_members AS m
             JOIN public.app_users AS u ON u.id = m.user_id
             WHERE m.portal_id = p.id AND m.user_id <> p.owner_id
             ORDER BY u.email) AS other_members
FROM public.portals AS p
JOIN public.app_users AS o ON o.id = p.owner_id
WHERE p.id = %(portal_id)s
FOR UPDATE OF p

-- name: portal_store
-- Add a portal (the insert trigger makes its owner a member) or give an existing one a new
-- name, token and time zone; an existing portal's owner and members stay as they are (a
-- change of hands is portal_transfer). A new token clears the mark of a refused one.
INSERT INTO public.portals AS p (id, name, owner_id, token_encrypted, time_zone)
VALUES (%(portal_id)s, %(name)s, %(owner_id)s, %(token_encrypted)s, %(time_zone)s)
ON CONFLICT (id) DO UPDATE
SET name = excluded.name, token_encrypted = excluded.token_encrypted,
    time_zone = excluded.time_zone, token_rejected_at = NULL
RETURNING id, name, owner_id, created_at, token_rejected_at

-- name: portal_transfer
-- The portal to its new owner, who becomes its only member (transfer_portal); the
-- emails of the people who lost it.
SELECT email FROM public.transfer_portal(%(portal_id)s, %(owner_id)s)

-- name: app_user_ensure
-- The user with this email (compared lower-cased, as app_users stores it), created when
-- missing: `invited` (the first sign-in that verifies the email takes the row over) or not.
-- DO UPDATE so RETURNING has the row; an existing row keeps what it is.
INSERT INTO public.app_users (email, invited) VALUES (lower(btrim(%(email)s)), %(invited)s)
ON CONFLICT (email) DO UPDATE SET email = excluded.email
RETURNING id

-- name: app_user_for_token
-- Whom `smuves dev token` signs a token for: the user with %(email)s (compared lower-cased, as
-- app_users stores it) or, with no email, the owner of portal %(portal_id)s; `member` says
-- whether they are a member of that portal (true when no portal is named). No row: no such
-- user, or no such portal.
SELECT u.id, u.email,
       %(portal_id)s::bigint IS NULL OR EXISTS (
           SELECT FROM public.portal_members AS m
           WHERE m.user_id = u.id AND m.portal_id = %(portal_id)s
       ) AS member
FROM public.app_users AS u
WHERE CASE WHEN %(email)s::text IS NULL
           THEN u.id = (SELECT p.owner_id FROM public.portals AS p WHERE p.id = %(portal_id)s)
           ELSE u.email = lower(btrim(%(email)s)) END

-- name: user_sign_in
SELECT public.app_user_sign_in(%(email)s, %(email_verified)s) AS id

-- name: portal_access_list
-- The caller's portals (one when %(portal_id)s is set), with the caller's role in each.
SELECT p.id, p.name, p.owner_id, p.created_at, p.token_rejected_at,
       coalesce(m.role::text, 'owner') AS role
FROM public.portals AS p
LEFT JOIN public.portal_members AS m
       ON m.portal_id = p.id AND m.user_id = public.current_app_user()
WHERE %(portal_id)s::bigint IS NULL OR p.id = %(portal_id)s
ORDER BY p.id

-- name: portal_connect
-- No row back when the id is taken (by anyone: HubSpot portal ids are global). The insert
-- trigger makes the owner a member.
INSERT INTO public.portals (id, name, owner_id, token_encrypted, time_zone)
VALUES (%(portal_id)s, %(name)s, public.current_app_user(), %(token_encrypted)s,
        %(time_zone)s)
ON CONFLICT (id) DO NOTHING
RETURNING id, name, owner_id, created_at, token_rejected_at, 'owner' AS role

-- name: portal_reconnect
-- A new name, token and time zone for a portal the caller owns; no row back otherwise (a
-- member who is not the owner may not reconnect it). Members stay as the owner left them.
-- The new token clears the mark of a refused one.
UPDATE public.portals
SET name = %(name)s, token_encrypted = %(token_encrypted)s, time_zone = %(time_zone)s,
    token_rejected_at = NULL
WHERE id = %(portal_id)s AND owner_id = public.current_app_user()
RETURNING id, name, owner_id, created_at, token_rejected_at, 'owner' AS role

-- name: portal_delete
-- Only the owner's delete passes the portals_app_delete_owner policy
-- (migrations/functions/security.sql).
DELETE FROM public.portals WHERE id = %(portal_id)s RETURNING id

-- name: portal_tokens_batch
-- The next stored tokens after portal %(after)s, by id (a keyset: a rotation resumes from
-- wherever it stopped), locked until the batch's transaction ends: a reconnect meanwhile waits,
-- then stores its own token.
SELECT id, token_encrypted FROM public.portals
WHERE id > %(after)s AND token_encrypted IS NOT NULL
ORDER BY id
LIMIT %(limit)s
FOR UPDATE

-- name: portal_tokens_page
-- The stored tokens after portal %(after)s, by id, as they are now: the rotation's check reads
-- them without holding anyone up.
SELECT id, token_encrypted FROM public.portals
WHERE id > %(after)s AND token_encrypted IS NOT NULL
ORDER BY id
LIMIT %(limit)s

-- name: portal_tokens_replace
-- New ciphertexts for tokens of the batch locked above; the ids of the portals changed.
UPDATE public.portals AS p SET token_encrypted = t.token_encrypted
FROM unnest(%(ids)s::bigint[], %(tokens)s::bytea[]) AS t (id, token_encrypted)
WHERE p.id = t.id
RETURNING p.id

-- name: portal_page
-- Portals by id, %(limit)s of them after %(after_id)s (NULL: from the first), with the owner's
-- email, how many members the portal has (the owner too) and whether a token is stored (never
-- the token).
SELECT p.id, p.name, p.owner_id, u.email AS owner_email, p.created_at,
       p.token_encrypted IS NOT NULL AS has_token, p.token_rejected_at,
       (SELECT count(*) FROM public.portal_members AS m WHERE m.portal_id = p.id) AS members
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

-- name: portal_token_for_member
-- The encrypted token of a portal the user in app.user_id may see (`portal_token_for_member`):
-- for counting its types when that user starts a fetch. No row for anyone else's portal.
SELECT token_encrypted FROM public.portal_token_for_member(%(portal_id)s)

-- name: portal_token_for_operator
-- The same for the operator (the login role; `portal_token_for_operator`).
SELECT token_encrypted FROM public.portal_token_for_operator(%(portal_id)s)

-- name: portal_mark_token_refused
-- HubSpot refused the portal's token (mark_portal_token_refused): true when the caller may
-- mark it (the operator, or a member of the portal).
SELECT public.mark_portal_token_refused(%(portal_id)s)

-- name: portal_token_refused
-- A job's 401, under its live lease (fail_run_token_refused): the jobs of its run failed.
SELECT * FROM public.fail_run_token_refused(%(job_id)s, %(lease_token)s, %(error)s,
                                            %(error_public)s, %(now)s)
