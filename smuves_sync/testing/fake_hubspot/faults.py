"""Decide, reproducibly, which listing requests get an injected fault.

Every rule counts the requests it matches (1, 2, 3 …). A rule fires on the numbers in its
schedule, or when a hash of (fault seed, rule, number) falls under its share. With one rule per
content type, concurrent fetches of different types cannot disturb each other's sequence.
When several rules fire on one request the first one listed wins.
"""

from __future__ import annotations

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.lifecycle import key_salt, mix64
from smuves_sync.testing.fake_hubspot.spec import FaultRule


class FaultPlan:
    """The fault rules of a server and how many requests each has matched so far."""

    def __init__(self, rules: tuple[FaultRule, ...], seed: int) -> None:
        self.rules = rules
        self._salt = key_salt(f"faults|{seed}")
        self._counts = [0] * len(rules)

    def decide(self, portal_id: int, content_type: ContentType) -> FaultRule | None:
        """Count this request against every matching rule; return the rule that fires."""
        fired: FaultRule | None = None
        for index, rule in enumerate(self.rules):
            if rule.content_type not in (None, content_type):
                continue
            if rule.portal_id not in (None, portal_id):
                continue
            self._counts[index] += 1
            number = self._counts[index]
            if fired is None and self._fires(index, rule, number):
                fired = rule
        return fired

    def _fires(self, index: int, rule: FaultRule, number: int) -> bool:
        if number in rule.on_requests:
            return True
        if rule.share <= 0.0:
            return False
        draw = mix64(self._salt ^ (index << 40) ^ number) / 2.0**64
        return draw < rule.share

    def reset(self) -> None:
        """Start counting matching requests from 1 again."""
        self._counts = [0] * len(self.rules)
