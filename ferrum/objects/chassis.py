# SPDX-License-Identifier: Apache-2.0
"""Chassis: a group of nodes with a description (Ironic's chassis).

A node names its chassis by ``nodes.chassis_id``. The foreign key decides
whether a chassis can go: deleting one that still holds a node, even one
added by another process a moment before, is :class:`ChassisNotEmpty`.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from ferrum.common import exception
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.Chassis)


class Chassis(base.Record):
    """One chassis row. Attribute names are the column names."""

    TABLE = TABLE
    SELECT = sa.select(TABLE)
    WHAT = 'chassis'
    COLUMNS = tuple(c.name for c in TABLE.columns)
    JSON_COLUMNS = frozenset({'extra'})
    DICT_COLUMNS = JSON_COLUMNS
    DEFAULTS = {'extra': {}}
    NOT_FOUND = exception.ChassisNotFound
    NOT_FOUND_ARG = 'chassis'
    ALREADY_EXISTS = exception.ChassisAlreadyExists

    description: str | None
    extra: dict[str, Any]
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    def __repr__(self) -> str:
        return '<Chassis %s>' % self.uuid

    @classmethod
    def missing_reference(cls, values: Mapping[str, Any]
                          ) -> exception.FerrumException:
        # Only a delete can break a reference: nodes still name it.
        return exception.ChassisNotEmpty(chassis=values.get('uuid'))


def uuids_by_id(db: Any, ids: Sequence[int]) -> dict[int, str]:
    """The UUIDs of the chassis ``ids`` name, for rendering nodes."""
    if not ids:
        return {}
    with db.reader() as conn:
        rows = conn.execute(sa.select(TABLE.c.id, TABLE.c.uuid).where(
            TABLE.c.id.in_(base.bucketed(sorted(set(ids))))))
        return {row.id: row.uuid for row in rows}
