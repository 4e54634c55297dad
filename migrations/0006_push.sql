-- Pushing a changeset to HubSpot: the job kind `push`, its lease, the intents a push commits
-- before each write, and which changeset made a stored version.
--
-- A push job works one content type of one changeset (workers/push.py). Before each batch is
-- sent, its intent is committed (push_intents): a worker killed after that, or a write whose
-- answer was lost, leaves the intent open, and whoever works the job next decides it by
-- reading the objects back, never by sending it again blindly. Item states are written by the
-- worker only under the live lease of a push job of the changeset's run (the policies in
-- functions/push.sql); its versions are marked through push_versions_attribute.

SET LOCAL ROLE smuves_owner;

ALTER DOMAIN public.job_kind DROP CONSTRAINT job_kind_known;
ALTER DOMAIN public.job_kind ADD CONSTRAINT job_kind_known
    CHECK ((VALUE = ANY (ARRAY['fetch'::text, 'export'::text, 'push'::text])));

INSERT INTO public.job_leases (kind, lease) VALUES ('push', '2 minutes');
-- job_lease_expired takes the push lease too (functions/queue.sql makes it again).
DROP FUNCTION IF EXISTS public.job_lease_expired(public.jobs, timestamp with time zone, interval, interval);

ALTER TABLE public.workers DROP CONSTRAINT workers_kinds_known;
ALTER TABLE public.workers ADD CONSTRAINT workers_kinds_known
    CHECK (((cardinality(kinds) > 0) AND (kinds <@ ARRAY['fetch'::text, 'export'::text, 'push'::text])));

-- One batch of a push job: committed as `intended` before it is sent, `sent` once HubSpot
-- answered, `decided` in the transaction that settles its items' states.
CREATE TABLE public.push_intents (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    portal_id bigint NOT NULL,
    changeset_id bigint NOT NULL,
    job_id bigint NOT NULL REFERENCES public.jobs (id) ON DELETE CASCADE,
    content_type public.content_type NOT NULL,
    hubspot_ids text[] NOT NULL,
    -- HubSpot's `updated` of each object as read just before the write (NULL: not read):
    -- an object still showing it after a lost answer was changed by nobody since.
    seen_updated text[] NOT NULL,
    state text DEFAULT 'intended' NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_at timestamp with time zone,
    CONSTRAINT push_intents_state_known CHECK ((state = ANY (ARRAY['intended'::text, 'sent'::text, 'decided'::text]))),
    CONSTRAINT push_intents_ids_sensible CHECK (((cardinality(hubspot_ids) >= 1) AND (cardinality(hubspot_ids) <= 100) AND (cardinality(seen_updated) = cardinality(hubspot_ids)))),
    CONSTRAINT push_intents_changeset_fkey FOREIGN KEY (changeset_id, portal_id)
        REFERENCES public.changesets (id, portal_id) ON DELETE CASCADE
);
CREATE INDEX push_intents_open_idx ON public.push_intents USING btree (changeset_id, content_type)
    WHERE (state <> 'decided'::text);
CREATE INDEX push_intents_job_idx ON public.push_intents USING btree (job_id);
ALTER TABLE public.push_intents ENABLE ROW LEVEL SECURITY;
ALTER TABLE ONLY public.push_intents FORCE ROW LEVEL SECURITY;

GRANT SELECT, INSERT ON TABLE public.push_intents TO smuves_worker;
GRANT UPDATE (state, decided_at) ON TABLE public.push_intents TO smuves_worker;

-- Which changeset's push produced a version (NULL: a fetch, or a write by hand).
ALTER TABLE public.content_versions ADD COLUMN changeset_id bigint;

-- What a push job reads of its changeset, and the item columns it settles.
GRANT SELECT ON TABLE public.changesets TO smuves_worker;
GRANT SELECT ON TABLE public.changeset_items TO smuves_worker;
GRANT UPDATE (state, reason, applied_version, applied_at) ON TABLE public.changeset_items
    TO smuves_worker;
