-- Write-back, its first half: exports made for editing, and changesets (a spreadsheet's edits
-- compared with the stored versions they were made from, kept as items until they are pushed).
--
-- changesets: one import (or a rollback of an earlier changeset) of one portal. The API
-- inserts them as the member who imports; only an owner or editor of the portal may
-- (policies changesets_app_editor_insert, in functions/security.sql).
-- changeset_items: one object's changed cells, `fields` (top-level field or `values.<column>`
-- -> the new value) and `before` (the same keys -> the base version's values), only cells
-- that differ from the base. The composite foreign key to changesets (id, portal_id) keeps an
-- item in its changeset's portal: an item naming another portal's changeset, or its own
-- changeset with another portal, is refused by the database whatever the caller.

SET LOCAL ROLE smuves_owner;

CREATE TABLE public.changesets (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    portal_id bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    owner_id uuid REFERENCES public.app_users (id) ON UPDATE CASCADE ON DELETE SET NULL,
    -- NULL when the items span types (a rollback of such a changeset).
    content_type public.content_type,
    source text NOT NULL,
    rolls_back bigint,
    filename text,
    status text NOT NULL DEFAULT 'draft',
    publish text,
    -- The push's run.
    run_id bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    pushed_at timestamptz,
    CONSTRAINT changesets_id_portal_id_key UNIQUE (id, portal_id),
    CONSTRAINT changesets_source_known CHECK (source IN ('import', 'rollback')),
    CONSTRAINT changesets_status_known CHECK (status IN ('draft', 'pushing', 'pushed')),
    CONSTRAINT changesets_publish_known CHECK (publish IN ('live', 'draft')),
    -- A rollback names the changeset it undoes, of the same portal; an import names none.
    CONSTRAINT changesets_rolls_back_rollback CHECK ((source = 'rollback') = (rolls_back IS NOT NULL)),
    CONSTRAINT changesets_rolls_back_fkey FOREIGN KEY (rolls_back, portal_id)
        REFERENCES public.changesets (id, portal_id) ON DELETE CASCADE,
    CONSTRAINT changesets_filename_short CHECK (length(filename) <= 255)
);

CREATE INDEX changesets_portal_created_idx ON public.changesets (portal_id, created_at DESC);

CREATE TABLE public.changeset_items (
    changeset_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text NOT NULL,
    -- The stored version the row was made from (content_versions.version), and HubSpot's own
    -- `updated`/`updatedAt` text of it; NULL when the row named no object we hold.
    base_version integer,
    base_updated text,
    fields jsonb NOT NULL DEFAULT '{}',
    before jsonb NOT NULL DEFAULT '{}',
    state text NOT NULL,
    reason text,
    warnings text[] NOT NULL DEFAULT '{}',
    -- The stored version the push produced, and when it was verified.
    applied_version integer,
    applied_at timestamptz,
    PRIMARY KEY (changeset_id, content_type, hubspot_id),
    CONSTRAINT changeset_items_changeset_fkey FOREIGN KEY (changeset_id, portal_id)
        REFERENCES public.changesets (id, portal_id) ON DELETE CASCADE,
    CONSTRAINT changeset_items_state_known CHECK (
        state IN ('pending', 'unchanged', 'invalid', 'applied', 'conflict', 'failed', 'held')),
    CONSTRAINT changeset_items_hubspot_id_present CHECK (hubspot_id <> ''),
    CONSTRAINT changeset_items_fields_object CHECK (jsonb_typeof(fields) = 'object'),
    CONSTRAINT changeset_items_before_object CHECK (jsonb_typeof(before) = 'object')
);

ALTER TABLE public.changesets ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.changesets FORCE ROW LEVEL SECURITY;
ALTER TABLE public.changeset_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.changeset_items FORCE ROW LEVEL SECURITY;

-- The API: reads the changesets of its user's portals; inserts them and their items (the
-- policies let only an owner or editor, as the changeset's owner, with items not yet pushed).
GRANT SELECT ON public.changesets TO smuves_app;
GRANT INSERT (portal_id, owner_id, content_type, source, rolls_back, filename)
    ON public.changesets TO smuves_app;
GRANT SELECT ON public.changeset_items TO smuves_app;
GRANT INSERT (changeset_id, portal_id, content_type, hubspot_id, base_version, base_updated,
              fields, before, state, reason, warnings)
    ON public.changeset_items TO smuves_app;

-- An export for editing: its columns are the type's editable fields (`fields`: a chosen few of
-- them, NULL: all), after the object's id, stored version and HubSpot's updated text.
ALTER TABLE public.exports ADD COLUMN edit boolean NOT NULL DEFAULT false;
ALTER TABLE public.exports ADD COLUMN fields text[];
ALTER TABLE public.exports ADD CONSTRAINT exports_edit_csv
    CHECK (NOT edit OR format = 'csv');
ALTER TABLE public.exports ADD CONSTRAINT exports_fields_edit
    CHECK (fields IS NULL OR edit);
GRANT INSERT (edit, fields) ON public.exports TO smuves_app;

-- The edit export's worker reads each object's current version number, under its lease
-- (content_versions_worker_lease_select), and nothing else of the history.
GRANT SELECT (portal_id, content_type, hubspot_id, version) ON public.content_versions
    TO smuves_worker;

RESET ROLE;
