"""The live parents of a child type (HubDB tables of their rows), as the child's incremental
read needs them: each parent's id, when it last changed and how many children it counts. They
come from a listing of the parents (`HubSpotClient.parent_states`), or from the first answer of
the parent type's own change listing when that answer held every live parent
(`listed_parents`: the tables job's answer serves its run's rows job).
"""

from __future__ import annotations

from dataclasses import dataclass

from smuves_sync.content_fields import ContentRecord
from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.hubspot.opening import Opening, count_value, update_ms
from smuves_sync.hubspot.registry import ContentTypeRegistry


@dataclass(frozen=True, slots=True)
class ParentState:
    """A live parent object (a HubDB table): its id, when it last changed, its children's count."""

    hubspot_id: str
    updated_ms: int | None
    child_count: int | None


def parent_states(spec: ContentTypeSpec, parents: list[ContentRecord]) -> list[ParentState]:
    """The states of a child type's live parents (`parents`: HubDB tables of rows): when each
    last changed and how many children it counts."""
    states = []
    for parent in parents:
        count = None
        if spec.parent_count_field is not None:
            count = count_value(parent.raw.get(spec.parent_count_field))
        states.append(ParentState(parent.hubspot_id, update_ms(parent), count))
    return states


def listed_parents(
    registry: ContentTypeRegistry, content_type: str, opening: Opening
) -> list[ParentState] | None:
    """The states of every live object of `content_type` (a parent type: HubDB tables), as its
    one child type (their rows) reads them, when the opening of the parent type's change
    listing holds its whole live listing in one answer (no next page, as many objects as its
    count); else None, and None for a type no other is listed per object of."""
    parent = registry.get(content_type)
    children = [s for s in map(registry.get, registry.names()) if s.parent == parent.name]
    answer = opening.answers.get(False)
    if len(children) != 1 or answer is None:
        return None
    body, results, more = answer
    if more or count_value(body.get("total")) != len(results):
        return None
    # As the parents' own listing reads them: an object that cannot be read has no children.
    records, _ = parent.read_page(results, archived_pass=False)
    return parent_states(children[0], list(records))
