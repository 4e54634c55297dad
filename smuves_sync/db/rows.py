"""Result rows as the package's frozen records: one row factory per record type, used everywhere.

    jobs = await db.all("job_list", params, row=model_row(Job))

`model_row(Record)` is psycopg's ``class_row`` for frozen dataclasses, with the field types
applied: a column read as text becomes the enum its field is typed with (``JobKind``,
``ContentType``, also inside ``X | None`` and ``tuple[X, ...]``), and a field typed as another
record is built from the same row (``RunOverview.run``). Columns are found by name, so a query
may return more of them (``SELECT *``) in any order; a field the query does not return is an
error that names it. Adding a column to a table is one field of its record, nothing more.

A claim returns hundreds of jobs, and building them in Python can cost more than the claim
itself: the positions and converters are worked out once per result, and a row is then one
``itemgetter``, a dict lookup per enum field and the record's constructor.
"""

from __future__ import annotations

import dataclasses
import operator
import types
import typing
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, TypeVar

from psycopg.rows import BaseRowFactory, RowMaker, no_result, scalar_row

__all__ = ["model_row", "scalar_row"]

T = TypeVar("T")
Convert = Callable[[Any], Any]


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    name: str
    convert: Convert | None
    # A field typed as another record: built from the same row's columns.
    record: type[Any] | None


def _converter(hint: Any) -> Convert | None:
    """How a column's value becomes a value of `hint` (None: as psycopg loads it)."""
    args = typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return {member.value: member for member in hint}.__getitem__
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        (inner,) = (arg for arg in args if arg is not type(None))
        if isinstance(inner, type) and issubclass(inner, Enum):
            return {None: None, **{member.value: member for member in inner}}.__getitem__
        return _converter(inner)
    if typing.get_origin(hint) is tuple:
        each = _converter(args[0]) or (lambda value: value)
        return lambda values: tuple(each(value) for value in values)
    return None


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
        raise LookupError(
            f"{record.__name__}.{name}: the query returns no column {name!r}"
        ) from None


def _maker(record: type[T], columns: Sequence[str], prefix: str) -> RowMaker[T]:
    plan = _plan(record)
    if any(field.record is not None for field in plan):
        parts: list[RowMaker[Any]] = []
        for field in plan:
            if field.record is not None:
                parts.append(_maker(field.record, columns, prefix))
                continue
            pick: RowMaker[Any] = operator.itemgetter(
                _position(columns, prefix + field.name, record)
            )
            parts.append(pick if field.convert is None else _composed(field.convert, pick))
        return lambda values: record(*[part(values) for part in parts])

    positions = [_position(columns, prefix + field.name, record) for field in plan]
    # itemgetter of one position returns the value itself, of several a tuple
    pick_all: RowMaker[Sequence[Any]] = (
        operator.itemgetter(*positions)
        if len(positions) > 1
        else lambda values: (values[positions[0]],)
    )
    converts = [(index, field.convert) for index, field in enumerate(plan) if field.convert]

    def make(values: Sequence[Any]) -> T:
        row = list(pick_all(values))
        for index, convert in converts:
            row[index] = convert(row[index])
        return record(*row)

    return make


def _composed(convert: Convert, pick: RowMaker[Any]) -> RowMaker[Any]:
    return lambda values: convert(pick(values))


_FACTORIES: dict[tuple[type[Any], str], BaseRowFactory[Any]] = {}


def model_row(record: type[T], prefix: str = "") -> BaseRowFactory[T]:
    """A row factory making `record`s (frozen dataclasses) from the columns named
    `prefix` + field name."""
    found: BaseRowFactory[T] | None = _FACTORIES.get((record, prefix))
    if found is not None:
        return found

    # psycopg passes its cursor (a BaseCursor, which it does not export).
    def factory(cursor: Any) -> RowMaker[T]:
        if cursor.description is None:
            return no_result
        return _maker(record, [column.name for column in cursor.description], prefix)

    _FACTORIES[record, prefix] = factory
    return factory
