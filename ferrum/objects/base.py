# SPDX-License-Identifier: Apache-2.0
"""Small shared pieces of the object layer: timestamps, identifiers, paging."""

import contextlib
import copy
import datetime
import uuid as uuidlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa
from oslo_db import exception as db_exc

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


def copy_json(value: Any) -> Any:
    """A private copy of a JSON column's value.

    Dicts, lists and scalars, which is what JSON holds, are copied here;
    anything else a caller put in goes through ``copy.deepcopy``. Every
    node read copies its JSON columns once, and deepcopy's memo and
    dispatch cost several times this walk.
    """
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    if value is None or kind in (str, int, float, bool):
        return value
    return copy.deepcopy(value)


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
                setattr(self, name, copy_json(value)
                        if name in self.JSON_COLUMNS else value)

    def _write_changes(self, table: sa.Table, row_id: int,
                       gone: exception.FerrumException) -> None:
        """UPDATE this row (``row_id``) of ``table`` with the changed columns
        and a new ``updated_at``; nothing when nothing changed.

        A refusal by a constraint (oslo.db's ``DBDuplicateEntry``,
        ``DBReferenceError``) is left to the caller, which knows what it
        means; the attributes then still hold the values refused.

        :raises: ``gone`` when the row was deleted meanwhile.
        """
        changes = self.changes()
        if not changes:
            return
        changes['updated_at'] = utcnow()
        with self._db.writer() as conn:
            result = conn.execute(
                sa.update(table).where(table.c.id == sa.bindparam('b_id')),
                dict(changes, b_id=row_id))
        if result.rowcount != 1:
            raise gone
        self._mark_saved(changes)

    def _delete_row(self, table: sa.Table, row_id: int,
                    gone: exception.FerrumException) -> None:
        """DELETE this row (``row_id``) of ``table``.

        :raises: ``gone`` when it was deleted already.
        """
        with self._db.writer() as conn:
            result = conn.execute(
                sa.delete(table).where(table.c.id == row_id))
        if result.rowcount != 1:
            raise gone

    def _mark_saved(self, values: Mapping[str, Any]) -> None:
        """Record ``values`` as what the database now holds."""
        self.__dict__.update(values)
        for name, value in values.items():
            # Callers pass columns only; JSON values are copied so that
            # later in-place edits show up in changes().
            self._loaded[name] = (copy_json(value)
                                  if name in self.JSON_COLUMNS else value)


_R = TypeVar('_R', bound='Record')


class Record(Row):
    """A row the API writes directly, found by UUID and listed by pages:
    chassis, volume connectors and volume targets.

    Subclasses set ``TABLE``, ``SELECT`` (the table, perhaps joined for
    the node's UUID), ``WHAT`` (the name errors give) and their
    exceptions. The database decides uniqueness and whether a referenced
    row is there; those errors become the subclass's exceptions.
    """

    TABLE: sa.Table
    SELECT: sa.Select[Any]
    WHAT = 'record'
    NOT_FOUND: type[exception.NotFound]
    NOT_FOUND_ARG: str
    ALREADY_EXISTS: type[exception.Conflict]
    #: Column values a new row starts with, unless given.
    DEFAULTS: Mapping[str, Any] = {}

    id: int
    uuid: str

    @classmethod
    def not_found(cls, ident: str) -> exception.NotFound:
        """The error for a UUID no row has (``NOT_FOUND``, given the
        identifier as ``NOT_FOUND_ARG``)."""
        return cls.NOT_FOUND(**{cls.NOT_FOUND_ARG: ident[:100]})

    @classmethod
    def duplicate(cls, columns: Sequence[str],
                  values: Mapping[str, Any]) -> exception.FerrumException:
        """The error for a unique constraint on ``columns`` (may be
        empty: not every database names them): ``ALREADY_EXISTS`` for the
        UUID, else :meth:`duplicate_other`."""
        other = None if 'uuid' in columns else cls.duplicate_other(values)
        return other or cls.ALREADY_EXISTS(uuid=values.get('uuid'))

    @classmethod
    def duplicate_other(cls, values: Mapping[str, Any]
                        ) -> exception.FerrumException | None:
        """The error for the table's other unique constraint; None when
        the UUID is its only one."""
        return None

    @classmethod
    def missing_reference(cls, values: Mapping[str, Any]
                          ) -> exception.FerrumException:
        """The error for a foreign key that names no row."""
        raise NotImplementedError

    @classmethod
    def get(cls: type[_R], db: Any, uuid: str) -> _R:
        """:raises NotFound: (the subclass's) no row has that UUID."""
        try:
            canonical = str(uuidlib.UUID(uuid))
        except ValueError:
            raise cls.not_found(uuid) from None
        with db.reader() as conn:
            row = conn.execute(cls.SELECT.where(
                cls.TABLE.c.uuid == canonical)).mappings().first()
        if row is None:
            raise cls.not_found(uuid)
        return cls(db, row)

    @classmethod
    def where(cls, filters: Mapping[str, Any]) -> list[Any]:
        """The clauses ``filters`` stand for (a subclass knows them)."""
        if filters:
            raise exception.InvalidParameterValue(
                reason='Unknown %s filters: %s'
                       % (cls.WHAT, ', '.join(sorted(filters))))
        return []

    @classmethod
    def list(cls: type[_R], db: Any, filters: Mapping[str, Any] | None = None,
             limit: int | None = None, sort_key: str = 'id',
             sort_dir: str = 'asc', marker: Any = None) -> list[_R]:
        """Rows matching ``filters``, one page of them."""
        query = cls.SELECT.where(*cls.where(filters or {}))
        query = paginate(query, cls.TABLE, limit, sort_key, sort_dir, marker)
        with db.reader() as conn:
            result = conn.execute(query)
            # Plain tuples zipped with the names once: a RowMapping
            # builds its keys again for every row (half of a page's cost).
            names = list(result.keys())
            return [cls(db, dict(zip(names, row, strict=True)))
                    for row in result]

    @classmethod
    def create(cls: type[_R], db: Any, values: Mapping[str, Any]) -> _R:
        """Insert a row; ``uuid`` is generated unless given."""
        row: dict[str, Any] = {'uuid': new_uuid(), 'created_at': utcnow(),
                               **copy.deepcopy(dict(cls.DEFAULTS))}
        row.update(values)
        check_columns(row, cls.COLUMNS, cls.WHAT)
        with cls._errors(row):
            with db.writer() as conn:
                new_id = conn.execute(sa.insert(cls.TABLE).returning(
                    cls.TABLE.c.id), row).scalar_one()
                created = conn.execute(cls.SELECT.where(
                    cls.TABLE.c.id == new_id)).mappings().one()
        return cls(db, created)

    def save(self) -> None:
        """Write the changed columns and stamp updated_at."""
        changes = self.changes()
        if not changes:
            return
        changes['updated_at'] = utcnow()
        # The errors name the row as it would have been.
        with self._errors({name: getattr(self, name)
                           for name in self.COLUMNS}):
            with self._db.writer() as conn:
                result = conn.execute(sa.update(self.TABLE).where(
                    self.TABLE.c.id == self.id).values(changes))
        if result.rowcount != 1:
            raise self.not_found(self.uuid)
        self._mark_saved(changes)

    def destroy(self) -> None:
        """Delete the row."""
        with self._errors({'uuid': self.uuid}):
            with self._db.writer() as conn:
                result = conn.execute(sa.delete(self.TABLE).where(
                    self.TABLE.c.id == self.id))
        if result.rowcount != 1:
            raise self.not_found(self.uuid)

    @classmethod
    @contextlib.contextmanager
    def _errors(cls, values: Mapping[str, Any]) -> Iterator[None]:
        try:
            yield
        except db_exc.DBDuplicateEntry as exc:
            raise cls.duplicate(exc.columns or (), values) from exc
        except db_exc.DBReferenceError as exc:
            raise cls.missing_reference(values) from exc


class NodeRecord(Record):
    """A :class:`Record` that belongs to a node: ``SELECT`` joins
    ``NODES`` (the nodes table) for ``node_uuid``, and lists filter by
    ``node_id`` and by ``project`` (the nodes it owns or leases)."""

    NODES: sa.Table

    node_id: int
    node_uuid: str

    @classmethod
    def missing_reference(cls, values: Mapping[str, Any]
                          ) -> exception.FerrumException:
        # The node named is gone (deleted since the caller looked).
        return exception.NodeNotFound(node=values.get('node_id'))

    @classmethod
    def select(cls, table: sa.Table, nodes: sa.Table) -> sa.Select[Any]:
        return sa.select(table, nodes.c.uuid.label('node_uuid')).join(
            nodes, nodes.c.id == table.c.node_id)

    @classmethod
    def where(cls, filters: Mapping[str, Any]) -> list[Any]:
        rest = dict(filters)
        clauses = []
        node_id, project = rest.pop('node_id', None), rest.pop('project', None)
        if node_id is not None:
            clauses.append(cls.TABLE.c.node_id == node_id)
        if project is not None:
            clauses.append(sa.or_(cls.NODES.c.owner == project,
                                  cls.NODES.c.lessee == project))
        return clauses + super().where(rest)
