# SPDX-License-Identifier: Apache-2.0
"""Small shared pieces of the object layer: timestamps, identifiers, paging."""

import copy
import datetime
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa

from ferrum.common import exception

_T = TypeVar('_T')


def utcnow() -> datetime.datetime:
    """Naive UTC now, as the database stores it."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def is_uuid_like(value: object) -> bool:
    """Whether ``value`` is a UUID string in any of its usual spellings."""
    if not isinstance(value, str):
        return False
    if len(value) not in (32, 36):
        return False
    try:
        uuidlib.UUID(value)
    except ValueError:
        return False
    return True


#: The columns an identifier can name (see :func:`ident_column`).
IDENT_COLUMNS = ('id', 'uuid', 'name')


def ident_column(ident: int | str) -> tuple[str, int | str]:
    """Which column an identifier names (id, UUID or name), and its value."""
    if isinstance(ident, int):
        return 'id', ident
    if is_uuid_like(ident):
        return 'uuid', ident.lower()
    return 'name', ident


def bucketed(values: Sequence[_T]) -> list[_T]:
    """``values`` padded (with its last item) to a power-of-two length.

    An ``IN`` list is rendered as one placeholder per value, so every
    distinct length is a distinct SQL text, and database drivers keep a
    prepared statement per text (pysqlite caches 128 per connection).
    Client-sized lists, such as an allocation's candidate nodes, would
    otherwise fill those caches with huge statements; with buckets there
    are at most a dozen texts per query. Repeating a value in ``IN``
    changes nothing.
    """
    if not values:
        return []
    size = 1
    while size < len(values):
        size *= 2
    return list(values) + [values[-1]] * (size - len(values))


def new_uuid() -> str:
    return str(uuidlib.uuid4())


def check_columns(values: Mapping[str, Any], columns: tuple[str, ...],
                  what: str) -> None:
    """Refuse values for columns a table does not have."""
    unknown = set(values) - set(columns)
    if unknown:
        raise exception.InvalidParameterValue(
            reason='Unknown %s fields: %s'
            % (what, ', '.join(sorted(unknown))))


def paginate(query: sa.Select[Any], table: sa.Table, limit: int | None,
             sort_key: str, sort_dir: str, marker: Any = None
             ) -> sa.Select[Any]:
    """``query`` sorted by ``sort_key`` then id, after ``marker``, limited.

    ``marker`` is the last row of the previous page (any object with the
    table's attributes). Paging is by keyset, never OFFSET, so a deep page
    costs what the first one does. NULLs come first in ascending order and
    last in descending order on every database; the ORDER BY spells that
    out with ``IS NULL`` because databases disagree on the default.
    """
    key, ident = table.c[sort_key], table.c.id
    ascending = sort_dir == 'asc'
    if sort_key == 'id':
        order = [ident.asc() if ascending else ident.desc()]
    else:
        is_null = key.is_(None)
        order = ([is_null.desc(), key.asc(), ident.asc()] if ascending else
                 [is_null.asc(), key.desc(), ident.desc()])
    query = query.order_by(*order)
    if marker is not None:
        query = query.where(_after(key, ident, ascending,
                                   getattr(marker, sort_key), marker.id))
    return query.limit(limit) if limit else query


def _after(key: sa.Column[Any], ident: sa.Column[Any], ascending: bool,
           value: Any, marker_id: int) -> sa.ColumnElement[bool]:
    """Rows that sort after the marker (``value``, ``marker_id``)."""
    if key is ident:
        return ident > marker_id if ascending else ident < marker_id
    if ascending:
        if value is None:
            return sa.or_(key.isnot(None), ident > marker_id)
        return sa.or_(key > value, sa.and_(key == value, ident > marker_id))
    if value is None:
        return sa.and_(key.is_(None), ident < marker_id)
    return sa.or_(key < value, sa.and_(key == value, ident < marker_id),
                  key.is_(None))


class Row:
    """A loaded row that knows which of its columns changed since loading.

    Subclasses name their columns in ``COLUMNS``, the JSON ones in
    ``JSON_COLUMNS`` (compared by value, so nested edits count) and those
    that read as ``{}`` when NULL in ``DICT_COLUMNS``. Attribute names are
    column names.
    """

    COLUMNS: tuple[str, ...] = ()
    JSON_COLUMNS: frozenset[str] = frozenset()
    DICT_COLUMNS: frozenset[str] = frozenset()

    def __init__(self, db: Any, row: Mapping[Any, Any]) -> None:
        self._db = db
        values = dict(row)
        for name in self.DICT_COLUMNS:
            if values.get(name) is None:
                values[name] = {}
        self.__dict__.update(values)
        self._loaded: dict[str, Any] = {}
        self._mark_saved({name: values[name] for name in self.COLUMNS
                          if name in values})

    def changes(self) -> dict[str, Any]:
        """The columns whose value differs from what was loaded or saved."""
        return {name: getattr(self, name) for name in self.COLUMNS
                if getattr(self, name) != self._loaded[name]}

    def snapshot(self) -> dict[str, Any]:
        """The column values as loaded or last saved (for :meth:`restore`).

        Cheap: the loaded JSON values are already private copies, and are
        replaced, never changed, when the row is saved.
        """
        return dict(self._loaded)

    def restore(self, snapshot: Mapping[str, Any],
                keep: frozenset[str] = frozenset()) -> None:
        """Set every column back to ``snapshot``, but those in ``keep``."""
        for name, value in snapshot.items():
            if name not in keep:
                setattr(self, name, copy.deepcopy(value)
                        if name in self.JSON_COLUMNS else value)

    def _mark_saved(self, values: Mapping[str, Any]) -> None:
        """Record ``values`` as what the database now holds."""
        self.__dict__.update(values)
        for name, value in values.items():
            # Callers pass columns only; JSON values are copied so that
            # later in-place edits show up in changes().
            self._loaded[name] = (copy.deepcopy(value)
                                  if name in self.JSON_COLUMNS else value)
