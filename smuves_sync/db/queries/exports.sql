-- The exports table (smuves_sync/db/exports.py). Its status follows the export job's
-- (trigger jobs_exports_follow, exports_follow_job). The file's place is derived, never stored
-- (smuves_sync/export_files.py): the runtime roles may not write `path` at all.

-- name: export_create
-- include_deleted: whether the file keeps the objects marked deleted (the worker reads it);
-- edit, fields: an export made for editing, and the editable fields it writes (NULL: all).
INSERT INTO public.exports (run_id, portal_id, content_type, format, include_deleted, edit,
                            fields)
VALUES (%(run_id)s, %(portal_id)s, %(content_type)s, %(format)s, %(include_deleted)s,
        %(edit)s, %(fields)s)
RETURNING *

-- name: export_of_run
SELECT * FROM public.exports
WHERE run_id = %(run_id)s AND content_type = %(content_type)s

-- name: export_record_file
-- deleted_count: the deleted objects the file left out, or carries when it includes them.
UPDATE public.exports
SET row_count = %(row_count)s, bytes = %(bytes)s, deleted_count = %(deleted_count)s
WHERE id = %(export_id)s
RETURNING *

-- name: export_record_copy
-- Where an operator's `smuves export --out` copied the file: the operator's login only.
UPDATE public.exports SET path = %(path)s WHERE id = %(export_id)s
RETURNING *

-- name: export_get
SELECT * FROM public.exports WHERE id = %(export_id)s
