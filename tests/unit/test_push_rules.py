"""The push's rules item by item: conflict or rebase, the decision after a lost answer, what is
sent (a HubDB row's values whole), and what counts as applied."""

from __future__ import annotations

from smuves_sync.db.push import PushItem
from smuves_sync.workers.push_rules import body, plan, verdict

BASE = "2026-01-01T00:00:00Z"
LATER = "2026-02-01T00:00:00Z"


def _item(**fields: object) -> PushItem:
    before = {"htmlTitle": "old", "values.price": 1, "values.name": "a"}
    return PushItem("1", BASE, dict(fields), {k: before[k] for k in fields})


def test_untouched_since_the_base_is_written() -> None:
    decided = plan(_item(htmlTitle="new"), {"htmlTitle": "old", "updated": BASE})
    assert (decided.action, decided.body, decided.rebased) == ("write", {"htmlTitle": "new"}, False)


def test_moved_with_the_field_untouched_is_rebased_and_with_it_changed_is_a_conflict() -> None:
    item = _item(htmlTitle="new")
    rebased = plan(item, {"htmlTitle": "old", "name": "renamed", "updated": LATER})
    assert (rebased.action, rebased.rebased) == ("write", True)
    conflict = plan(item, {"htmlTitle": "a person's", "updated": LATER})
    assert conflict.action == "conflict" and "htmlTitle" in (conflict.reason or "")


def test_already_showing_the_new_values_is_applied_and_a_gone_object_failed() -> None:
    assert plan(_item(htmlTitle="new"), {"htmlTitle": "new", "updated": LATER}).action == "applied"
    assert plan(_item(htmlTitle="new"), None).action == "failed"


def test_after_a_lost_answer_only_an_object_nobody_touched_is_sent_again() -> None:
    item = _item(htmlTitle="new")
    seen = LATER  # HubSpot's `updated` just before the write whose answer was lost
    assert plan(item, {"htmlTitle": "new", "updated": "x"}, seen).action == "applied"
    assert plan(item, {"htmlTitle": "old", "updated": seen}, seen).action == "write"
    moved = plan(item, {"htmlTitle": "old", "updated": "2026-03-01T00:00:00Z"}, seen)
    assert moved.action == "conflict" and "not sent again" in (moved.reason or "")


def test_a_hubdb_rows_values_are_sent_whole_with_the_changed_cells() -> None:
    item = _item(**{"values.price": 2})
    now = {"values": {"price": 1, "name": "a", "tags": [1]}, "updatedAt": BASE}
    assert body(item, now) == {"values": {"price": 2, "name": "a", "tags": [1]}}


def test_applied_only_when_hubspot_shows_every_new_value() -> None:
    item = _item(htmlTitle="new", **{"values.name": "b"})
    assert verdict(item, {"htmlTitle": "new", "values": {"name": "b"}}, None).action == "applied"
    half = verdict(item, {"htmlTitle": "new", "values": {"name": "a"}}, None)
    assert half.action == "failed" and "values.name" in (half.reason or "")
    assert verdict(item, {"htmlTitle": "old"}, "slug is taken").reason == "slug is taken"
