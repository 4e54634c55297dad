-- An object's first version is its row of content_items until it is superseded: a first sync
-- writes each object once (the row), not the row and a version beside it. content_items
-- carries the object's current version number (`version`) and the version its insertion
-- began: its key in the changes feed, its run and the moment it was recorded
-- (`first_version_id`, `first_version_run`, `first_version_at`). The row holds version 1
-- while `version` is 1 and `first_version_id` is set; once superseded, version 1 moves into
-- content_versions and these columns are left as they were (rewriting them would move the
-- row's entry of content_items_first_version_idx, and an update would no longer be HOT). The triggers of content history (content_history_begin,
-- content_history_inserted, content_history_updated, content_history_removed) keep them.
--
-- Existing rows are converted: every object takes the number of its newest version, and an
-- object whose only version is the current first one, holding the row's hash, moves it into
-- its row (that version leaves content_versions).

SET LOCAL ROLE smuves_owner;

ALTER TABLE public.content_items
    ADD COLUMN version integer,
    ADD COLUMN first_version_id bigint,
    ADD COLUMN first_version_run bigint,
    ADD COLUMN first_version_at timestamp with time zone;

-- The feed key of a first version kept in its row comes from content_versions' own sequence,
-- so that it keeps its place in the changes feed when it moves there.
ALTER TABLE public.content_items
    ALTER COLUMN first_version_id SET DEFAULT nextval('public.content_versions_id_seq'::regclass),
    ALTER COLUMN first_version_at SET DEFAULT now();

-- No history trigger fires for these statements: they change none of the columns that begin
-- a version, and remove no row.
WITH history AS (
    SELECT v.portal_id, v.content_type, v.hubspot_id, max(v.version) AS version,
           count(*) AS versions
    FROM public.content_versions AS v
    GROUP BY v.portal_id, v.content_type, v.hubspot_id
)
UPDATE public.content_items AS c
SET version = h.version
FROM history AS h
WHERE c.portal_id = h.portal_id AND c.content_type = h.content_type
  AND c.hubspot_id = h.hubspot_id;

-- Rows with no history at all (stored while no history was kept): their row is version 1.
UPDATE public.content_items AS c
SET version = 1, first_version_id = nextval('public.content_versions_id_seq'::regclass),
    first_version_run = NULL, first_version_at = c.changed_at
WHERE c.version IS NULL;

-- A lone current first version whose event the row implies (created: live; deleted: marked
-- deleted) and whose document the row holds.
WITH moved AS (
    UPDATE public.content_items AS c
    SET first_version_id = v.id, first_version_run = v.seen_from_run,
        first_version_at = v.recorded_at
    FROM public.content_versions AS v
    WHERE c.version = 1 AND c.first_version_id IS NULL
      AND v.portal_id = c.portal_id AND v.content_type = c.content_type
      AND v.hubspot_id = c.hubspot_id AND v.version = 1 AND v.superseded_at IS NULL
      AND v.hash IS NOT DISTINCT FROM c.content_hash
      AND v.event = CASE WHEN c.deleted_at IS NULL THEN 'created' ELSE 'deleted' END
    RETURNING v.portal_id, v.content_type, v.hubspot_id
)
DELETE FROM public.content_versions AS v
USING moved AS m
WHERE v.portal_id = m.portal_id AND v.content_type = m.content_type
  AND v.hubspot_id = m.hubspot_id AND v.version = 1;

ALTER TABLE public.content_items ALTER COLUMN version SET NOT NULL;
-- A row is stored whole in its page up to 4 KB (the default moves the document into TOAST past
-- 2 KB): with its promoted columns beside it, a quarter of the 2.4 KB documents of a portal,
-- compressed, passed 2 KB, and each cost a TOAST row and its index entry more than the
-- document alone in a table of its own.
ALTER TABLE public.content_items SET (toast_tuple_target = 4080);
ALTER TABLE public.content_items
    ADD CONSTRAINT content_items_version_positive CHECK ((version > 0));

-- The changes feed walks the first versions kept in rows in its own order. No update moves
-- an entry: the columns are written once, by the insertion.
CREATE INDEX content_items_first_version_idx ON public.content_items
    USING btree (portal_id, first_version_at, first_version_id);

-- Every version of every object: those kept in content_versions and the first versions kept
-- in their rows, with the same columns (a first version in its row has no document of its
-- own: it is its row's data). What reads history reads this; a column that travels with a
-- version is added to both tables and here.
CREATE VIEW public.content_history WITH (security_invoker = true) AS
SELECT v.portal_id, v.content_type, v.hubspot_id, v.version, v.event, v.hash, v.document,
       v.seen_from_run, v.seen_until_run, v.recorded_at, v.superseded_at, v.id
FROM public.content_versions AS v
UNION ALL
SELECT c.portal_id, c.content_type, c.hubspot_id, c.version,
       (CASE WHEN c.deleted_at IS NULL THEN 'created' ELSE 'deleted' END)::public.content_event,
       c.content_hash, NULL::jsonb, c.first_version_run, NULL::bigint, c.first_version_at,
       NULL::timestamp with time zone, c.first_version_id
FROM public.content_items AS c
WHERE c.version = 1 AND c.first_version_id IS NOT NULL;

GRANT SELECT ON TABLE public.content_history TO smuves_app;

-- The API reads the versions of its users' objects; a worker's upsert begins an object's
-- history in its row, with a key of the changes feed (and the run whose fetch is in flight:
-- content_history_run, granted with it).
GRANT SELECT (version, first_version_id, first_version_run, first_version_at)
    ON TABLE public.content_items TO smuves_app;
GRANT USAGE ON SEQUENCE public.content_versions_id_seq TO smuves_worker;
-- Only the triggers write where a version stands: a worker names neither a first version's
-- key nor its time (their defaults), and rewrites none of the version columns
-- (content_history_inserted corrects a number or run an INSERT got wrong).
REVOKE INSERT, UPDATE ON TABLE public.content_items FROM smuves_worker;
GRANT INSERT (portal_id, content_type, hubspot_id, name, slug, url, state, language,
              hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run,
              changed_run, changed_at, translated_from_id, version, first_version_run)
    ON TABLE public.content_items TO smuves_worker;
GRANT UPDATE (portal_id, content_type, hubspot_id, name, slug, url, state, language,
              hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run,
              changed_run, changed_at, translated_from_id)
    ON TABLE public.content_items TO smuves_worker;

-- Replaced by content_history_end, which also moves a first version out of its row.
DROP FUNCTION IF EXISTS public.content_history_close(bigint, text, text, text, jsonb, boolean, bigint);

RESET ROLE;
