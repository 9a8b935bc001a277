# SPDX-License-Identifier: Apache-2.0
"""Volume connector: how a node reaches its volumes (an iSCSI initiator
name, an IP or MAC address, a Fibre Channel WWNN or WWPN).

Loaded joined with the node, so a connector carries ``node_uuid``, which
the API shows. The database keeps a type and connector ID to one
connector, and the node's deletion deletes its connectors.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from ferrum.common import exception
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.VolumeConnector)
_NODES = models.table(models.Node)


class VolumeConnector(base.NodeRecord):
    """One connector row: the column names, plus ``node_uuid``."""

    TABLE = TABLE
    NODES = _NODES
    SELECT = base.NodeRecord.select(TABLE, _NODES)
    WHAT = 'volume connector'
    COLUMNS = tuple(c.name for c in TABLE.columns)
    JSON_COLUMNS = frozenset({'extra'})
    DICT_COLUMNS = JSON_COLUMNS
    NOT_FOUND = exception.VolumeConnectorNotFound
    NOT_FOUND_ARG = 'connector'
    ALREADY_EXISTS = exception.VolumeConnectorAlreadyExists
    DEFAULTS = {'extra': {}}

    type: str
    connector_id: str
    extra: dict[str, Any]
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    def __repr__(self) -> str:
        return '<VolumeConnector %s %s>' % (self.uuid, self.type)

    @classmethod
    def duplicate_other(cls, values: Mapping[str, Any]
                        ) -> exception.FerrumException:
        return exception.VolumeConnectorTypeAndIdAlreadyExists(
            type=values.get('type'),
            connector_id=values.get('connector_id'))
