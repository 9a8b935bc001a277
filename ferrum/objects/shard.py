# SPDX-License-Identifier: Apache-2.0
"""Shards: the partitions nodes are put in (API 1.82), counted."""

from typing import Any

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models

_NODES = models.table(models.Node)
_COUNTS = sa.select(_NODES.c.shard, sa.func.count(_NODES.c.id)).group_by(
    _NODES.c.shard)


def counts(db: db_api.Database) -> list[dict[str, Any]]:
    """Each shard with its number of nodes, the largest first, as Ironic
    lists them: nodes without a shard are counted under the name "None"
    (Ironic's string of the empty value)."""
    with db.reader() as conn:
        rows = conn.execute(_COUNTS).all()
    ordered = sorted(rows, key=lambda row: (-row[1], str(row[0])))
    return [{'name': str(shard), 'count': count} for shard, count in ordered]
