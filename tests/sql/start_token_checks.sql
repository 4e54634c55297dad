-- Checks of the token functions of migrations/functions/portals.sql (tests/integration/test_start_tokens.py).

-- name: start_token_as_user
-- A caller that names a user by hand and asks, as plain SQL does.
SELECT pg_catalog.set_config('app.user_id', %(user_id)s::text, true) AS set_user,
       (SELECT t.token_encrypted FROM public.portal_token_for_member(%(portal_id)s) AS t)
           AS token_encrypted

-- name: start_token_may_execute
-- Which of the smuves roles may execute each token function (portal_token_for_member, portal_token_for_operator).
SELECT f.name, r.role,
       pg_catalog.has_function_privilege(r.role, f.name || '(bigint)', 'EXECUTE') AS may
FROM (VALUES ('public.portal_token_for_member'), ('public.portal_token_for_operator')) AS f (name)
CROSS JOIN (VALUES ('smuves_app'), ('smuves_worker')) AS r (role)
ORDER BY f.name, r.role
