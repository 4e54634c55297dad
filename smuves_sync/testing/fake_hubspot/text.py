"""Deterministic, readable filler: titles, slugs, sentences and timestamps from a 64-bit hash."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from smuves_sync.testing.fake_hubspot.lifecycle import mix64

_ADJECTIVES = (
    "Practical", "Modern", "Essential", "Quiet", "Bold", "Simple", "Hidden", "Complete",
    "Honest", "Rapid", "Gentle", "Smart", "Curious", "Open", "Better", "Lasting",
)  # fmt: skip
_NOUNS = (
    "Guide", "Playbook", "Checklist", "Story", "Handbook", "Primer", "Roadmap", "Toolkit",
    "Review", "Notes", "Lessons", "Answers", "Manual", "Survey", "Insights", "Recipes",
)  # fmt: skip
_TOPICS = (
    "Inbound Marketing", "Customer Success", "Email Design", "Sales Enablement",
    "Content Strategy", "Landing Pages", "SEO Basics", "Lead Scoring", "Onboarding",
    "Pricing Pages", "Webinars", "Brand Voice", "Analytics", "Automation", "Community",
    "Product Launches",
)  # fmt: skip
_WORDS = (
    "team", "growth", "customer", "content", "page", "plan", "launch", "result", "update",
    "market", "search", "visitor", "lead", "offer", "goal", "signal", "habit", "metric",
    "story", "channel", "budget", "partner", "design", "feature", "release", "insight",
    "question", "answer", "journey", "pipeline", "workflow", "campaign",
)  # fmt: skip


def title(h: int) -> str:
    """A three-part title such as 'Practical Guide to Email Design' (4096 possible)."""
    return _TITLES[h & 4095]


def slugify(text: str) -> str:
    """Lower-case words joined by hyphens, as HubSpot builds default slugs."""
    kept = "".join(ch.lower() if ch.isalnum() else " " for ch in text)
    return "-".join(kept.split())


def title_slug(h: int) -> str:
    """The slug of `title(h)`."""
    return _SLUGS[h & 4095]


def _make_sentence(h: int, words: int) -> str:
    picked = []
    for _ in range(words):
        h = mix64(h)
        picked.append(_WORDS[h & 31])
    text = " ".join(picked)
    return text[0].upper() + text[1:] + "."


def sentence(h: int) -> str:
    """One of 1024 filler sentences, chosen by the hash."""
    return _SENTENCES[h & 1023]


def paragraphs(h: int, count: int) -> str:
    """`count` HTML paragraphs (of 256 prepared ones) chosen by the hash."""
    return "".join(_PARAGRAPHS[(h >> (8 * i)) & 255] for i in range(count))


# Prepared once: generating filler per object would dominate the cost of serving a page.
_TITLES = tuple(
    f"{_ADJECTIVES[i & 15]} {_NOUNS[(i >> 4) & 15]} to {_TOPICS[(i >> 8) & 15]}"
    for i in range(4096)
)
_SLUGS = tuple(slugify(text) for text in _TITLES)
_SENTENCES = tuple(_make_sentence(i, 9 + i % 10) for i in range(1024))
_PARAGRAPHS = tuple(
    f"<p>{_SENTENCES[(i * 7) & 1023]} {_SENTENCES[(i * 13 + 5) & 1023]}</p>" for i in range(256)
)


def iso_ms(ms: int) -> str:
    """RFC 3339 UTC timestamp with milliseconds, the way HubSpot writes them."""
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(ms // 1000))}.{ms % 1000:03d}Z"


def datetime_ms(ms: int) -> datetime:
    """The aware datetime of a millisecond timestamp."""
    return datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=ms % 1000 * 1000)
