-- Portals, their owners and members (smuves_sync/db/portals.py).

-- name: portal_by_id
SELECT id, name, owner_id, created_at FROM public.portals WHERE id = %(portal_id)s

-- name: app_user_ensure
-- The user with this email, created when missing (DO UPDATE so RETURNING has the row).
INSERT INTO public.app_users (email) VALUES (%(email)s)
ON CONFLICT (email) DO UPDATE SET email = excluded.email
RETURNING id

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
