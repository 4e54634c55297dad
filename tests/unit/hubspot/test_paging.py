"""The paging strategy and the resume cursor, without HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.errors import InvalidInput
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.paging import ForwardPaging, PagingError, Position


def body(next_: Any = None, *, paging: Any = "auto") -> dict[str, Any]:
    if paging == "auto":
        paging = None if next_ is None else {"next": next_}
    return {"results": [{}], **({} if paging is None else {"paging": paging})}


def test_after_tokens_are_followed_until_there_is_no_next() -> None:
    paging = ForwardPaging()
    assert paging.advance(body({"after": "a"}), 1) == Position(after="a")
    assert paging.advance(body({"after": "b", "link": "x"}), 1) == Position(after="b")
    assert paging.advance(body(None), 1) is None
    assert paging.advance({"results": [], "paging": {}}, 0) is None
    assert paging.current == Position(after="b")


def test_offsets_are_followed() -> None:
    paging = ForwardPaging(Position(offset=1000))
    assert paging.advance(body({"offset": 2000}), 1000) == Position(offset=2000)
    assert Position(offset=2000).query() == {"offset": "2000"}
    assert Position(after="x").query() == {"after": "x"}
    assert Position().query() == {}


@pytest.mark.parametrize(
    ("start", "response", "count", "message"),
    [
        (Position(after="a"), body({"after": "a"}), 1, "repeats"),
        (Position(offset=5), body({"offset": 5}), 1, "does not move forward"),
        (Position(offset=5), body({"offset": 3}), 1, "does not move forward"),
        (Position(), body({"after": "a"}), 0, "empty page"),
        (Position(), body({"link": "x"}), 1, "neither"),
        (Position(), body({"after": 7}), 1, "non-empty string"),
        (Position(), body({"after": ""}), 1, "non-empty string"),
        (Position(), body({"offset": "7"}), 1, "non-negative integer"),
        (Position(), body({"offset": True}), 1, "non-negative integer"),
        (Position(), body(paging=[1]), 1, "'paging' is list"),
        (Position(), body(paging={"next": "x"}), 1, "'paging.next' is str"),
    ],
)
def test_paging_that_would_loop_or_is_garbled_is_refused(
    start: Position, response: dict[str, Any], count: int, message: str
) -> None:
    with pytest.raises(PagingError, match=message):
        ForwardPaging(start).advance(response, count)


def test_a_token_seen_earlier_in_the_listing_is_refused() -> None:
    paging = ForwardPaging()
    paging.advance(body({"after": "a"}), 1)
    paging.advance(body({"after": "b"}), 1)
    with pytest.raises(PagingError, match="repeats"):
        paging.advance(body({"after": "a"}), 1)


@pytest.mark.parametrize(
    "cursor",
    [
        Cursor("site_page"),
        Cursor("site_page", archived=True, position=Position(after="Mg%3D%3D")),
        Cursor("hubdb_row", parent="1001", position=Position(offset=1000)),
        Cursor("hubdb_row", parent="cities", parent_done=True),
        Cursor("blog_post", archived=True, done=True),
    ],
)
def test_cursors_survive_a_round_trip_as_ascii(cursor: Cursor) -> None:
    text = cursor.encode()
    assert text.isascii()
    assert " " not in text
    assert Cursor.decode(text, cursor.content_type) == cursor


def test_cursors_are_checked_on_the_way_in() -> None:
    text = Cursor("site_page").encode()
    with pytest.raises(InvalidInput, match="does not belong"):
        Cursor.decode(text, "blog_post")
    with pytest.raises(InvalidInput):
        Cursor.decode("c1." + "e30", "site_page")  # "{}": no type
