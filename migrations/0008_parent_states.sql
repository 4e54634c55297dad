-- What a fetch job's incremental read of a parent type (HubDB tables) saw of every live parent,
-- when the first answer of its listing held them all: each parent's id, when it last changed and
-- how many children it counts (fetch_reads.parent_states, a JSON array). The child type's job of
-- the same run (HubDB rows) reads it once that job has completed, instead of listing the parents
-- again.
ALTER TABLE public.fetch_reads ADD COLUMN parent_states jsonb;
