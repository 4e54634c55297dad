-- hubspot_minutes (smuves_sync/db/hubspot_minutes.py): HubSpot requests and
-- 429 answers per minute, summed over every process that talks to HubSpot. Workers write
-- through record_hubspot_minute (SECURITY DEFINER); the dashboard reads as the login role.
-- %(now)s NULL means the database's clock.

-- name: hubspot_minute_record
-- Add one process's HubSpot requests and 429s to the current minute (record_hubspot_minute).
SELECT public.record_hubspot_minute(%(requests)s, %(rate_limited)s, %(now)s)

-- name: hubspot_per_minute
-- Requests and 429s in each of the last %(minutes)s minutes (the current one last), zeros
-- included.
WITH clock AS (
    SELECT date_trunc('minute', coalesce(%(now)s::timestamptz, now())) AS minute
)
SELECT m.minute, coalesce(h.requests, 0) AS requests,
       coalesce(h.rate_limited, 0) AS rate_limited
FROM clock AS c
CROSS JOIN generate_series(c.minute - (%(minutes)s - 1) * interval '1 minute', c.minute,
                           interval '1 minute') AS m (minute)
LEFT JOIN public.hubspot_minutes AS h ON h.minute = m.minute
ORDER BY m.minute
