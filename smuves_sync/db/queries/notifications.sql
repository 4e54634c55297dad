-- Notifications (smuves_sync/db/notifications.py), read by their user through the API
-- (smuves_app inside `Database.as_user`), and a run's by the operator (the dashboard, as the
-- login role). The queue's functions write those about runs; the scheduler those about
-- schedules.

-- name: notification_list
-- Newest first; keyset on id (older than %(before)s).
SELECT id, run_id, schedule_id, kind, message, created_at, read_at
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
RETURNING id, run_id, schedule_id, kind, message, created_at, read_at

-- name: notification_of_run
-- A run's notifications, newest first, with the recipient's email (notifications_run_idx).
SELECT n.id, n.user_id, u.email, n.kind, n.message, n.created_at, n.read_at
FROM public.notifications AS n
LEFT JOIN public.app_users AS u ON u.id = n.user_id
WHERE n.run_id = %(run_id)s
ORDER BY n.id DESC
LIMIT %(limit)s
