"""Changesets: a spreadsheet's edits read (`files`), compared with the stored versions they
were made from (`compare`), stored as a changeset of items, previewed, and rolled back
(`service`). The push that writes them to HubSpot is the workers'.

    changes = read_changes(data, media=Media.CSV, content_type=None, filename=name,
                           max_bytes=settings.changeset_max_bytes)   # or ChangesetFileRefused
    changeset, counts = await import_changeset(db, portal_id, changes, owner_id=user,
                                               filename=name)
    preview = await changeset_preview(db, changeset.id)

The editable fields of each type, their kinds and how a cell holds one are
`smuves_sync.content_edits`; the tables are `smuves_sync.db.changesets`.
"""

from smuves_sync.changesets.files import (
    Changes,
    ChangesetFileRefused,
    Media,
    editable_of,
    read_changes,
    type_named,
)
from smuves_sync.changesets.service import (
    Counts,
    Preview,
    changeset_preview,
    import_changeset,
    push_requests,
    rollback_changeset,
    shown,
)

__all__ = [
    "Changes",
    "ChangesetFileRefused",
    "Counts",
    "Media",
    "Preview",
    "changeset_preview",
    "editable_of",
    "import_changeset",
    "push_requests",
    "read_changes",
    "rollback_changeset",
    "shown",
    "type_named",
]
