-- Pushing changesets (smuves_sync/db/push.py): what a push job reads of its changeset, the
-- intents it commits before each write, the states it settles, and the versions it produced.
-- A worker sees only the changeset of the push job whose live lease it holds
-- (push_job_changeset and the policies in migrations/functions/push.sql).

-- name: push_changeset_of_run
SELECT c.id, c.portal_id, coalesce(c.publish, 'live') AS publish
FROM public.changesets AS c
WHERE c.run_id = %(run_id)s AND c.portal_id = %(portal_id)s

-- name: push_items_pending
-- The next pending items of a type, in id order; `after`: the last id of the batch before.
SELECT i.hubspot_id, i.base_updated, i.fields, i.before
FROM public.changeset_items AS i
WHERE i.changeset_id = %(changeset_id)s AND i.content_type = %(content_type)s
  AND i.state = 'pending' AND i.hubspot_id > %(after)s
ORDER BY i.hubspot_id
LIMIT %(limit)s

-- name: push_items_by_id
SELECT i.hubspot_id, i.base_updated, i.fields, i.before
FROM public.changeset_items AS i
WHERE i.changeset_id = %(changeset_id)s AND i.content_type = %(content_type)s
  AND i.state = 'pending' AND i.hubspot_id = ANY (%(hubspot_ids)s::text[])
ORDER BY i.hubspot_id

-- name: push_items_count
-- (items of the type, those still pending)
SELECT count(*) AS items, count(*) FILTER (WHERE i.state = 'pending') AS pending
FROM public.changeset_items AS i
WHERE i.changeset_id = %(changeset_id)s AND i.content_type = %(content_type)s

-- name: push_items_settle
-- The items' new states, each only while still pending (a decided item is never decided
-- again); how many were settled.
UPDATE public.changeset_items AS i
SET state = o.state, reason = o.reason, applied_version = o.applied_version,
    applied_at = CASE WHEN o.state = 'applied' THEN now() END
FROM unnest(%(hubspot_ids)s::text[], %(states)s::text[], %(reasons)s::text[],
            %(versions)s::integer[]) AS o (hubspot_id, state, reason, applied_version)
WHERE i.changeset_id = %(changeset_id)s AND i.content_type = %(content_type)s
  AND i.hubspot_id = o.hubspot_id AND i.state = 'pending'

-- name: push_intent_add
INSERT INTO public.push_intents
    (portal_id, changeset_id, job_id, content_type, hubspot_ids, seen_updated)
VALUES (%(portal_id)s, %(changeset_id)s, %(job_id)s, %(content_type)s, %(hubspot_ids)s,
        %(seen_updated)s::text[])
RETURNING id

-- name: push_intent_mark
UPDATE public.push_intents
SET state = %(state)s, decided_at = CASE WHEN %(state)s = 'decided' THEN now() END
WHERE id = %(intent_id)s

-- name: push_intents_open
-- Batches sent (or about to be) whose outcome nobody decided: a worker died, or an answer was
-- lost. Their ids are decided by reading back.
SELECT p.id, p.hubspot_ids, p.seen_updated
FROM public.push_intents AS p
WHERE p.changeset_id = %(changeset_id)s AND p.content_type = %(content_type)s
  AND p.state <> 'decided'
ORDER BY p.id

-- name: push_versions_attribute
SELECT a.hubspot_id, a.version
FROM public.push_versions_attribute(%(content_type)s, %(hubspot_ids)s::text[]) AS a

-- name: push_start_plan
-- A changeset as its pusher sees it (row-level security: a member of its portal), with the
-- types of its pending items in canonical order, and the run pushing it now, if any.
SELECT c.id, c.portal_id, c.status, c.run_id,
       ARRAY(SELECT DISTINCT i.content_type::text FROM public.changeset_items AS i
             WHERE i.changeset_id = c.id AND i.state = 'pending'
             ORDER BY 1) AS content_types
FROM public.changesets AS c
WHERE c.id = %(changeset_id)s

-- name: push_begin
SELECT public.changeset_push_begin(%(changeset_id)s, %(run_id)s, %(publish)s)

-- name: push_item_states
-- How many items of the changeset are in each state, per type.
SELECT i.content_type::text AS content_type, i.state, count(*) AS items
FROM public.changeset_items AS i
WHERE i.changeset_id = %(changeset_id)s
GROUP BY 1, 2
ORDER BY 1, 2
