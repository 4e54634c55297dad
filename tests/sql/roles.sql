-- What the runtime-role tests ask of a connection (tests/integration/test_runtime_roles.py).

-- name: roles_me
SELECT session_user::text AS session_user, current_user::text AS current_user,
       r.rolsuper AS superuser, r.rolbypassrls AS bypassrls, r.rolcreaterole AS createrole,
       r.rolcreatedb AS createdb,
       pg_catalog.pg_has_role(current_user, 'smuves_owner', 'MEMBER') AS may_act_as_owner
FROM pg_catalog.pg_roles AS r WHERE r.rolname = session_user

-- name: roles_settable
-- Every other role this session's login may SET ROLE to.
SELECT r.rolname::text AS name FROM pg_catalog.pg_roles AS r
WHERE r.rolname <> session_user AND pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER')
ORDER BY 1

-- name: roles_set_user
SELECT pg_catalog.set_config('app.user_id', %(user_id)s::text, true)

-- name: roles_portals
SELECT id FROM public.portals ORDER BY id

-- name: roles_portal_members
SELECT portal_id FROM public.portal_members ORDER BY portal_id

-- name: roles_portal_tokens
SELECT id, token_encrypted FROM public.portals

-- name: roles_login_passwords
SELECT rolname::text AS name, rolpassword AS verifier FROM pg_catalog.pg_authid
WHERE rolname IN ('smuves_api_login', 'smuves_worker_login')

-- name: roles_clear_login_password
ALTER ROLE {login} PASSWORD NULL

-- name: roles_schedule_next
SELECT next_run_at FROM public.schedules WHERE id = %(schedule_id)s

-- name: roles_verifiers
-- The stored password verifiers of these logins (pg_authid: superuser only).
SELECT rolname::text AS name, rolpassword AS verifier FROM pg_catalog.pg_authid
WHERE rolname = ANY (%(logins)s::text[])
ORDER BY 1

-- name: roles_drop_login
DROP ROLE IF EXISTS {login}

-- name: roles_create_strong_login
CREATE ROLE {login} LOGIN CREATEDB

-- name: roles_database_access
-- Who may connect to this database: PUBLIC (every login of the server) and the given logins.
SELECT EXISTS (SELECT FROM pg_catalog.pg_database AS d,
                      pg_catalog.aclexplode(coalesce(d.datacl,
                                                     pg_catalog.acldefault('d', d.datdba))) AS a
               WHERE d.datname = pg_catalog.current_database() AND a.grantee = 0
                 AND a.privilege_type = 'CONNECT') AS public,
       array(SELECT l FROM unnest(%(logins)s::text[]) AS l
             WHERE pg_catalog.has_database_privilege(l, pg_catalog.current_database(),
                                                     'CONNECT')
             ORDER BY 1) AS logins
