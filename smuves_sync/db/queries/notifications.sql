-- Notifications (smuves_sync/db/notifications.py), read by their user through the API
-- (smuves_app inside `Database.as_user`). The queue's functions write them.

-- name: notification_list
-- Newest first; keyset on id (older than %(before)s).
SELECT id, run_id, kind, message, created_at, read_at
FROM public.notifications
WHERE user_id = public.current_app_user()
  AND (%(before)s::bigint IS NULL OR id < %(before)s::bigint)
ORDER BY id DESC
LIMIT %(limit)s + 1

-- name: notification_read
-- The first read time is kept: marking twice changes nothing.
UPDATE public.notifications
SET read_at = coalesce(read_at, now())
WHERE id = %(notification_id)s
RETURNING id, run_id, kind, message, created_at, read_at
