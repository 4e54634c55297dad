"""Writing to one portal's CMS: the reads a write needs, the writes, and what HubSpot answered.

    writer = client.writer()
    now = await writer.read("site_page", ids)                 # live, then archived: records
    drafts = await writer.read_drafts("site_page", ids)       # the draft buffers
    answer = await writer.update("site_page", {id: {"htmlTitle": "…"}})   # batch/update
    answer = await writer.update_drafts("hubdb_row", {"7:12": {"values": {…}}})
    await writer.push_live("site_page", id); await writer.publish_table("7")
    table = await writer.table_draft("7")                     # its updatedAt, publishedAt

Every write goes through `Transport.write`: never retried, a lost answer is
`WriteOutcomeUnknown`, a 429 waits on the portal's one budget (shared with its fetches) and
spends nothing. HubSpot has no ETag, If-Match or idempotency key on CMS writes, so an answer is
never taken for an outcome: the caller reads the objects back (`read`, `read_drafts`) and counts
an edit applied only when HubSpot shows it. A whole-batch 400 raises `HubSpotBadRequest` (the
caller splits the batch to find the input HubSpot refuses); a 207's errors are mapped to the
inputs they name (`WriteAnswer.failed`). Ids are the stored ones (HubDB rows '<table>:<row>').
Which types have a batch update and a draft buffer: `_BATCH_UPDATE`, `DRAFT_TYPES` (from
HubSpot's specs; redirects have no batch update, authors and tags no draft).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from smuves_sync.content_fields import ContentRecord
from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.errors import HubSpotNotFound
from smuves_sync.hubspot.confirm import Confirmer
from smuves_sync.hubspot.listing import PortalReader, results_of

# Inputs per batch write: HubSpot's batch endpoints take up to 100.
BATCH_WRITE_SIZE = 100
# Types whose live objects take `POST <list path>/batch/update`; the rest are PATCHed by id.
_BATCH_UPDATE = frozenset(
    {"site_page", "landing_page", "blog_post", "blog_author", "blog_tag", "hubdb_row"}
)
# Types with a draft buffer beside the live object (`…/{id}/draft`, `…/draft/push-live`).
DRAFT_TYPES = frozenset({"site_page", "landing_page", "blog_post"})
# The keys of a 207 error's `context` that may name its inputs (the spec does not say which).
_ERROR_ID_KEYS = ("ids", "id", "objectId", "objectIds", "rowId", "rowIds")


@dataclass(frozen=True, slots=True)
class WriteAnswer:
    """What HubSpot answered to writes: the objects it returned (own ids, as records where
    they could be read) and the inputs it said it refused, with its reason."""

    returned: tuple[str, ...] = ()
    failed: Mapping[str, str] = field(default_factory=dict)
    # An error that names no input: which one failed cannot be told from the answer.
    unplaced: tuple[str, ...] = ()
    # The objects returned, as HubSpot answered them, by stored id.
    objects: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def merged(self, other: WriteAnswer) -> WriteAnswer:
        """Both answers as one."""
        return WriteAnswer(
            self.returned + other.returned,
            {**self.failed, **other.failed},
            self.unplaced + other.unplaced,
            {**self.objects, **other.objects},
        )


class Writer(PortalReader):
    """Reads for writing, and writes, one portal's objects."""

    async def read(self, content_type: str, hubspot_ids: Sequence[str]) -> dict[str, ContentRecord]:
        """The objects as HubSpot holds them now (live, else archived), by stored id; an object
        HubSpot no longer holds is missing. For HubDB rows: the published rows."""
        answer = await Confirmer(self._transport, self._registry, self._api_version).confirm(
            content_type, hubspot_ids
        )
        return {record.hubspot_id: record for record in answer.present}

    async def read_drafts(
        self, content_type: str, hubspot_ids: Sequence[str]
    ) -> dict[str, ContentRecord]:
        """The draft of each object: a page's or post's buffer (`GET …/{id}/draft`, one request
        each), a HubDB row's draft (`POST …/rows/draft/batch/read`, 100 a request)."""
        spec = self._registry.get(content_type)
        found: dict[str, ContentRecord] = {}
        if spec.parent is not None:
            for parent_id, own_ids in by_parent(spec, hubspot_ids).items():
                path = f"{spec.list_path(self._api_version, parent_id)}/draft/batch/read"
                for chunk in _chunks(own_ids):
                    try:
                        body = await self._transport.post(
                            spec.name, path, {}, {"inputs": list(chunk)}
                        )
                    except HubSpotNotFound:
                        break  # the table is gone: its rows are too
                    found.update(self._records(spec, body, path, len(chunk), parent_id))
            return found
        for hubspot_id in hubspot_ids:
            path = f"{spec.object_path(self._api_version, hubspot_id)}/draft"
            try:
                body = await self._transport.get(spec.name, path, {})
            except HubSpotNotFound:
                continue
            records, _ = spec.read_page([body])
            found.update((r.hubspot_id, r) for r in records if r.hubspot_id == hubspot_id)
        return found

    async def update(
        self, content_type: str, changes: Mapping[str, Mapping[str, Any]]
    ) -> WriteAnswer:
        """Write `changes` (stored id -> the top-level fields to set) to the live objects: one
        `batch/update` per 100 where the type has it, else a PATCH by id. HubDB rows have no
        live write: see `update_drafts`."""
        spec = self._registry.get(content_type)
        if spec.parent is not None:
            return await self.update_drafts(content_type, changes)
        if spec.name in _BATCH_UPDATE:
            path = f"{spec.list_path(self._api_version)}/batch/update"
            return await self._batches(spec, path, None, changes)
        answer = WriteAnswer()
        for hubspot_id, fields in changes.items():
            path = spec.object_path(self._api_version, hubspot_id)
            answer = answer.merged(await self._patch(spec, path, hubspot_id, fields))
        return answer

    async def update_drafts(
        self, content_type: str, changes: Mapping[str, Mapping[str, Any]]
    ) -> WriteAnswer:
        """Write `changes` to the drafts: a page's or post's buffer by PATCH (`…/{id}/draft`,
        HubSpot has no batch of those), HubDB rows by `rows/draft/batch/update` per table."""
        spec = self._registry.get(content_type)
        answer = WriteAnswer()
        if spec.parent is not None:
            for parent_id, own_ids in by_parent(spec, list(changes)).items():
                path = f"{spec.list_path(self._api_version, parent_id)}/draft/batch/update"
                own = {o: changes[f"{parent_id}:{o}"] for o in own_ids}
                answer = answer.merged(await self._batches(spec, path, parent_id, own))
            return answer
        for hubspot_id, fields in changes.items():
            path = f"{spec.object_path(self._api_version, hubspot_id)}/draft"
            answer = answer.merged(await self._patch(spec, path, hubspot_id, fields))
        return answer

    async def push_live(self, content_type: str, hubspot_id: str) -> None:
        """Publish a page's or post's whole draft buffer (`…/{id}/draft/push-live`, 204)."""
        spec = self._registry.get(content_type)
        path = f"{spec.object_path(self._api_version, hubspot_id)}/draft/push-live"
        await self._transport.write(spec.name, "POST", path, None)

    async def publish_table(self, table_id: str) -> None:
        """Publish a HubDB table's draft, every row of it (`…/tables/{t}/draft/publish`)."""
        spec = self._registry.get("hubdb_table")
        path = f"{spec.object_path(self._api_version, table_id)}/draft/publish"
        await self._transport.write("hubdb_row", "POST", path, None)

    async def table_draft(self, table_id: str) -> dict[str, Any]:
        """A HubDB table's draft (`GET …/tables/{t}/draft`): its `updatedAt` moves with every
        draft edit, its `publishedAt` with each publication."""
        spec = self._registry.get("hubdb_table")
        path = f"{spec.object_path(self._api_version, table_id)}/draft"
        return await self._transport.get("hubdb_row", path, {})

    async def _batches(
        self,
        spec: ContentTypeSpec,
        path: str,
        parent_id: str | None,
        changes: Mapping[str, Mapping[str, Any]],
    ) -> WriteAnswer:
        answer = WriteAnswer()
        own_ids = list(changes)
        for chunk in _chunks(own_ids):
            inputs = [{"id": own, **changes[own]} for own in chunk]
            body = await self._transport.write(spec.name, "POST", path, {"inputs": inputs})
            answer = answer.merged(_answer_of(body, chunk, parent_id))
        return answer

    async def _patch(
        self, spec: ContentTypeSpec, path: str, hubspot_id: str, fields: Mapping[str, Any]
    ) -> WriteAnswer:
        await self._transport.write(spec.name, "PATCH", path, dict(fields))
        return WriteAnswer(returned=(hubspot_id,))

    def _records(
        self,
        spec: ContentTypeSpec,
        body: Mapping[str, Any],
        path: str,
        asked: int,
        parent_id: str | None,
    ) -> dict[str, ContentRecord]:
        try:
            results = results_of(body, asked)
        except ValueError as exc:
            raise self._transport.malformed(spec.name, f"POST {path}: {exc}") from None
        records, _ = spec.read_page(results, parent_id=parent_id)
        return {r.hubspot_id: r for r in records}


def _answer_of(body: Mapping[str, Any], chunk: Sequence[str], parent_id: str | None) -> WriteAnswer:
    """A batch write's answer: the ids returned, and a 207's errors mapped to the inputs."""
    prefix = f"{parent_id}:" if parent_id is not None else ""
    asked = set(chunk)
    returned = []
    objects: dict[str, Mapping[str, Any]] = {}
    for result in body.get("results") or []:
        if isinstance(result, Mapping) and str(result.get("id")) in asked:
            returned.append(prefix + str(result["id"]))
            objects[prefix + str(result["id"])] = result
    failed: dict[str, str] = {}
    unplaced: list[str] = []
    for error in body.get("errors") or []:
        if not isinstance(error, Mapping):
            continue
        reason = str(error.get("message") or error.get("category") or "refused by HubSpot")[:300]
        named = [own for own in _error_ids(error) if own in asked]
        for own in named:
            failed[prefix + own] = reason
        if not named:
            unplaced.append(reason)
    return WriteAnswer(tuple(returned), failed, tuple(unplaced), objects)


def _error_ids(error: Mapping[str, Any]) -> list[str]:
    """The input ids a 207 error names: its `id`, or ids in its `context`."""
    ids = [str(error["id"])] if error.get("id") is not None else []
    context = error.get("context")
    if isinstance(context, Mapping):
        for key in _ERROR_ID_KEYS:
            values = context.get(key)
            if isinstance(values, list):
                ids.extend(str(v) for v in values)
            elif values is not None:
                ids.append(str(values))
    return ids


def by_parent(spec: ContentTypeSpec, hubspot_ids: Sequence[str]) -> dict[str, list[str]]:
    """A child type's stored ids ('<table>:<row>') as own ids, grouped by parent."""
    groups: dict[str, list[str]] = {}
    for hubspot_id in hubspot_ids:
        parent, _, own = hubspot_id.rpartition(":")
        groups.setdefault(parent, []).append(own)
    assert spec.parent is not None
    return groups


def _chunks(ids: Sequence[str]) -> list[Sequence[str]]:
    return [ids[i : i + BATCH_WRITE_SIZE] for i in range(0, len(ids), BATCH_WRITE_SIZE)]
