-- Rows a worker must survive, planted as the login role (tests/integration/test_runner_resilience.py).

-- name: resilience_allow_any_content_type
-- As a newer release would: the database accepts a content type this code does not know.
ALTER DOMAIN public.content_type DROP CONSTRAINT content_type_known

-- name: resilience_plant_schedule_of_type
INSERT INTO public.schedules (portal_id, cron_expression, content_types, next_run_at)
VALUES (%(portal_id)s, '0 3 * * *', ARRAY[%(content_type)s]::public.content_type[],
        now() - interval '1 day')
