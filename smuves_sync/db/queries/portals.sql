-- Portals, their owners and members (smuves_sync/db/portals.py). The login role writes
-- portals for `smuves portal add`; the API's statements run as smuves_app inside
-- `Database.as_user`, where row-level security limits them to the caller's portals.

-- name: portal_get
SELECT id, name, owner_id, created_at FROM public.portals WHERE id = %(portal_id)s

-- name: portal_save
-- Add a portal or update its name, owner and token; the insert trigger makes the owner a
-- member, an update does it through portal_owner_member.
INSERT INTO public.portals AS p (id, name, owner_id, token_encrypted)
VALUES (%(portal_id)s, %(name)s, %(owner_id)s, %(token_encrypted)s)
ON CONFLICT (id) DO UPDATE
SET name = excluded.name, owner_id = excluded.owner_id, token_encrypted = excluded.token_encrypted
RETURNING id, name, owner_id, created_at

-- name: portal_owner_member
INSERT INTO public.portal_members (portal_id, user_id, role)
VALUES (%(portal_id)s, %(user_id)s, 'owner')
ON CONFLICT (portal_id, user_id) DO UPDATE SET role = 'owner'

-- name: app_user_ensure
-- The user with this email, created when missing (DO UPDATE so RETURNING has the row).
INSERT INTO public.app_users (email) VALUES (%(email)s)
ON CONFLICT (email) DO UPDATE SET email = excluded.email
RETURNING id

-- name: user_sign_in
SELECT public.app_user_sign_in(%(email)s) AS id

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
INSERT INTO public.portals (id, name, owner_id, token_encrypted)
VALUES (%(portal_id)s, %(name)s, public.current_app_user(), %(token_encrypted)s)
ON CONFLICT (id) DO NOTHING
RETURNING id, name, owner_id, created_at, 'owner' AS role

-- name: portal_reconnect
-- A new name and token for a portal the caller owns; no row back otherwise.
UPDATE public.portals
SET name = %(name)s, token_encrypted = %(token_encrypted)s
WHERE id = %(portal_id)s AND owner_id = public.current_app_user()
RETURNING id, name, owner_id, created_at, 'owner' AS role

-- name: portal_delete
-- Only the owner's delete passes the portals_app_delete_owner policy (migrations/0008).
DELETE FROM public.portals WHERE id = %(portal_id)s RETURNING id
