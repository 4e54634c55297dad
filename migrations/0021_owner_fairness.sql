-- Claims share the workers among owners as well as portals (README "Sharing the workers among
-- portals"). The claim is unchanged: it still takes due jobs in line by
-- (priority DESC, coalesce(fair_at, run_after), id) under the per-portal cap, with the same
-- leases and the same lock order. What changes is where enqueue_job_v2 places a job in line.
--
-- * 0016 placed a portal's k-th job in flight k claim quanta (10 s) after it became due, so an
--   owner with a hundred busy portals had a hundred jobs in line for every one of an owner
--   with one portal. Now the quantum of a portal's jobs is multiplied by its owner's busy
--   portals (those with a job pending or running, this one included), n: the k-th job is
--   placed k * n quanta after it became due, so each owner's jobs together, not each portal's,
--   come one a quantum. Within an owner its portals still take turns.
-- * The first job of an owner's n-th busy portal is placed n - 1 quanta late, so that the
--   first jobs of an owner's portals do not all stand at the head of the line together.
-- * An owner with one busy portal places its jobs exactly as 0016 did.
-- * The placement is made when a job is enqueued and never revised: a portal that became
--   busy while few of its owner's portals were places its jobs closer together than one
--   that became busy after the others. An owner whose portals become busy one after another
--   still gets more than its share while the first ones' jobs are in line (with n portals
--   made busy in turn, about 1 + 1/2 + ... + 1/n quanta's worth each quantum, against n
--   in 0016). Revising it would mean writing other portals' pending jobs at every enqueue.
-- * A job put back to pending keeps its place (job_to_pending of 0016).

SET LOCAL ROLE smuves_owner;

-- enqueue_job_v2 counts an owner's portals.
CREATE INDEX portals_owner_idx ON public.portals (owner_id);

-- enqueue_job_v2 of 0016, with the job placed in line by its portal's and its owner's jobs
-- in flight (above). Who may add which job, and at what priority, is unchanged.
CREATE OR REPLACE FUNCTION public.enqueue_job_v2(
    p_run_id bigint,
    p_content_type text,
    p_priority smallint DEFAULT 0,
    p_max_attempts integer DEFAULT 3,
    p_run_after timestamptz DEFAULT NULL,
    p_total bigint DEFAULT NULL,
    p_idempotency_key text DEFAULT NULL,
    p_schedule_id bigint DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_run public.runs;
        v_operator boolean := public.operator_session();
        v_run_after timestamptz := coalesce(p_run_after, now());
        v_priority smallint := coalesce(p_priority, 0);
        v_ahead bigint;
        v_busy bigint;
    BEGIN
        SELECT * INTO v_run FROM public.runs AS r WHERE r.id = p_run_id;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF NOT v_operator THEN
            v_run_after := greatest(v_run_after, now());
            IF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
               AND v_run.portal_id IN (SELECT public.member_portal_ids()) THEN
                v_priority := least(v_priority, 20);
            ELSIF pg_catalog.pg_has_role(session_user, 'smuves_worker', 'USAGE')
                  AND v_run.kind = 'fetch'
                  AND EXISTS (SELECT FROM public.schedules AS s
                              WHERE s.id = p_schedule_id
                                AND s.portal_id = v_run.portal_id
                                AND s.enabled
                                AND s.next_run_at <= now()
                                AND s.owner_id IS NOT DISTINCT FROM v_run.owner_id
                                AND p_content_type = ANY (s.content_types::text[])) THEN
                v_priority := least(v_priority, 0);
            ELSE
                RAISE EXCEPTION 'enqueue_job: this login may not add jobs to run % of portal %',
                                p_run_id, v_run.portal_id
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
        END IF;

        -- The portal's jobs in flight: a walk of jobs_in_flight_uniq, a few rows at most.
        SELECT count(*) INTO v_ahead FROM public.jobs AS j
        WHERE j.portal_id = v_run.portal_id AND j.status IN ('pending', 'running');
        -- The owner's busy portals, this one included: portals_owner_idx, then a probe of
        -- jobs_in_flight_uniq per portal of the owner.
        SELECT count(*) INTO v_busy FROM public.portals AS p
        WHERE p.owner_id = (SELECT o.owner_id FROM public.portals AS o
                            WHERE o.id = v_run.portal_id)
          AND (p.id = v_run.portal_id
               OR EXISTS (SELECT FROM public.jobs AS b
                          WHERE b.portal_id = p.id AND b.status IN ('pending', 'running')));

        RETURN QUERY
        INSERT INTO public.jobs AS j (run_id, portal_id, kind, content_type, max_attempts,
                                      run_after, total, idempotency_key, priority, fair_at)
        VALUES (v_run.id, v_run.portal_id, v_run.kind, p_content_type, p_max_attempts,
                v_run_after, p_total, p_idempotency_key, v_priority,
                v_run_after + (v_ahead * v_busy + v_busy - 1) * interval '10 seconds')
        ON CONFLICT DO NOTHING
        RETURNING j.*;
    END
    $$;
