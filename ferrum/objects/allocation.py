# SPDX-License-Identifier: Apache-2.0
"""Allocations: a consumer's reservation of one node.

Only what nodes need to show their allocation lives here so far; the
allocation engine (issue 4) adds the rest.
"""

from collections.abc import Iterable

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models

TABLE: sa.Table = models.Allocation.__table__  # type: ignore[assignment]


def uuids_by_id(db: db_api.Database, ids: Iterable[int]) -> dict[int, str]:
    """allocation id -> UUID, for the given ids, in one query."""
    wanted = list(ids)
    if not wanted:
        return {}
    with db.reader() as conn:
        return {row.id: row.uuid for row in conn.execute(
            sa.select(TABLE.c.id, TABLE.c.uuid).where(TABLE.c.id.in_(wanted)))}
