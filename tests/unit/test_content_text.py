"""The one rule that stores text Postgres cannot hold, and the ways it is given back."""

from __future__ import annotations

import json
import random

import pytest

from smuves_sync.content_text import (
    escape_text,
    escape_value,
    needs_escape,
    replace_escaped,
    replace_unstorable,
    unescape_json,
    unescape_text,
    unescape_value,
)

TRICKY = [
    "",
    "plain text, Grüße, 😀 and \u2028",
    "\x00",
    "a\x00b\x00",
    "\ud800",
    "\udfff\ud800",  # two lone surrogates in the wrong order are not a pair
    "\ufdd0",
    "\ufdd00000",  # the mark followed by what its escape looks like
    "\ufdd0D800",
    "\\u0000 is six characters here",
    "\ufdd0zz",
]


def _random_texts(count: int) -> list[str]:
    alphabet = ["a", "0", "D", "F", "\\", '"', "\x00", "\ud800", "\udc00", "\ufdd0", "é", "😀"]
    rng = random.Random(7)
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 12))) for _ in range(count)]
    # Text read from JSON never holds a high surrogate right before a low one: the parser
    # makes the pair one character.
    return [t for t in texts if "\ud800\udc00" not in t]


@pytest.mark.parametrize("text", TRICKY + _random_texts(300))
def test_the_rule_round_trips_and_leaves_only_storable_text(text: str) -> None:
    escaped = escape_text(text)
    assert unescape_text(escaped) == text
    escaped.encode("utf-8")  # no lone surrogate left
    assert "\x00" not in escaped
    assert needs_escape(text) == (escaped != text)
    # The JSON Lines form says exactly the same, and is UTF-8.
    document = unescape_json(json.dumps({"k" + escaped: escaped}, ensure_ascii=False))
    document.encode("utf-8")
    assert json.loads(document) == {"k" + text: text}
    # A CSV cell: what text cannot hold is U+FFFD, everything else as sent.
    assert replace_escaped(escaped) == replace_unstorable(text)


def test_the_escaped_forms_are_the_documented_ones() -> None:
    assert escape_text("a\x00b") == "a\ufdd00000b"
    assert escape_text("\ud83d!") == "\ufdd0D83D!"
    assert escape_text("\ufdd0") == "\ufdd0FDD0"
    assert escape_text("Grüße 😀") == "Grüße 😀"
    assert replace_escaped("a\ufdd00000b\ufdd0DC00") == "a\ufffdb\ufffd"
    # Text after a mark that the rule did not write is left alone.
    assert unescape_text("\ufdd0zz\ufdd0ABCD") == "\ufdd0zz\ufdd0ABCD"


def test_documents_are_escaped_keys_and_all() -> None:
    raw = {"a\x00": ["\ud800", {"n": 1, "t": None, "x": "\x00"}], "b": 2.5}
    escaped = escape_value(raw)
    assert escaped == {
        "a\ufdd00000": ["\ufdd0D800", {"n": 1, "t": None, "x": "\ufdd00000"}],
        "b": 2.5,
    }
    assert unescape_value(escaped) == raw
