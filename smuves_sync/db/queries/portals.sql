-- Portals, their owners and members (smuves_sync/db/portals.py). The login role writes
-- portals for `smuves portal add`; the API's statements run as smuves_app inside
-- `Database.as_user`, where row-level security limits them to the caller's portals.

-- name: portal_get
SELECT id, name, owner_id, created_at FROM public.portals WHERE id = %(portal_id)s

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
-- change of hands is portal_transfer).
INSERT INTO public.portals AS p (id, name, owner_id, token_encrypted, time_zone)
VALUES (%(portal_id)s, %(name)s, %(owner_id)s, %(token_encrypted)s, %(time_zone)s)
ON CONFLICT (id) DO UPDATE
SET name = excluded.name, token_encrypted = excluded.token_encrypted,
    time_zone = excluded.time_zone
RETURNING id, name, owner_id, created_at

-- name: portal_transfer
-- The portal to its new owner, who becomes its only member (transfer_portal, 0007); the
-- emails of the people who lost it.
SELECT email FROM public.transfer_portal(%(portal_id)s, %(owner_id)s)

-- name: app_user_ensure
-- The user with this email (compared lower-cased, as app_users stores it), created when
-- missing: `invited` (the first sign-in that verifies the email takes the row over) or not.
-- DO UPDATE so RETURNING has the row; an existing row keeps what it is.
INSERT INTO public.app_users (email, invited) VALUES (lower(btrim(%(email)s)), %(invited)s)
ON CONFLICT (email) DO UPDATE SET email = excluded.email
RETURNING id

-- name: user_sign_in
SELECT public.app_user_sign_in(%(email)s, %(email_verified)s) AS id

-- name: portal_access_list
-- The caller's portals (one when %(portal_id)s is set), with the caller's role in each.
SELECT p.id, p.name, p.owner_id, p.created_at,
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
RETURNING id, name, owner_id, created_at, 'owner' AS role

-- name: portal_reconnect
-- A new name, token and time zone for a portal the caller owns; no row back otherwise (a
-- member who is not the owner may not reconnect it). Members stay as the owner left them.
UPDATE public.portals
SET name = %(name)s, token_encrypted = %(token_encrypted)s, time_zone = %(time_zone)s
WHERE id = %(portal_id)s AND owner_id = public.current_app_user()
RETURNING id, name, owner_id, created_at, 'owner' AS role

-- name: portal_delete
-- Only the owner's delete passes the portals_app_delete_owner policy (migrations/0008).
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

-- name: portal_tokens_replace
-- New ciphertexts for tokens of the batch locked above; the ids of the portals changed.
UPDATE public.portals AS p SET token_encrypted = t.token_encrypted
FROM unnest(%(ids)s::bigint[], %(tokens)s::bytea[]) AS t (id, token_encrypted)
WHERE p.id = t.id
RETURNING p.id
