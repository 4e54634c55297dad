"""The content-type registry: the specs the client lists and reads, looked up by their word.

`DEFAULT_REGISTRY` holds the spec of every `ContentType` (smuves_sync.content_types, the one
list of types). `with_types` makes a registry with more specs beside them, for a client that
lists a type the product does not store (tests, experiments)::

    registry = DEFAULT_REGISTRY.with_types(ContentTypeSpec(name="blog_topic", ...))
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from smuves_sync.content_types import ContentType, ContentTypeSpec
from smuves_sync.errors import UnknownContentType

__all__ = ["DEFAULT_REGISTRY", "ContentTypeRegistry"]


class ContentTypeRegistry:
    """An immutable set of content-type specs, looked up by their word."""

    def __init__(self, specs: Iterable[ContentTypeSpec]) -> None:
        by_name: dict[str, ContentTypeSpec] = {}
        for spec in specs:
            if spec.name in by_name:
                raise ValueError(f"content type {spec.name!r} is registered twice")
            by_name[spec.name] = spec
        for spec in by_name.values():
            if spec.parent is not None and spec.parent not in by_name:
                raise ValueError(f"{spec.name}: parent type {spec.parent!r} is not registered")
        self._specs = MappingProxyType(by_name)

    def get(self, word: str) -> ContentTypeSpec:
        """The spec for `word`; `UnknownContentType` names the known words otherwise."""
        try:
            return self._specs[str(word)]
        except KeyError:
            raise UnknownContentType(str(word), self.names()) from None

    def names(self) -> tuple[str, ...]:
        """Every registered content-type word, in registration order."""
        return tuple(self._specs)

    def with_types(self, *specs: ContentTypeSpec) -> ContentTypeRegistry:
        """A new registry with `specs` added to these."""
        return ContentTypeRegistry([*self._specs.values(), *specs])

    def __contains__(self, word: object) -> bool:
        return word in self._specs


DEFAULT_REGISTRY = ContentTypeRegistry(content_type.spec for content_type in ContentType)
