# SPDX-License-Identifier: Apache-2.0
"""Volume target: a volume (a Cinder volume's ID and type) a node may boot
from, in the order of its boot index.

Loaded joined with the node, so a target carries ``node_uuid``, which the
API shows. The database keeps a boot index to one target per node, and
the node's deletion deletes its targets. ``properties`` may hold a
volume's connection details (iSCSI credentials): the API masks them.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from ferrum.common import exception
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.VolumeTarget)
_NODES = models.table(models.Node)


class VolumeTarget(base.NodeRecord):
    """One target row: the column names, plus ``node_uuid``."""

    TABLE = TABLE
    NODES = _NODES
    SELECT = base.NodeRecord.select(TABLE, _NODES)
    WHAT = 'volume target'
    COLUMNS = tuple(c.name for c in TABLE.columns)
    JSON_COLUMNS = frozenset({'extra', 'properties'})
    DICT_COLUMNS = JSON_COLUMNS
    NOT_FOUND = exception.VolumeTargetNotFound
    NOT_FOUND_ARG = 'target'
    ALREADY_EXISTS = exception.VolumeTargetAlreadyExists
    DEFAULTS = {'extra': {}, 'properties': {}}

    volume_type: str
    properties: dict[str, Any]
    boot_index: int
    volume_id: str
    extra: dict[str, Any]
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    def __repr__(self) -> str:
        return '<VolumeTarget %s %s>' % (self.uuid, self.volume_id)

    @classmethod
    def duplicate_other(cls, values: Mapping[str, Any]
                        ) -> exception.FerrumException:
        return exception.VolumeTargetBootIndexAlreadyExists(
            boot_index=values.get('boot_index'))
