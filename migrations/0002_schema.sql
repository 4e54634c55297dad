-- Tables of DESIGN §3. Words the database knows are domains over text, so a bad value is
-- refused with the domain's name in the message.

SET LOCAL ROLE smuves_owner;

-- Content types. The database's list of them is the table content_types, filled by
-- migrations: this one adds the first five, and a new type is one more migration,
--     INSERT INTO public.content_types (name) VALUES ('blog_tag');
-- beside one more member of ContentType in smuves_sync/content_types.py (the list in Python).
-- The columns that hold a type (jobs, content_items and exports; the arrays of runs and
-- schedules) are of the domain content_type, whose CHECK constraint content_type_known the
-- trigger below generates from the table whenever names are added.
--
-- A CHECK generated from the list rather than foreign keys to it: a foreign key cannot
-- reach into the arrays of runs and schedules, and on content_items, where every object a
-- fetch stores is written, it would cost a look-up and a KEY SHARE lock on a row of a
-- five-row table per object, which concurrent fetches turn into contention on those rows;
-- a CHECK against a literal list costs nothing beyond the row itself. The constraint is
-- added NOT VALID because Postgres cannot re-check a domain used by array columns, and a
-- list that only grows needs no re-check of the rows. So names are only ever added (the
-- rows of a retired type stay valid history): the table refuses UPDATE, DELETE, TRUNCATE.
CREATE TABLE public.content_types (
    name  text PRIMARY KEY CONSTRAINT content_types_name_word CHECK (name ~ '^[a-z][a-z0-9_]*$')
);

CREATE DOMAIN public.content_type AS text;

CREATE FUNCTION public.content_types_constrain_domain() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        ALTER DOMAIN public.content_type DROP CONSTRAINT IF EXISTS content_type_known;
        EXECUTE pg_catalog.format(
            'ALTER DOMAIN public.content_type ADD CONSTRAINT content_type_known '
            'CHECK (VALUE IN (%s)) NOT VALID',
            (SELECT string_agg(pg_catalog.quote_literal(t.name), ', ' ORDER BY t.name)
             FROM public.content_types AS t));
        RETURN NULL;
    END
    $$;
CREATE TRIGGER content_types_constrain_domain AFTER INSERT ON public.content_types
    FOR EACH STATEMENT EXECUTE FUNCTION public.content_types_constrain_domain();

CREATE FUNCTION public.content_types_only_grow() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        RAISE EXCEPTION 'content types are only ever added (% refused): rows of every type '
                        'ever listed stay valid', TG_OP
            USING ERRCODE = 'feature_not_supported';
    END
    $$;
CREATE TRIGGER content_types_only_grow BEFORE UPDATE OR DELETE OR TRUNCATE
    ON public.content_types
    FOR EACH STATEMENT EXECUTE FUNCTION public.content_types_only_grow();

INSERT INTO public.content_types (name)
VALUES ('site_page'), ('landing_page'), ('blog_post'), ('hubdb_table'), ('hubdb_row');

CREATE DOMAIN public.job_kind AS text
    CONSTRAINT job_kind_known CHECK (VALUE IN ('fetch', 'export'));

CREATE DOMAIN public.job_status AS text
    CONSTRAINT job_status_known
    CHECK (VALUE IN ('pending', 'running', 'completed', 'failed', 'stopped'));

CREATE DOMAIN public.run_status AS text
    CONSTRAINT run_status_known
    CHECK (VALUE IN ('pending', 'running', 'completed', 'partially_failed', 'failed', 'stopped'));

CREATE DOMAIN public.export_format AS text
    CONSTRAINT export_format_known CHECK (VALUE IN ('csv', 'jsonl'));

CREATE DOMAIN public.member_role AS text
    CONSTRAINT member_role_known CHECK (VALUE IN ('owner', 'editor', 'viewer'));

-- An email is stored in one form, lower case (the database's lower(), wherever it comes from),
-- so that Alice@Corp.example and alice@corp.example are one person. `invited`: a row the
-- operator made for an email (`smuves portal add --owner`) that nobody has signed in as yet;
-- the first sign-in whose token vouches for that email (email_verified) takes the row over,
-- id and all (the references follow: ON UPDATE CASCADE).
CREATE TABLE public.app_users (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email       text NOT NULL UNIQUE
                CONSTRAINT app_users_email_shape CHECK (email ~ '^[^@\s]+@[^@\s]+$')
                CONSTRAINT app_users_email_lower CHECK (email = lower(email)),
    invited     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- id is HubSpot's portal id (hub id): a natural key the operator types on the command line.
-- It is public (every HubSpot site embeds its own), so a portal is connected only with a
-- token HubSpot says belongs to it (its account details), which also give `time_zone`: the
-- portal's DAILY API limit resets at midnight there. An IANA name, e.g. US/Eastern.
CREATE TABLE public.portals (
    id               bigint PRIMARY KEY CONSTRAINT portals_id_positive CHECK (id > 0),
    name             text NOT NULL DEFAULT '',
    owner_id         uuid NOT NULL REFERENCES public.app_users (id) ON UPDATE CASCADE,
    token_encrypted  bytea,
    time_zone        text NOT NULL DEFAULT 'UTC'
                     CONSTRAINT portals_time_zone_name
                     CHECK (length(time_zone) <= 64
                            AND time_zone ~ '^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$'),
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE public.portal_members (
    portal_id   bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES public.app_users (id) ON UPDATE CASCADE ON DELETE CASCADE,
    role        public.member_role NOT NULL DEFAULT 'viewer',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (portal_id, user_id)
);
CREATE INDEX portal_members_user_idx ON public.portal_members (user_id);

CREATE TABLE public.runs (
    id             bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    portal_id      bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    owner_id       uuid REFERENCES public.app_users (id) ON UPDATE CASCADE ON DELETE SET NULL,
    kind           public.job_kind NOT NULL,
    status         public.run_status NOT NULL DEFAULT 'pending',
    content_types  public.content_type[] NOT NULL
                   CONSTRAINT runs_content_types_present CHECK (cardinality(content_types) > 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    started_at     timestamptz,
    finished_at    timestamptz,
    -- target of the (run_id, portal_id) foreign keys: a job can only belong to its run's portal
    UNIQUE (id, portal_id)
);
CREATE INDEX runs_portal_created_idx ON public.runs (portal_id, created_at DESC);
CREATE INDEX runs_open_idx ON public.runs (id) WHERE status IN ('pending', 'running');

CREATE TABLE public.jobs (
    id               bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id           bigint NOT NULL,
    portal_id        bigint NOT NULL,
    kind             public.job_kind NOT NULL,
    content_type     public.content_type NOT NULL,
    status           public.job_status NOT NULL DEFAULT 'pending',
    attempts         integer NOT NULL DEFAULT 0 CONSTRAINT jobs_attempts_nonnegative CHECK (attempts >= 0),
    max_attempts     integer NOT NULL DEFAULT 3 CONSTRAINT jobs_max_attempts_positive CHECK (max_attempts >= 1),
    run_after        timestamptz NOT NULL DEFAULT now(),
    locked_at        timestamptz,
    locked_by        text,
    lease_token      uuid,
    heartbeat_at     timestamptz,
    total            bigint CONSTRAINT jobs_total_nonnegative CHECK (total >= 0),
    processed        bigint NOT NULL DEFAULT 0 CONSTRAINT jobs_processed_nonnegative CHECK (processed >= 0),
    cursor           text,
    -- What went wrong last, for the operators: the error as it was raised, hosts, paths and
    -- all. The portal's users are told last_error_public instead: what kind of failure, what
    -- to do about it, HubSpot's correlation id; never a host, port, statement or file path.
    last_error       text,
    last_error_public text,
    idempotency_key  text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    FOREIGN KEY (run_id, portal_id) REFERENCES public.runs (id, portal_id) ON DELETE CASCADE,
    -- a running job always has a live lease to expire, fence and extend
    CONSTRAINT jobs_running_has_lease CHECK (
        status <> 'running'
        OR (lease_token IS NOT NULL AND locked_at IS NOT NULL AND heartbeat_at IS NOT NULL)
    )
);
-- A change of a job's status can never be a HOT update (status is in the predicates below):
-- the new row version gets an entry in the primary key, jobs_run_idx and each partial index
-- whose predicate it matches. Hence few indexes, and partial ones.
--
-- Claims walk this small index of pending jobs, oldest first.
CREATE INDEX jobs_claimable_idx ON public.jobs (run_after, id) WHERE status = 'pending';
-- Stale-lease reclaim looks only at running jobs, by last sign of life. `heartbeat_at IS NOT
-- NULL` adds nothing (a running job has a heartbeat, see jobs_running_has_lease) but keeps
-- the index to the statements that compare heartbeat_at: a fenced statement that finds its
-- job by id and `status = 'running'` would otherwise be planned as a walk over every running
-- job whenever the statistics were taken while none ran (an idle queue).
CREATE INDEX jobs_lease_idx ON public.jobs (heartbeat_at)
    WHERE status = 'running' AND heartbeat_at IS NOT NULL;
-- Dedup: no two in-flight jobs of one portal, kind and content type, race-free.
CREATE UNIQUE INDEX jobs_in_flight_uniq ON public.jobs (portal_id, kind, content_type)
    WHERE status IN ('pending', 'running');
CREATE INDEX jobs_run_idx ON public.jobs (run_id);
-- Most jobs have no idempotency key: NULLs stay out of the index, so a state change of such
-- a job writes one index entry fewer. ON CONFLICT DO NOTHING still sees it.
CREATE UNIQUE INDEX jobs_idempotency_key_uniq ON public.jobs (idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE TABLE public.content_items (
    portal_id           bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    content_type        public.content_type NOT NULL,
    -- HubDB rows use '<table_id>:<row_id>'
    hubspot_id          text NOT NULL CONSTRAINT content_items_hubspot_id_present CHECK (hubspot_id <> ''),
    name                text,
    slug                text,
    url                 text,
    state               text,
    language            text,
    hubspot_updated_at  timestamptz,
    archived            boolean NOT NULL DEFAULT false,
    deleted_at          timestamptz,
    data                jsonb NOT NULL,
    -- of the document as the fetch sent it; an equal hash means the document is kept as is
    content_hash        text,
    -- A row is written only when something a user can see changed (content_upsert_page): the
    -- document (its hash), a promoted field, the archived flag or the deletion mark. So these
    -- move with the content, never on a sync that found it unchanged: the run that first saw
    -- the object, the run that last changed its row and when. "When was this last confirmed"
    -- is not a column here, rewritten on every object by every sync: it is the last completed
    -- fetch of the portal and type, one row in content_syncs (0006_sync_runs.sql).
    -- The run ids are history, not references. A foreign key would cost two lookups in runs
    -- for every object stored, and pruning a run would scan this whole table for rows to
    -- update (no index on these columns).
    first_seen_run      bigint,
    changed_run         bigint,
    changed_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (portal_id, content_type, hubspot_id)
)
-- HOT. The primary key is the table's only index here (0012 adds a partial one on
-- translated_from_id, which an ordinary sync does not change), and no column an ordinary sync
-- changes is in one (nor may one be: an index on a column that changes makes every update of
-- it write a new index entry). So an update of a changed object is HOT (its new version on the same
-- page, no index entry, the old one pruned without vacuum) when the page has room. Pages
-- filled to 80 % keep that room: measured with scripts/bench_sync.py --resync, a re-sync after
-- 10 % of 5,339 objects changed made 5 % of its updates HOT at the default fillfactor (100),
-- 37 % at 90, 66 % at 80 and 96 % at 70, for a table 0 %, 10 %, 21 % and 35 % larger.
WITH (fillfactor = 80);
-- Documents are compressed with lz4 rather than pglz: pglz costs Postgres about a third more
-- CPU per stored ~2.4 KB document, and reading back is faster too. A server built without
-- lz4 keeps pglz; everything works the same, only slower.
DO $$
BEGIN
    ALTER TABLE public.content_items ALTER COLUMN data SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available on this server; content_items.data stays pglz';
END
$$;

CREATE TABLE public.exports (
    id            bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id        bigint NOT NULL,
    portal_id     bigint NOT NULL,
    content_type  public.content_type NOT NULL,
    format        public.export_format NOT NULL,
    status        public.job_status NOT NULL DEFAULT 'pending',
    path          text,
    row_count     bigint CONSTRAINT exports_row_count_nonnegative CHECK (row_count >= 0),
    bytes         bigint CONSTRAINT exports_bytes_nonnegative CHECK (bytes >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    FOREIGN KEY (run_id, portal_id) REFERENCES public.runs (id, portal_id) ON DELETE CASCADE,
    UNIQUE (run_id, content_type, format)
);
CREATE INDEX exports_portal_idx ON public.exports (portal_id, created_at DESC);

CREATE TABLE public.notifications (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    user_id     uuid NOT NULL REFERENCES public.app_users (id) ON UPDATE CASCADE ON DELETE CASCADE,
    run_id      bigint REFERENCES public.runs (id) ON DELETE CASCADE,
    kind        text NOT NULL CONSTRAINT notifications_kind_word CHECK (kind ~ '^[a-z][a-z_]*$'),
    message     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    read_at     timestamptz
);
CREATE INDEX notifications_user_idx ON public.notifications (user_id, created_at DESC);

CREATE TABLE public.schedules (
    id               bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    portal_id        bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    owner_id         uuid REFERENCES public.app_users (id) ON UPDATE CASCADE ON DELETE SET NULL,
    cron_expression  text NOT NULL,
    content_types    public.content_type[] NOT NULL
                     CONSTRAINT schedules_content_types_present CHECK (cardinality(content_types) > 0),
    enabled          boolean NOT NULL DEFAULT true,
    next_run_at      timestamptz,
    last_run_at      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedules_due_idx ON public.schedules (next_run_at) WHERE enabled;
