-- operator_actions (smuves_sync/db/operator_actions.py): the audit trail of
-- the dashboard's buttons, written and read as the login role.

-- name: operator_action_record
INSERT INTO public.operator_actions (actor, client, session, action, target, outcome)
VALUES (%(actor)s, %(client)s, %(session)s, %(action)s, %(target)s, %(outcome)s)
RETURNING id, at, actor, client, session, action, target, outcome

-- name: operator_action_recent
SELECT id, at, actor, client, session, action, target, outcome
FROM public.operator_actions
ORDER BY id DESC
LIMIT %(limit)s
