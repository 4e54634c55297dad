"""Asking HubSpot about objects by id: which it still holds (live or archived), which are gone.

Batch reads where the type has them (`POST …/batch/read`, live then `archived=true`), else
one `GET …/<id>` per object, live then archived; what HubSpot answers 404 for however asked
is gone. The deletion sweep (`workers/sweep.py`) marks only those deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from smuves_sync.content_fields import ContentRecord, RejectedObject
from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.errors import HubSpotNotFound
from smuves_sync.hubspot.listing import PortalReader, results_of

log = logging.getLogger(__name__)

# Ids per batch read: HubSpot's batch endpoints take up to 100 inputs.
BATCH_READ_SIZE = 100


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What HubSpot answered about objects asked for by id (`HubSpotClient.confirm`)."""

    present: tuple[ContentRecord, ...]  # held, live or archived, as HubSpot has them now
    gone: tuple[str, ...]  # 404 however asked: deleted
    unknown: tuple[str, ...]  # the type offers no way to ask
    # held, but answered in a shape that cannot be read (set aside as a page's are)
    rejects: tuple[RejectedObject, ...] = ()


@dataclass(frozen=True, slots=True)
class _BatchAnswer:
    """What one batch read answered, by own id (HubDB rows: without the table)."""

    records: tuple[ContentRecord, ...]
    rejects: tuple[RejectedObject, ...]
    # the ids it answered with an object (readable or not)
    held: frozenset[str]
    # the ids it did not answer in a request whose answer held an object without a usable
    # id: that object may be any of them, so none of them is confirmed gone
    unsure: frozenset[str]


class Confirmer(PortalReader):
    """Asks one portal's HubSpot about objects by id."""

    async def confirm(
        self,
        content_type: str,
        hubspot_ids: Sequence[str],
        *,
        states: tuple[bool, ...] | None = None,
    ) -> Confirmation:
        """Which of the objects (ids as stored; HubDB rows '<table>:<row>') HubSpot still holds
        (live or archived, as records) and which it answers 404 for however asked (gone).
        Where the type has a batch read (`POST …/batch/read`): live, then `archived=true` for
        the rest; what neither returns is gone. HubDB's row batch read has no `archived`: a
        row it does not return is asked for by id with `archived=true`. A batch read that
        answers 404 as a whole says nothing about the ids (except that the rows of a table
        that is itself gone are gone): they are asked for one by one, `GET …/<id>`, live then
        archived, as are the objects of types without a batch read. An id of a type that
        offers neither is left `unknown`. `states` (live False, archived True) limits where
        they are asked for, when the caller has seen the others' whole listing without them.
        """
        spec = self._registry.get(content_type)
        every_state: tuple[bool, ...] = (False, True) if spec.archived_pass else (False,)
        if states is not None:
            every_state = tuple(state for state in every_state if state in states)
        return await self._confirm(spec, hubspot_ids, every_state)

    async def _confirm(
        self, spec: ContentTypeSpec, hubspot_ids: Sequence[str], every_state: tuple[bool, ...]
    ) -> Confirmation:
        present: list[ContentRecord] = []
        rejects: list[RejectedObject] = []
        gone: list[str] = []
        unknown: list[str] = []
        for parent_id, own_ids in _by_parent(spec, hubspot_ids).items():
            prefix = f"{parent_id}:" if parent_id is not None else ""
            todo = list(own_ids)
            # Which states (archived or not) still need asking by id.
            ask = every_state
            # Ids a batch read could not settle: asked by id in every state.
            unsure: list[str] = []
            if spec.batch_read:
                found = await self._batch_read(spec, parent_id, todo, archived=False)
                if found is None and spec.parent is not None:
                    if not await self._parent_exists(spec, parent_id):
                        gone.extend(prefix + own for own in todo)
                        continue
                elif found is not None:
                    present.extend(found.records)
                    rejects.extend(found.rejects)
                    unsure = [own for own in todo if own in found.unsure]
                    todo = [own for own in todo if own not in found.held | found.unsure]
                    ask = tuple(archived for archived in ask if archived)
                    if spec.parent is None and ask:
                        found = await self._batch_read(spec, parent_id, todo, archived=True)
                        if found is not None:
                            present.extend(found.records)
                            rejects.extend(found.rejects)
                            unsure += [own for own in todo if own in found.unsure]
                            settled = found.held | found.unsure
                            gone.extend(prefix + own for own in todo if own not in settled)
                            todo = []
            asks = [(own, ask) for own in todo] + [(own, every_state) for own in unsure]
            if not asks:
                continue
            if not spec.get_by_id:
                unknown.extend(prefix + own for own, _ in asks)
                continue
            answers = [await self._get_one(spec, parent_id, own, states) for own, states in asks]
            for (own, _), answer in zip(asks, answers, strict=True):
                if answer is None:
                    gone.append(prefix + own)
                elif isinstance(answer, RejectedObject):
                    rejects.append(answer)
                else:
                    present.append(answer)
        return Confirmation(tuple(present), tuple(gone), tuple(unknown), tuple(rejects))

    async def _batch_read(
        self, spec: ContentTypeSpec, parent_id: str | None, own_ids: list[str], archived: bool
    ) -> _BatchAnswer | None:
        """What a batch read answers about `own_ids`, 100 ids a request; None when it answers
        404 as a whole (no such endpoint, or no such parent). An object of the answer that
        cannot be read is set aside (`rejects`), as a listing's is."""
        records: dict[str, ContentRecord] = {}
        rejects: list[RejectedObject] = []
        held: set[str] = set()
        unsure: set[str] = set()
        path = f"{spec.list_path(self._api_version, parent_id)}/batch/read"
        params = {"archived": "true"} if archived else {}
        asked = set(own_ids)
        for start in range(0, len(own_ids), BATCH_READ_SIZE):
            chunk = own_ids[start : start + BATCH_READ_SIZE]
            try:
                body = await self._transport.post(spec.name, path, params, {"inputs": chunk})
            except HubSpotNotFound:
                return None
            try:
                results = results_of(body, len(chunk))
            except ValueError as exc:
                raise self._transport.malformed(spec.name, f"POST {path}: {exc}") from None
            found, unread = spec.read_page(results, parent_id=parent_id, archived_pass=archived)
            for record in found:
                own = _own_id(record.hubspot_id, parent_id)
                if own in asked:
                    records[own] = record
                    held.add(own)
            for reject in unread:
                if reject.hubspot_id is None:
                    # Which of the ids it is cannot be told: none of the rest is gone for sure.
                    unsure.update(chunk)
                    continue
                unread_id = _own_id(reject.hubspot_id, parent_id)
                if unread_id in asked:
                    rejects.append(reject)
                    held.add(unread_id)
            if unread:
                log.warning(
                    "portal %s: %d %s object(s) of POST %s cannot be read: %s",
                    self.portal_id,
                    len(unread),
                    spec.name,
                    path,
                    unread[0].reason,
                )
        return _BatchAnswer(
            tuple(records.values()), tuple(rejects), frozenset(held), frozenset(unsure - held)
        )

    async def _parent_exists(self, spec: ContentTypeSpec, parent_id: str | None) -> bool:
        """Whether the (live) parent of a child type's objects is there: a HubDB table."""
        assert spec.parent is not None and parent_id is not None
        parent = self._registry.get(spec.parent)
        try:
            await self._transport.get(
                spec.name, parent.object_path(self._api_version, parent_id), {}
            )
        except HubSpotNotFound:
            return False
        return True

    async def _get_one(
        self,
        spec: ContentTypeSpec,
        parent_id: str | None,
        own_id: str,
        states: tuple[bool, ...] = (False, True),
    ) -> ContentRecord | RejectedObject | None:
        """The object as HubSpot holds it, asked for live and/or archived (`states`, in that
        order); set aside when it cannot be read (as a listing's object is), under the id it
        was asked for if it names none; None when HubSpot answers 404 to each."""
        path = spec.object_path(self._api_version, own_id, parent_id)
        for archived in states:
            params = {"archived": "true" if archived else "false"}
            try:
                body = await self._transport.get(spec.name, path, params)
            except HubSpotNotFound:
                continue
            records, unread = spec.read_page([body], parent_id=parent_id, archived_pass=archived)
            if records:
                return records[0]
            reject = unread[0]
            log.warning(
                "portal %s: the %s object of GET %s cannot be read: %s",
                self.portal_id,
                spec.name,
                path,
                reject.reason,
            )
            if reject.hubspot_id is None:
                asked = own_id if parent_id is None else f"{parent_id}:{own_id}"
                reject = replace(reject, hubspot_id=asked)
            return reject
        return None


def _by_parent(spec: ContentTypeSpec, hubspot_ids: Sequence[str]) -> dict[str | None, list[str]]:
    """Stored ids grouped by parent (HubDB rows: '<table>:<row>'), as own ids."""
    groups: dict[str | None, list[str]] = {}
    for hubspot_id in hubspot_ids:
        parent, _, own = hubspot_id.rpartition(":") if spec.parent else ("", "", hubspot_id)
        groups.setdefault(parent or None, []).append(own)
    return groups


def _own_id(hubspot_id: str, parent_id: str | None) -> str:
    """An object's own id from its stored one (HubDB rows: '<table>:<row>')."""
    prefix = f"{parent_id}:" if parent_id is not None else ""
    return hubspot_id.removeprefix(prefix)
