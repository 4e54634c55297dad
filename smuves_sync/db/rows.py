"""Result rows as the package's frozen records: one row factory per record type, used everywhere.

    jobs = await db.all("job_list", params, row=model_row(Job))

`model_row(Record)` is psycopg's ``class_row`` for frozen dataclasses, with the field types
applied: a column read as text becomes the enum its field is typed with (``JobKind``,
``ContentType``, also inside ``X | None`` and ``tuple[X, ...]``), and a field typed as another
record is built from the same row (``RunOverview.run``). Columns are found by name, so a query
may return more of them (``SELECT *``) in any order; a field the query does not return is an
error that names it. Adding a column to a table is one field of its record, nothing more.
"""

from __future__ import annotations

import dataclasses
import operator
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any, Generic, TypeVar, cast

from psycopg.rows import BaseRowFactory, RowMaker, no_result, scalar_row

__all__ = ["KeysetPage", "model_row", "scalar_row"]

T = TypeVar("T")
K = TypeVar("K")
# How a column's value becomes a field's: a lookup (enums) or a function.
Convert = Mapping[Any, Any] | Callable[[Any], Any]


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    name: str
    convert: Convert | None
    # A field typed as another record: built from the same row's columns.
    record: type[Any] | None


def _words(enum: type[Enum], *, nullable: bool) -> Mapping[Any, Any]:
    # A dict lookup: calling an enum class with a value is several times slower.
    found: dict[Any, Any] = {member.value: member for member in enum}
    return {None: None, **found} if nullable else found


def _converter(hint: Any) -> Convert | None:
    """How a column's value becomes a value of `hint` (None: as psycopg loads it)."""
    args = typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _words(hint, nullable=False)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        (inner,) = (arg for arg in args if arg is not type(None))
        if isinstance(inner, type) and issubclass(inner, Enum):
            return _words(inner, nullable=True)
        convert = _converter(inner)
        if convert is None:
            return None
        function = _function(convert)
        return lambda value: None if value is None else function(value)
    if typing.get_origin(hint) is tuple:
        each = _function(_converter(args[0]) or (lambda value: value))
        return lambda values: tuple(each(value) for value in values)
    return None


def _function(convert: Convert) -> Callable[[Any], Any]:
    return convert.__getitem__ if isinstance(convert, Mapping) else convert


_PLANS: dict[type[Any], tuple[_Field, ...]] = {}


def _plan(record: type[Any]) -> tuple[_Field, ...]:
    """How each field of `record` is read (worked out once per record type)."""
    if record not in _PLANS:
        hints = typing.get_type_hints(record)
        _PLANS[record] = tuple(
            _Field(
                field.name,
                _converter(hints[field.name]),
                hints[field.name] if dataclasses.is_dataclass(hints[field.name]) else None,
            )
            for field in dataclasses.fields(record)
        )
    return _PLANS[record]


def _position(columns: Sequence[str], name: str, record: type[Any]) -> int:
    try:
        return columns.index(name)
    except ValueError:
        message = f"{record.__name__}.{name}: the query returns no column {name!r}"
        raise LookupError(message) from None


def _flat_maker(record: type[T], columns: Sequence[str], prefix: str) -> RowMaker[T]:
    # A claim returns hundreds of jobs, and building them can cost more client time than the
    # claim itself. So the maker is generated as one expression, the way dataclasses generates
    # __init__: `record(values[0], kinds[values[3]], ...)` costs what a hand-written call does.
    # Its text holds only positions and generated names, never anything from a row.
    namespace: dict[str, Any] = {"record": record}
    arguments = []
    for index, field in enumerate(_plan(record)):
        value = f"values[{_position(columns, prefix + field.name, record)}]"
        if isinstance(field.convert, Mapping):
            namespace[f"lookup_{index}"] = field.convert
            value = f"lookup_{index}[{value}]"
        elif field.convert is not None:
            namespace[f"convert_{index}"] = field.convert
            value = f"convert_{index}({value})"
        arguments.append(value)
    return cast(RowMaker[T], eval(f"lambda values: record({', '.join(arguments)})", namespace))


def _maker(record: type[T], columns: Sequence[str], prefix: str) -> RowMaker[T]:
    plan = _plan(record)
    if all(field.record is None for field in plan):
        return _flat_maker(record, columns, prefix)
    parts: list[RowMaker[Any]] = []
    for field in plan:
        if field.record is not None:
            parts.append(_maker(field.record, columns, prefix))
            continue
        pick: RowMaker[Any] = operator.itemgetter(_position(columns, prefix + field.name, record))
        parts.append(pick if field.convert is None else _composed(_function(field.convert), pick))
    return lambda values: record(*[part(values) for part in parts])


def _composed(convert: Callable[[Any], Any], pick: RowMaker[Any]) -> RowMaker[Any]:
    return lambda values: convert(pick(values))


_FACTORIES: dict[tuple[type[Any], str], BaseRowFactory[Any]] = {}


def model_row(record: type[T], prefix: str = "") -> BaseRowFactory[T]:
    """A row factory making `record`s (frozen dataclasses) from the columns named
    `prefix` + field name."""
    found: BaseRowFactory[T] | None = _FACTORIES.get((record, prefix))
    if found is not None:
        return found
    # One maker per list of column names, built on its first use. The key is the result's raw
    # names: reading `cursor.description` makes a Column object per column, which on a claim
    # would cost more than the rows.
    makers: dict[tuple[bytes | None, ...], RowMaker[T]] = {}

    # psycopg passes its cursor (a BaseCursor, which it does not export).
    def factory(cursor: Any) -> RowMaker[T]:
        result = cursor.pgresult
        if result is None or not result.nfields:
            return no_result
        names = tuple(result.fname(index) for index in range(result.nfields))
        maker = makers.get(names)
        if maker is None:
            columns = [column.name for column in cursor.description]
            maker = makers[names] = _maker(record, columns, prefix)
        return maker

    _FACTORIES[record, prefix] = factory
    return factory


@dataclasses.dataclass(frozen=True, slots=True)
class KeysetPage(Generic[T, K]):
    """One page of a keyset listing; `last_key` (the last item's key) is set when another page
    follows, for the next one to start after."""

    items: tuple[T, ...]
    last_key: K | None

    @classmethod
    def of(cls, rows: Sequence[T], limit: int, key: Callable[[T], K]) -> KeysetPage[T, K]:
        """The first `limit` of `rows`, which were read with one more to tell whether another
        page follows."""
        items = tuple(rows[:limit])
        more = len(rows) > limit
        return cls(items, key(items[-1]) if more and items else None)
