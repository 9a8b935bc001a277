# SPDX-License-Identifier: Apache-2.0
"""DeployTemplate: deploy steps named by a trait (Ironic's API 1.55).

A node deployed with instance traits (``instance_info['traits']``) runs the
steps of the templates whose names are among them, with its driver's deploy
steps (see :mod:`ferrum.conductor.deploy_steps`). The API writes templates
directly, without a lock: a deploy reads them when it is requested and
again when it starts, and a change in between that breaks the rules fails
that deploy.

The database keeps names and UUIDs unique: a duplicate is
:class:`DeployTemplateDuplicateName` or :class:`DeployTemplateAlreadyExists`
whichever process wrote first.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.DeployTemplate)
FIELDS: tuple[str, ...] = tuple(c.name for c in TABLE.columns)
_JSON_FIELDS = frozenset({'steps', 'extra'})
_SELECT = sa.select(TABLE)
_INSERT = sa.insert(TABLE).returning(TABLE.c.id)
#: The columns a list may be sorted by (Ironic refuses extra and steps).
SORT_KEYS = frozenset({'id', 'uuid', 'name', 'created_at', 'updated_at'})


class DeployTemplate(base.Row):
    """One deploy template row. Attribute names are the column names."""

    COLUMNS = FIELDS
    JSON_COLUMNS = _JSON_FIELDS
    DICT_COLUMNS = frozenset({'extra'})

    id: int
    uuid: str
    name: str
    #: ``[{'interface', 'step', 'args', 'priority'}]``, priorities integers.
    steps: list[dict[str, Any]]
    extra: dict[str, Any]
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    def __repr__(self) -> str:
        return '<DeployTemplate %s %s>' % (self.uuid, self.name)

    # ---- reading ----------------------------------------------------------

    @classmethod
    def get(cls, db: db_api.Database, ident: str) -> DeployTemplate:
        """Load a template by UUID or name.

        :raises DeployTemplateNotFound: none has that UUID or name.
        """
        column, value = base.ident_column(ident)
        with db.reader() as conn:
            row = conn.execute(_SELECT.where(
                TABLE.c[column] == value)).mappings().first()
        if row is None:
            raise exception.DeployTemplateNotFound(template=ident)
        return cls(db, row)

    @classmethod
    def list(cls, db: db_api.Database, *, limit: int | None = None,
             sort_key: str = 'id', sort_dir: str = 'asc',
             marker: DeployTemplate | None = None,
             columns: Collection[str] | None = None) -> list[DeployTemplate]:
        """A page of templates; ``marker`` is the previous page's last.

        :param columns: load only these (and ``id``, ``uuid``); the others
            are then missing, or ``{}`` for ``extra``: such templates are
            for showing those columns, not for saving. A page of names
            then decodes no steps.
        """
        select = _SELECT if columns is None else sa.select(*(
            TABLE.c[name] for name in FIELDS
            if name in {'id', 'uuid', *columns}))
        query = base.paginate(select, TABLE, limit, sort_key, sort_dir,
                              marker)
        with db.reader() as conn:
            result = conn.execute(query)
            # Tuples zipped with the names once: a RowMapping builds its
            # keys again for every row.
            names = list(result.keys())
            return [cls(db, dict(zip(names, row, strict=True)))
                    for row in result]

    # ---- writing ----------------------------------------------------------

    @classmethod
    def create(cls, db: db_api.Database,
               values: Mapping[str, Any]) -> DeployTemplate:
        """Insert a template; ``uuid`` is generated unless given.

        :raises DeployTemplateDuplicateName: another has the same name.
        :raises DeployTemplateAlreadyExists: another has the same UUID.
        """
        row: dict[str, Any] = {'uuid': base.new_uuid(), 'extra': {},
                               'created_at': base.utcnow()}
        row.update(values)
        base.check_columns(row, FIELDS, 'deploy template')
        try:
            with db.writer() as conn:
                new_id = conn.execute(_INSERT, row).scalar_one()
                created = conn.execute(_SELECT.where(
                    TABLE.c.id == new_id)).mappings().one()
        except db_exc.DBDuplicateEntry as exc:
            raise _duplicate(exc, row) from exc
        return cls(db, created)

    def save(self) -> None:
        """Write the changed fields and stamp ``updated_at``.

        :raises DeployTemplateDuplicateName: the new name is taken.
        :raises DeployTemplateNotFound: it was deleted meanwhile.
        """
        gone = exception.DeployTemplateNotFound(template=self.uuid)
        try:
            self._write_changes(TABLE, self.id, gone)
        except db_exc.DBDuplicateEntry as exc:
            raise _duplicate(exc, {'name': self.name}) from exc

    def destroy(self) -> None:
        """Delete the template.

        :raises DeployTemplateNotFound: it was already deleted.
        """
        self._delete_row(TABLE, self.id, exception.DeployTemplateNotFound(
            template=self.uuid))


def by_names(db: db_api.Database,
             names: Sequence[str]) -> list[DeployTemplate]:
    """The templates named in ``names``, in the order of their names
    (which does not order their steps: a deploy sorts them by priority)."""
    if not names:
        return []
    query = _SELECT.where(TABLE.c.name.in_(
        base.bucketed(sorted(set(names))))).order_by(TABLE.c.name)
    with db.reader() as conn:
        return [DeployTemplate(db, row) for row in conn.execute(query)
                .mappings()]


def _duplicate(exc: db_exc.DBDuplicateEntry,
               values: Mapping[str, Any]) -> exception.Conflict:
    """The conflict a unique-constraint violation stands for."""
    if 'uuid' in (exc.columns or ()):
        return exception.DeployTemplateAlreadyExists(uuid=values.get('uuid'))
    # The name is the only other unique column, so an unparsed constraint
    # is the name too.
    return exception.DeployTemplateDuplicateName(name=values.get('name'))
