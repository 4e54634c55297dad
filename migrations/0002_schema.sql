-- The tables, types, domains, sequences, constraints, indexes and table grants, as the
-- versioned migrations up to the fold had made them (written from that database's catalog),
-- and the rows the code expects from the start: the content types and the default leases.
--
-- Functions, the triggers that call them and the row-level security policies (which call the
-- helpers of functions/security.sql) are not here: they live once each in migrations/functions/,
-- applied after the versioned files (see smuves_sync/db/migrations.py).
--
-- Everything is created as smuves_owner (0001_roles makes the migrating login a member).
-- Row-level security is enabled here on every tenant table; until functions/security.sql has
-- made the policies, no runtime role sees a row of them.

SET LOCAL ROLE smuves_owner;

-- domain content_event
CREATE DOMAIN public.content_event AS text
	CONSTRAINT content_event_known CHECK ((VALUE = ANY (ARRAY['created'::text, 'updated'::text, 'archived'::text, 'unarchived'::text, 'deleted'::text, 'restored'::text])));

-- domain content_type
CREATE DOMAIN public.content_type AS text;

-- domain export_format
CREATE DOMAIN public.export_format AS text
	CONSTRAINT export_format_known CHECK ((VALUE = ANY (ARRAY['csv'::text, 'jsonl'::text])));

-- domain job_kind
CREATE DOMAIN public.job_kind AS text
	CONSTRAINT job_kind_known CHECK ((VALUE = ANY (ARRAY['fetch'::text, 'export'::text])));

-- domain job_status
CREATE DOMAIN public.job_status AS text
	CONSTRAINT job_status_known CHECK ((VALUE = ANY (ARRAY['pending'::text, 'running'::text, 'completed'::text, 'failed'::text, 'stopped'::text])));

-- domain member_role
CREATE DOMAIN public.member_role AS text
	CONSTRAINT member_role_known CHECK ((VALUE = ANY (ARRAY['owner'::text, 'editor'::text, 'viewer'::text])));

-- type run_notice
CREATE TYPE public.run_notice AS (
	run_id bigint,
	kind text,
	message text,
	created_at timestamp with time zone
);

-- domain run_status
CREATE DOMAIN public.run_status AS text
	CONSTRAINT run_status_known CHECK ((VALUE = ANY (ARRAY['pending'::text, 'running'::text, 'completed'::text, 'partially_failed'::text, 'failed'::text, 'stopped'::text])));

-- table jobs
CREATE TABLE public.jobs (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    kind public.job_kind NOT NULL,
    content_type public.content_type NOT NULL,
    status public.job_status DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 3 NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    locked_at timestamp with time zone,
    locked_by text,
    lease_token uuid,
    heartbeat_at timestamp with time zone,
    total bigint,
    processed bigint DEFAULT 0 NOT NULL,
    cursor text,
    last_error text,
    last_error_public text,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    priority smallint DEFAULT 0 NOT NULL,
    fair_at timestamp with time zone,
    CONSTRAINT jobs_attempts_nonnegative CHECK ((attempts >= 0)),
    CONSTRAINT jobs_max_attempts_positive CHECK ((max_attempts >= 1)),
    CONSTRAINT jobs_processed_nonnegative CHECK ((processed >= 0)),
    CONSTRAINT jobs_running_has_lease CHECK ((((status)::text <> 'running'::text) OR ((lease_token IS NOT NULL) AND (locked_at IS NOT NULL) AND (heartbeat_at IS NOT NULL)))),
    CONSTRAINT jobs_total_nonnegative CHECK ((total >= 0))
)
WITH (autovacuum_vacuum_scale_factor='0.02', autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_cost_delay='0');

ALTER TABLE ONLY public.jobs FORCE ROW LEVEL SECURITY;

-- table schedules
CREATE TABLE public.schedules (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    owner_id uuid,
    cron_expression text NOT NULL,
    content_types public.content_type[] NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    next_run_at timestamp with time zone,
    last_run_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT schedules_content_types_present CHECK ((cardinality(content_types) > 0))
);

ALTER TABLE ONLY public.schedules FORCE ROW LEVEL SECURITY;

-- table runs
CREATE TABLE public.runs (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    owner_id uuid,
    kind public.job_kind NOT NULL,
    status public.run_status DEFAULT 'pending'::text NOT NULL,
    content_types public.content_type[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    full_read boolean DEFAULT false NOT NULL,
    CONSTRAINT runs_content_types_present CHECK ((cardinality(content_types) > 0))
)
WITH (autovacuum_vacuum_scale_factor='0.05', autovacuum_analyze_scale_factor='0.05');

ALTER TABLE ONLY public.runs FORCE ROW LEVEL SECURITY;

-- table app_users
CREATE TABLE public.app_users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    invited boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT app_users_email_lower CHECK ((email = lower(email))),
    CONSTRAINT app_users_email_shape CHECK ((email ~ '^[^@\s]+@[^@\s]+$'::text))
);

ALTER TABLE ONLY public.app_users FORCE ROW LEVEL SECURITY;

-- table content_items
CREATE TABLE public.content_items (
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text NOT NULL,
    name text,
    slug text,
    url text,
    state text,
    language text,
    hubspot_updated_at timestamp with time zone,
    archived boolean DEFAULT false NOT NULL,
    deleted_at timestamp with time zone,
    data jsonb NOT NULL,
    content_hash text,
    first_seen_run bigint,
    changed_run bigint,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    translated_from_id text,
    CONSTRAINT content_items_hubspot_id_present CHECK ((hubspot_id <> ''::text))
)
WITH (fillfactor='80');
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

ALTER TABLE ONLY public.content_items FORCE ROW LEVEL SECURITY;

-- table content_rejects
CREATE TABLE public.content_rejects (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    run_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text,
    reason text NOT NULL,
    raw bytea NOT NULL,
    raw_size integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT content_rejects_raw_size_nonnegative CHECK ((raw_size >= 0))
);

ALTER TABLE ONLY public.content_rejects FORCE ROW LEVEL SECURITY;

-- sequence content_rejects_id_seq
ALTER TABLE public.content_rejects ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.content_rejects_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table content_syncs
CREATE TABLE public.content_syncs (
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    run_id bigint NOT NULL,
    job_id bigint NOT NULL,
    confirmed_at timestamp with time zone NOT NULL,
    seen bigint NOT NULL,
    deleted bigint NOT NULL,
    mode text DEFAULT 'full'::text NOT NULL,
    listing_started_at timestamp with time zone,
    last_full_listing_at timestamp with time zone,
    last_incremental_listing_at timestamp with time zone,
    CONSTRAINT content_syncs_deleted_nonnegative CHECK ((deleted >= 0)),
    CONSTRAINT content_syncs_mode_known CHECK ((mode = ANY (ARRAY['full'::text, 'incremental'::text]))),
    CONSTRAINT content_syncs_seen_nonnegative CHECK ((seen >= 0))
);

ALTER TABLE ONLY public.content_syncs FORCE ROW LEVEL SECURITY;

-- table content_types
CREATE TABLE public.content_types (
    name text NOT NULL,
    CONSTRAINT content_types_name_word CHECK ((name ~ '^[a-z][a-z0-9_]*$'::text))
);

-- table content_versions
CREATE TABLE public.content_versions (
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text NOT NULL,
    version integer NOT NULL,
    event public.content_event NOT NULL,
    hash text,
    document jsonb,
    seen_from_run bigint,
    seen_until_run bigint,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    superseded_at timestamp with time zone,
    id bigint NOT NULL,
    CONSTRAINT content_versions_version_positive CHECK ((version > 0))
);
-- As content_items.data: lz4 where the server has it.
DO $$
BEGIN
    ALTER TABLE public.content_versions ALTER COLUMN document SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available on this server; content_versions.document stays pglz';
END
$$;

ALTER TABLE ONLY public.content_versions FORCE ROW LEVEL SECURITY;

-- sequence content_versions_id_seq
ALTER TABLE public.content_versions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.content_versions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table dashboard_confirmations
CREATE TABLE public.dashboard_confirmations (
    nonce_hash text NOT NULL,
    session text NOT NULL,
    action text NOT NULL,
    target jsonb NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT dashboard_confirmations_action_word CHECK ((action ~ '^[a-z][a-z_]*$'::text)),
    CONSTRAINT dashboard_confirmations_hash_hex CHECK ((nonce_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE ONLY public.dashboard_confirmations FORCE ROW LEVEL SECURITY;

-- table exports
CREATE TABLE public.exports (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    format public.export_format NOT NULL,
    status public.job_status DEFAULT 'pending'::text NOT NULL,
    path text,
    row_count bigint,
    bytes bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    include_deleted boolean DEFAULT false NOT NULL,
    deleted_count bigint,
    CONSTRAINT exports_bytes_nonnegative CHECK ((bytes >= 0)),
    CONSTRAINT exports_deleted_count_nonnegative CHECK ((deleted_count >= 0)),
    CONSTRAINT exports_row_count_nonnegative CHECK ((row_count >= 0))
);

ALTER TABLE ONLY public.exports FORCE ROW LEVEL SECURITY;

-- sequence exports_id_seq
ALTER TABLE public.exports ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.exports_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table fetch_reads
CREATE TABLE public.fetch_reads (
    job_id bigint NOT NULL,
    run_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    mode text NOT NULL,
    reason text NOT NULL,
    since timestamp with time zone,
    listing_started_at timestamp with time zone NOT NULL,
    requests bigint DEFAULT 0 NOT NULL,
    changed bigint DEFAULT 0 NOT NULL,
    deleted bigint DEFAULT 0 NOT NULL,
    unchanged bigint DEFAULT 0 NOT NULL,
    CONSTRAINT fetch_reads_changed_nonnegative CHECK ((changed >= 0)),
    CONSTRAINT fetch_reads_deleted_nonnegative CHECK ((deleted >= 0)),
    CONSTRAINT fetch_reads_mode_known CHECK ((mode = ANY (ARRAY['full'::text, 'incremental'::text]))),
    CONSTRAINT fetch_reads_requests_nonnegative CHECK ((requests >= 0)),
    CONSTRAINT fetch_reads_unchanged_nonnegative CHECK ((unchanged >= 0))
);

ALTER TABLE ONLY public.fetch_reads FORCE ROW LEVEL SECURITY;

-- table fetch_seen
CREATE UNLOGGED TABLE public.fetch_seen (
    job_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    hubspot_id text NOT NULL
);

ALTER TABLE ONLY public.fetch_seen FORCE ROW LEVEL SECURITY;

-- table hubspot_minutes
CREATE TABLE public.hubspot_minutes (
    minute timestamp with time zone NOT NULL,
    requests bigint DEFAULT 0 NOT NULL,
    rate_limited bigint DEFAULT 0 NOT NULL,
    CONSTRAINT hubspot_minutes_rate_limited_nonnegative CHECK ((rate_limited >= 0)),
    CONSTRAINT hubspot_minutes_requests_nonnegative CHECK ((requests >= 0))
);

ALTER TABLE ONLY public.hubspot_minutes FORCE ROW LEVEL SECURITY;

-- table job_leases
CREATE TABLE public.job_leases (
    kind public.job_kind NOT NULL,
    lease interval NOT NULL,
    CONSTRAINT job_leases_sensible CHECK ((lease >= '00:00:01'::interval))
);

-- sequence jobs_id_seq
ALTER TABLE public.jobs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table notifications
CREATE TABLE public.notifications (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    run_id bigint,
    kind text NOT NULL,
    message text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    read_at timestamp with time zone,
    schedule_id bigint,
    CONSTRAINT notifications_kind_word CHECK ((kind ~ '^[a-z][a-z_]*$'::text))
);

ALTER TABLE ONLY public.notifications FORCE ROW LEVEL SECURITY;

-- sequence notifications_id_seq
ALTER TABLE public.notifications ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.notifications_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table operator_actions
CREATE TABLE public.operator_actions (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    client text,
    session text,
    action text NOT NULL,
    target jsonb DEFAULT '{}'::jsonb NOT NULL,
    outcome jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT operator_actions_action_word CHECK ((action ~ '^[a-z][a-z_]*$'::text)),
    CONSTRAINT operator_actions_actor_present CHECK ((actor <> ''::text))
);

ALTER TABLE ONLY public.operator_actions FORCE ROW LEVEL SECURITY;

-- sequence operator_actions_id_seq
ALTER TABLE public.operator_actions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.operator_actions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table portal_members
CREATE TABLE public.portal_members (
    portal_id bigint NOT NULL,
    user_id uuid NOT NULL,
    role public.member_role DEFAULT 'viewer'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY public.portal_members FORCE ROW LEVEL SECURITY;

-- table portals
CREATE TABLE public.portals (
    id bigint NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    owner_id uuid NOT NULL,
    token_encrypted bytea,
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    token_rejected_at timestamp with time zone,
    CONSTRAINT portals_id_positive CHECK ((id > 0)),
    CONSTRAINT portals_time_zone_name CHECK (((length(time_zone) <= 64) AND (time_zone ~ '^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$'::text)))
);

ALTER TABLE ONLY public.portals FORCE ROW LEVEL SECURITY;

-- sequence runs_id_seq
ALTER TABLE public.runs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- sequence schedules_id_seq
ALTER TABLE public.schedules ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.schedules_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table workers
CREATE TABLE public.workers (
    id bigint NOT NULL,
    token_hash bytea NOT NULL,
    name text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    kinds text[] NOT NULL,
    concurrency integer NOT NULL,
    run_id bigint,
    heartbeat_every interval NOT NULL,
    started_at timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    job_ids bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    CONSTRAINT workers_concurrency_sensible CHECK (((concurrency >= 1) AND (concurrency <= 10000))),
    CONSTRAINT workers_heartbeat_sensible CHECK (((heartbeat_every >= '00:00:01'::interval) AND (heartbeat_every <= '00:10:00'::interval))),
    CONSTRAINT workers_host_sensible CHECK (((length(host) >= 1) AND (length(host) <= 255))),
    CONSTRAINT workers_kinds_known CHECK (((cardinality(kinds) > 0) AND (kinds <@ ARRAY['fetch'::text, 'export'::text]))),
    CONSTRAINT workers_name_sensible CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT workers_pid_positive CHECK ((pid > 0)),
    CONSTRAINT workers_token_hash_sha256 CHECK ((octet_length(token_hash) = 32))
);

ALTER TABLE ONLY public.workers FORCE ROW LEVEL SECURITY;

-- sequence workers_id_seq
ALTER TABLE public.workers ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.workers_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- constraint app_users app_users_email_key
ALTER TABLE ONLY public.app_users
    ADD CONSTRAINT app_users_email_key UNIQUE (email);

-- constraint app_users app_users_pkey
ALTER TABLE ONLY public.app_users
    ADD CONSTRAINT app_users_pkey PRIMARY KEY (id);

-- constraint content_items content_items_pkey
ALTER TABLE ONLY public.content_items
    ADD CONSTRAINT content_items_pkey PRIMARY KEY (portal_id, content_type, hubspot_id);

-- constraint content_rejects content_rejects_pkey
ALTER TABLE ONLY public.content_rejects
    ADD CONSTRAINT content_rejects_pkey PRIMARY KEY (id);

-- constraint content_syncs content_syncs_pkey
ALTER TABLE ONLY public.content_syncs
    ADD CONSTRAINT content_syncs_pkey PRIMARY KEY (portal_id, content_type);

-- check constraint content_type content_type_known
ALTER DOMAIN public.content_type
    ADD CONSTRAINT content_type_known CHECK ((VALUE = ANY (ARRAY['blog'::text, 'blog_author'::text, 'blog_post'::text, 'blog_tag'::text, 'hubdb_row'::text, 'hubdb_table'::text, 'landing_page'::text, 'site_page'::text, 'url_redirect'::text]))) NOT VALID;

-- constraint content_types content_types_pkey
ALTER TABLE ONLY public.content_types
    ADD CONSTRAINT content_types_pkey PRIMARY KEY (name);

-- constraint content_versions content_versions_pkey
ALTER TABLE ONLY public.content_versions
    ADD CONSTRAINT content_versions_pkey PRIMARY KEY (portal_id, content_type, hubspot_id, version);

-- constraint dashboard_confirmations dashboard_confirmations_pkey
ALTER TABLE ONLY public.dashboard_confirmations
    ADD CONSTRAINT dashboard_confirmations_pkey PRIMARY KEY (nonce_hash);

-- constraint exports exports_pkey
ALTER TABLE ONLY public.exports
    ADD CONSTRAINT exports_pkey PRIMARY KEY (id);

-- constraint exports exports_run_id_content_type_format_key
ALTER TABLE ONLY public.exports
    ADD CONSTRAINT exports_run_id_content_type_format_key UNIQUE (run_id, content_type, format);

-- constraint fetch_reads fetch_reads_pkey
ALTER TABLE ONLY public.fetch_reads
    ADD CONSTRAINT fetch_reads_pkey PRIMARY KEY (job_id);

-- constraint fetch_seen fetch_seen_pkey
ALTER TABLE ONLY public.fetch_seen
    ADD CONSTRAINT fetch_seen_pkey PRIMARY KEY (job_id, hubspot_id);

-- constraint hubspot_minutes hubspot_minutes_pkey
ALTER TABLE ONLY public.hubspot_minutes
    ADD CONSTRAINT hubspot_minutes_pkey PRIMARY KEY (minute);

-- constraint job_leases job_leases_pkey
ALTER TABLE ONLY public.job_leases
    ADD CONSTRAINT job_leases_pkey PRIMARY KEY (kind);

-- constraint jobs jobs_pkey
ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

-- constraint notifications notifications_pkey
ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

-- constraint operator_actions operator_actions_pkey
ALTER TABLE ONLY public.operator_actions
    ADD CONSTRAINT operator_actions_pkey PRIMARY KEY (id);

-- constraint portal_members portal_members_pkey
ALTER TABLE ONLY public.portal_members
    ADD CONSTRAINT portal_members_pkey PRIMARY KEY (portal_id, user_id);

-- constraint portals portals_pkey
ALTER TABLE ONLY public.portals
    ADD CONSTRAINT portals_pkey PRIMARY KEY (id);

-- constraint runs runs_id_portal_id_key
ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_id_portal_id_key UNIQUE (id, portal_id);

-- constraint runs runs_pkey
ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);

-- constraint schedules schedules_pkey
ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (id);

-- constraint workers workers_pkey
ALTER TABLE ONLY public.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (id);

-- index content_items_deleted_idx
CREATE INDEX content_items_deleted_idx ON public.content_items USING btree (portal_id, deleted_at) WHERE (deleted_at IS NOT NULL);

-- index content_items_translated_from_idx
CREATE INDEX content_items_translated_from_idx ON public.content_items USING btree (portal_id, content_type, translated_from_id) WHERE (translated_from_id IS NOT NULL);

-- index content_rejects_once_per_run
CREATE UNIQUE INDEX content_rejects_once_per_run ON public.content_rejects USING btree (run_id, content_type, hubspot_id) WHERE (hubspot_id IS NOT NULL);

-- index content_rejects_once_per_run_without_id
CREATE UNIQUE INDEX content_rejects_once_per_run_without_id ON public.content_rejects USING btree (run_id, content_type, raw_size, md5(raw)) WHERE (hubspot_id IS NULL);

-- index content_rejects_portal_idx
CREATE INDEX content_rejects_portal_idx ON public.content_rejects USING btree (portal_id, content_type, hubspot_id);

-- index content_rejects_run_idx
CREATE INDEX content_rejects_run_idx ON public.content_rejects USING btree (run_id, content_type);

-- index content_versions_changes_idx
CREATE INDEX content_versions_changes_idx ON public.content_versions USING btree (portal_id, recorded_at, id);

-- index dashboard_confirmations_expires_idx
CREATE INDEX dashboard_confirmations_expires_idx ON public.dashboard_confirmations USING btree (expires_at);

-- index exports_portal_idx
CREATE INDEX exports_portal_idx ON public.exports USING btree (portal_id, created_at DESC);

-- index fetch_reads_run_idx
CREATE INDEX fetch_reads_run_idx ON public.fetch_reads USING btree (run_id);

-- index jobs_claim_order_idx
CREATE INDEX jobs_claim_order_idx ON public.jobs USING btree (priority DESC, COALESCE(fair_at, run_after), id) WHERE ((status)::text = 'pending'::text);

-- index jobs_claimable_idx
CREATE INDEX jobs_claimable_idx ON public.jobs USING btree (run_after, id) WHERE ((status)::text = 'pending'::text);

-- index jobs_completed_idx
CREATE INDEX jobs_completed_idx ON public.jobs USING btree (finished_at) INCLUDE (kind) WHERE (((status)::text = 'completed'::text) AND (finished_at IS NOT NULL));

-- index jobs_dead_idx
CREATE INDEX jobs_dead_idx ON public.jobs USING btree (status, id) INCLUDE (kind) WHERE ((status)::text = ANY (ARRAY['failed'::text, 'stopped'::text]));

-- index jobs_fetched_idx
CREATE INDEX jobs_fetched_idx ON public.jobs USING btree (portal_id, content_type, finished_at) INCLUDE (status) WHERE (((kind)::text = 'fetch'::text) AND (finished_at IS NOT NULL));

-- index jobs_idempotency_key_uniq
CREATE UNIQUE INDEX jobs_idempotency_key_uniq ON public.jobs USING btree (idempotency_key) WHERE (idempotency_key IS NOT NULL);

-- index jobs_in_flight_uniq
CREATE UNIQUE INDEX jobs_in_flight_uniq ON public.jobs USING btree (portal_id, kind, content_type) WHERE ((status)::text = ANY (ARRAY['pending'::text, 'running'::text]));

-- index jobs_lease_idx
CREATE INDEX jobs_lease_idx ON public.jobs USING btree (heartbeat_at) WHERE (((status)::text = 'running'::text) AND (heartbeat_at IS NOT NULL));

-- index jobs_run_idx
CREATE INDEX jobs_run_idx ON public.jobs USING btree (run_id);

-- index notifications_run_idx
CREATE INDEX notifications_run_idx ON public.notifications USING btree (run_id);

-- index notifications_user_idx
CREATE INDEX notifications_user_idx ON public.notifications USING btree (user_id, created_at DESC);

-- index portal_members_user_idx
CREATE INDEX portal_members_user_idx ON public.portal_members USING btree (user_id);

-- index portals_owner_idx
CREATE INDEX portals_owner_idx ON public.portals USING btree (owner_id);

-- index runs_created_idx
CREATE INDEX runs_created_idx ON public.runs USING btree (created_at, id);

-- index runs_open_idx
CREATE INDEX runs_open_idx ON public.runs USING btree (id) WHERE ((status)::text = ANY (ARRAY['pending'::text, 'running'::text]));

-- index runs_portal_created_idx
CREATE INDEX runs_portal_created_idx ON public.runs USING btree (portal_id, created_at DESC);

-- index runs_status_created_idx
CREATE INDEX runs_status_created_idx ON public.runs USING btree (status, created_at, id);

-- index schedules_due_idx
CREATE INDEX schedules_due_idx ON public.schedules USING btree (next_run_at) WHERE enabled;

-- index workers_last_seen_idx
CREATE INDEX workers_last_seen_idx ON public.workers USING btree (last_seen_at);

-- fk constraint content_rejects content_rejects_run_id_portal_id_fkey
ALTER TABLE ONLY public.content_rejects
    ADD CONSTRAINT content_rejects_run_id_portal_id_fkey FOREIGN KEY (run_id, portal_id) REFERENCES public.runs(id, portal_id) ON DELETE CASCADE;

-- fk constraint content_syncs content_syncs_portal_id_fkey
ALTER TABLE ONLY public.content_syncs
    ADD CONSTRAINT content_syncs_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;

-- fk constraint exports exports_run_id_portal_id_fkey
ALTER TABLE ONLY public.exports
    ADD CONSTRAINT exports_run_id_portal_id_fkey FOREIGN KEY (run_id, portal_id) REFERENCES public.runs(id, portal_id) ON DELETE CASCADE;

-- fk constraint fetch_reads fetch_reads_job_id_fkey
ALTER TABLE ONLY public.fetch_reads
    ADD CONSTRAINT fetch_reads_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;

-- fk constraint fetch_reads fetch_reads_portal_id_fkey
ALTER TABLE ONLY public.fetch_reads
    ADD CONSTRAINT fetch_reads_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;

-- fk constraint jobs jobs_run_id_portal_id_fkey
ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_run_id_portal_id_fkey FOREIGN KEY (run_id, portal_id) REFERENCES public.runs(id, portal_id) ON DELETE CASCADE;

-- fk constraint notifications notifications_run_id_fkey
ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

-- fk constraint notifications notifications_schedule_id_fkey
ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_schedule_id_fkey FOREIGN KEY (schedule_id) REFERENCES public.schedules(id) ON DELETE SET NULL;

-- fk constraint notifications notifications_user_id_fkey
ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE CASCADE;

-- fk constraint portal_members portal_members_portal_id_fkey
ALTER TABLE ONLY public.portal_members
    ADD CONSTRAINT portal_members_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;

-- fk constraint portal_members portal_members_user_id_fkey
ALTER TABLE ONLY public.portal_members
    ADD CONSTRAINT portal_members_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE CASCADE;

-- fk constraint portals portals_owner_id_fkey
ALTER TABLE ONLY public.portals
    ADD CONSTRAINT portals_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.app_users(id) ON UPDATE CASCADE;

-- fk constraint runs runs_owner_id_fkey
ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE SET NULL;

-- fk constraint runs runs_portal_id_fkey
ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;

-- fk constraint schedules schedules_owner_id_fkey
ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE SET NULL;

-- fk constraint schedules schedules_portal_id_fkey
ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;

-- row security app_users
ALTER TABLE public.app_users ENABLE ROW LEVEL SECURITY;

-- row security content_items
ALTER TABLE public.content_items ENABLE ROW LEVEL SECURITY;

-- row security content_rejects
ALTER TABLE public.content_rejects ENABLE ROW LEVEL SECURITY;

-- row security content_syncs
ALTER TABLE public.content_syncs ENABLE ROW LEVEL SECURITY;

-- row security content_versions
ALTER TABLE public.content_versions ENABLE ROW LEVEL SECURITY;

-- row security dashboard_confirmations
ALTER TABLE public.dashboard_confirmations ENABLE ROW LEVEL SECURITY;

-- row security exports
ALTER TABLE public.exports ENABLE ROW LEVEL SECURITY;

-- row security fetch_reads
ALTER TABLE public.fetch_reads ENABLE ROW LEVEL SECURITY;

-- row security fetch_seen
ALTER TABLE public.fetch_seen ENABLE ROW LEVEL SECURITY;

-- row security hubspot_minutes
ALTER TABLE public.hubspot_minutes ENABLE ROW LEVEL SECURITY;

-- row security jobs
ALTER TABLE public.jobs ENABLE ROW LEVEL SECURITY;

-- row security notifications
ALTER TABLE public.notifications ENABLE ROW LEVEL SECURITY;

-- row security operator_actions
ALTER TABLE public.operator_actions ENABLE ROW LEVEL SECURITY;

-- row security portal_members
ALTER TABLE public.portal_members ENABLE ROW LEVEL SECURITY;

-- row security portals
ALTER TABLE public.portals ENABLE ROW LEVEL SECURITY;

-- row security runs
ALTER TABLE public.runs ENABLE ROW LEVEL SECURITY;

-- row security schedules
ALTER TABLE public.schedules ENABLE ROW LEVEL SECURITY;

-- row security workers
ALTER TABLE public.workers ENABLE ROW LEVEL SECURITY;

-- acl COLUMN jobs.id
GRANT SELECT(id) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(id) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.run_id
GRANT SELECT(run_id) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(run_id) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.portal_id
GRANT SELECT(portal_id) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(portal_id) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.kind
GRANT SELECT(kind) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(kind) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.content_type
GRANT SELECT(content_type) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(content_type) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.status
GRANT SELECT(status) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(status) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.attempts
GRANT SELECT(attempts) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(attempts) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.max_attempts
GRANT SELECT(max_attempts) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(max_attempts) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.run_after
GRANT SELECT(run_after) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(run_after) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.locked_at
GRANT SELECT(locked_at) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.locked_by
GRANT SELECT(locked_by) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.heartbeat_at
GRANT SELECT(heartbeat_at) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.total
GRANT SELECT(total) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(total) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.processed
GRANT SELECT(processed) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(processed) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.cursor
GRANT SELECT(cursor) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.last_error
GRANT SELECT(last_error) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.last_error_public
GRANT SELECT(last_error_public) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(last_error_public) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.idempotency_key
GRANT SELECT(idempotency_key) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.created_at
GRANT SELECT(created_at) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(created_at) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.finished_at
GRANT SELECT(finished_at) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(finished_at) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.priority
GRANT SELECT(priority) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(priority) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN jobs.fair_at
GRANT SELECT(fair_at) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(fair_at) ON TABLE public.jobs TO smuves_worker;

-- acl COLUMN schedules.portal_id
GRANT SELECT(portal_id) ON TABLE public.schedules TO smuves_worker;

-- acl COLUMN schedules.owner_id
GRANT SELECT(owner_id) ON TABLE public.schedules TO smuves_worker;

-- acl COLUMN schedules.content_types
GRANT SELECT(content_types) ON TABLE public.schedules TO smuves_worker;

-- acl COLUMN schedules.enabled
GRANT SELECT(enabled) ON TABLE public.schedules TO smuves_worker;

-- acl COLUMN schedules.next_run_at
GRANT SELECT(next_run_at) ON TABLE public.schedules TO smuves_worker;

-- acl TABLE runs
GRANT SELECT ON TABLE public.runs TO smuves_worker;

-- acl COLUMN runs.id
GRANT SELECT(id) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.portal_id
GRANT INSERT(portal_id) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(portal_id),INSERT(portal_id) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.owner_id
GRANT INSERT(owner_id) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(owner_id),INSERT(owner_id) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.kind
GRANT INSERT(kind) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(kind),INSERT(kind) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.status
GRANT SELECT(status) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.content_types
GRANT INSERT(content_types) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(content_types),INSERT(content_types) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.created_at
GRANT SELECT(created_at) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.started_at
GRANT SELECT(started_at) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.finished_at
GRANT SELECT(finished_at) ON TABLE public.runs TO smuves_app;

-- acl COLUMN runs.full_read
GRANT INSERT(full_read) ON TABLE public.runs TO smuves_worker;
GRANT INSERT(full_read) ON TABLE public.runs TO smuves_app;

-- acl TABLE content_items
GRANT SELECT,INSERT,UPDATE ON TABLE public.content_items TO smuves_worker;

-- acl COLUMN content_items.portal_id
GRANT SELECT(portal_id) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.content_type
GRANT SELECT(content_type) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.hubspot_id
GRANT SELECT(hubspot_id) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.name
GRANT SELECT(name) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.slug
GRANT SELECT(slug) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.url
GRANT SELECT(url) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.state
GRANT SELECT(state) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.language
GRANT SELECT(language) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.hubspot_updated_at
GRANT SELECT(hubspot_updated_at) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.archived
GRANT SELECT(archived) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.deleted_at
GRANT SELECT(deleted_at) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.data
GRANT SELECT(data) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.content_hash
GRANT SELECT(content_hash) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.changed_at
GRANT SELECT(changed_at) ON TABLE public.content_items TO smuves_app;

-- acl COLUMN content_items.translated_from_id
GRANT SELECT(translated_from_id) ON TABLE public.content_items TO smuves_app;

-- acl TABLE content_rejects
GRANT INSERT ON TABLE public.content_rejects TO smuves_worker;

-- acl COLUMN content_rejects.run_id
GRANT SELECT(run_id) ON TABLE public.content_rejects TO smuves_app;

-- acl COLUMN content_rejects.content_type
GRANT SELECT(content_type) ON TABLE public.content_rejects TO smuves_app;

-- acl COLUMN content_rejects.reason
GRANT SELECT(reason) ON TABLE public.content_rejects TO smuves_app;

-- acl TABLE content_syncs
GRANT SELECT,INSERT,UPDATE ON TABLE public.content_syncs TO smuves_worker;

-- acl COLUMN content_syncs.portal_id
GRANT SELECT(portal_id) ON TABLE public.content_syncs TO smuves_app;

-- acl COLUMN content_syncs.content_type
GRANT SELECT(content_type) ON TABLE public.content_syncs TO smuves_app;

-- acl COLUMN content_syncs.confirmed_at
GRANT SELECT(confirmed_at) ON TABLE public.content_syncs TO smuves_app;

-- acl COLUMN content_syncs.listing_started_at
GRANT SELECT(listing_started_at) ON TABLE public.content_syncs TO smuves_app;

-- acl COLUMN content_syncs.last_full_listing_at
GRANT SELECT(last_full_listing_at) ON TABLE public.content_syncs TO smuves_app;

-- acl TABLE content_versions
GRANT SELECT ON TABLE public.content_versions TO smuves_app;

-- acl TABLE exports
GRANT SELECT ON TABLE public.exports TO smuves_app;
GRANT SELECT ON TABLE public.exports TO smuves_worker;

-- acl COLUMN exports.run_id
GRANT INSERT(run_id) ON TABLE public.exports TO smuves_app;

-- acl COLUMN exports.portal_id
GRANT INSERT(portal_id) ON TABLE public.exports TO smuves_app;

-- acl COLUMN exports.content_type
GRANT INSERT(content_type) ON TABLE public.exports TO smuves_app;

-- acl COLUMN exports.format
GRANT INSERT(format) ON TABLE public.exports TO smuves_app;

-- acl COLUMN exports.row_count
GRANT UPDATE(row_count) ON TABLE public.exports TO smuves_worker;

-- acl COLUMN exports.bytes
GRANT UPDATE(bytes) ON TABLE public.exports TO smuves_worker;

-- acl COLUMN exports.include_deleted
GRANT INSERT(include_deleted) ON TABLE public.exports TO smuves_app;

-- acl COLUMN exports.deleted_count
GRANT UPDATE(deleted_count) ON TABLE public.exports TO smuves_worker;

-- acl TABLE fetch_reads
GRANT SELECT ON TABLE public.fetch_reads TO smuves_app;
GRANT SELECT,INSERT,UPDATE ON TABLE public.fetch_reads TO smuves_worker;

-- acl TABLE fetch_seen
GRANT SELECT,INSERT,DELETE ON TABLE public.fetch_seen TO smuves_worker;

-- acl TABLE job_leases
GRANT SELECT ON TABLE public.job_leases TO smuves_worker;

-- acl TABLE notifications
GRANT SELECT ON TABLE public.notifications TO smuves_app;

-- acl COLUMN notifications.read_at
GRANT UPDATE(read_at) ON TABLE public.notifications TO smuves_app;

-- acl COLUMN portal_members.portal_id
GRANT SELECT(portal_id) ON TABLE public.portal_members TO smuves_app;

-- acl COLUMN portal_members.user_id
GRANT SELECT(user_id) ON TABLE public.portal_members TO smuves_app;

-- acl COLUMN portal_members.role
GRANT SELECT(role) ON TABLE public.portal_members TO smuves_app;

-- acl TABLE portals
GRANT DELETE ON TABLE public.portals TO smuves_app;

-- acl COLUMN portals.id
GRANT SELECT(id),INSERT(id) ON TABLE public.portals TO smuves_app;
GRANT SELECT(id) ON TABLE public.portals TO smuves_worker;

-- acl COLUMN portals.name
GRANT SELECT(name),INSERT(name),UPDATE(name) ON TABLE public.portals TO smuves_app;

-- acl COLUMN portals.owner_id
GRANT SELECT(owner_id),INSERT(owner_id) ON TABLE public.portals TO smuves_app;

-- acl COLUMN portals.token_encrypted
GRANT INSERT(token_encrypted),UPDATE(token_encrypted) ON TABLE public.portals TO smuves_app;

-- acl COLUMN portals.time_zone
GRANT INSERT(time_zone),UPDATE(time_zone) ON TABLE public.portals TO smuves_app;

-- acl COLUMN portals.created_at
GRANT SELECT(created_at) ON TABLE public.portals TO smuves_app;

-- acl COLUMN portals.token_rejected_at
GRANT SELECT(token_rejected_at),UPDATE(token_rejected_at) ON TABLE public.portals TO smuves_app;
GRANT SELECT(token_rejected_at) ON TABLE public.portals TO smuves_worker;

-- acl COLUMN schema_migrations.version
GRANT SELECT(version) ON TABLE public.schema_migrations TO smuves_app;

-- The content types known at the start; functions/content.sql keeps content_type's domain in
-- step with later additions.
INSERT INTO public.content_types (name) VALUES
    ('site_page'), ('landing_page'), ('blog_post'), ('hubdb_table'), ('hubdb_row'),
    ('blog_author'), ('blog_tag'), ('url_redirect'), ('blog');

-- How long a job's lease lasts without a heartbeat, by kind.
INSERT INTO public.job_leases (kind, lease) VALUES ('fetch', '5 minutes'), ('export', '2 minutes');
