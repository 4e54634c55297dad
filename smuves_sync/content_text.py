"""How text Postgres cannot hold is stored, and how it is given back.

HubSpot's JSON can carry two things that Postgres text and jsonb refuse: the NUL character
(``\\u0000``) and lone surrogates (``\\ud800`` without its pair, which is not Unicode text at
all). Every string of a stored object — the keys and values of its document and its promoted
columns (name, slug, url, state, language) — is therefore stored with each such code point,
and the escape mark itself, written as the mark U+FDD0 followed by the code point's four
upper-case hex digits::

    "\\x00"   ->  "\\ufdd0" "0000"
    "\\ud800" ->  "\\ufdd0" "D800"        (any of U+D800 … U+DFFF, when unpaired)
    "\\ufdd0" ->  "\\ufdd0" "FDD0"

U+FDD0 is a Unicode noncharacter: reserved for a program's internal use and never part of
text people write, so real content is stored exactly as HubSpot sent it. The rule round-trips:
``unescape_text(escape_text(s)) == s`` for every Python string ``s``, and `escape_text` of a
string that needs nothing returns it unchanged. What hands content back decodes it: the API
(`unescape_value`), JSON Lines exports (`unescape_json`: the characters come back as the JSON
escapes HubSpot sent), CSV exports (`replace_escaped`: U+FFFD, the replacement character, in
place of each, since a spreadsheet cell can hold neither).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

ESCAPE = "\ufdd0"
ESCAPE_UTF8 = ESCAPE.encode()
REPLACEMENT = "\ufffd"
# What Postgres text refuses (lone surrogates are the only surrogates a Python str holds: a
# JSON pair is decoded into one character), and the mark, so that the rule can be undone.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff\ufdd0]")
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")
# Exactly what `escape_text` writes, no more: other text after a U+FDD0 is left alone.
_ESCAPED = re.compile("\ufdd0(0000|D[89A-F][0-9A-F]{2}|FDD0)")


def _escape(match: re.Match[str]) -> str:
    return f"{ESCAPE}{ord(match.group()):04X}"


def escape_text(text: str) -> str:
    """`text` with NULs, lone surrogates and the mark written as the mark and four hex digits."""
    return _UNSTORABLE.sub(_escape, text)


def needs_escape(text: str) -> bool:
    """Whether `escape_text` would change `text`."""
    return _UNSTORABLE.search(text) is not None


def unescape_text(text: str) -> str:
    """Undo `escape_text`."""
    if ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def replace_escaped(text: str) -> str:
    """Stored text for a reader that cannot take NULs or lone surrogates (a CSV cell): each
    becomes U+FFFD; an escaped mark comes back as itself."""
    if ESCAPE not in text:
        return text
    return _NOT_TEXT.sub(REPLACEMENT, unescape_text(text))


def replace_unstorable(text: str) -> str:
    """`text` with NULs and lone surrogates replaced by U+FFFD (for messages, not content)."""
    return _NOT_TEXT.sub(REPLACEMENT, text)


def unescape_json(text: str) -> str:
    """Stored text inside serialised JSON, decoded into JSON escapes (``\\u0000``, ``\\ud800``),
    so the JSON says what HubSpot sent and still encodes as UTF-8."""
    if ESCAPE not in text:
        return text
    return _ESCAPED.sub(
        lambda m: ESCAPE if m.group(1) == "FDD0" else "\\u" + m.group(1).lower(), text
    )


def escape_value(value: Any) -> Any:
    """A JSON value (dicts, lists, scalars) with every string, keys too, escaped."""
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, Mapping):
        return {escape_text(str(k)): escape_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escape_value(v) for v in value]
    return value


def unescape_value(value: Any) -> Any:
    """Undo `escape_value`."""
    if isinstance(value, str):
        return unescape_text(value)
    if isinstance(value, Mapping):
        return {unescape_text(k): unescape_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unescape_value(v) for v in value]
    return value
