# SPDX-License-Identifier: Apache-2.0
"""Node traits: the capability strings allocations match on."""

from collections.abc import Iterable

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

TABLE: sa.Table = models.NodeTrait.__table__  # type: ignore[assignment]
_FOR_NODES = sa.select(TABLE.c.node_id, TABLE.c.trait).where(
    TABLE.c.node_id.in_(sa.bindparam('ids', expanding=True))).order_by(
        TABLE.c.trait)


def get_for_node(db: db_api.Database, node_id: int) -> list[str]:
    with db.reader() as conn:
        return sorted(conn.execute(
            sa.select(TABLE.c.trait).where(TABLE.c.node_id == node_id)
        ).scalars())


def set_for_node(db: db_api.Database, node_id: int,
                 traits: Iterable[str]) -> list[str]:
    """Replace every trait of a node; returns the new sorted list."""
    wanted = sorted(set(traits))
    now = base.utcnow()
    with db.writer() as conn:
        conn.execute(sa.delete(TABLE).where(TABLE.c.node_id == node_id))
        if wanted:
            conn.execute(sa.insert(TABLE), [
                {'node_id': node_id, 'trait': t, 'created_at': now}
                for t in wanted])
    return wanted


def add(db: db_api.Database, node_id: int, trait: str) -> None:
    """Add one trait; adding one the node already has is a no-op."""
    with db.writer() as conn:
        exists = conn.execute(sa.select(TABLE.c.trait).where(
            TABLE.c.node_id == node_id, TABLE.c.trait == trait)).first()
        if exists is None:
            conn.execute(sa.insert(TABLE).values(
                node_id=node_id, trait=trait, created_at=base.utcnow()))


def remove(db: db_api.Database, node_id: int, trait: str) -> bool:
    """Remove one trait; returns False when the node did not have it."""
    with db.writer() as conn:
        return conn.execute(sa.delete(TABLE).where(
            TABLE.c.node_id == node_id, TABLE.c.trait == trait)).rowcount == 1


def get_for_nodes(db: db_api.Database, node_ids: Iterable[int]
                  ) -> dict[int, list[str]]:
    """Traits of many nodes in one query: node id -> sorted traits."""
    ids = list(node_ids)
    result: dict[int, list[str]] = {node_id: [] for node_id in ids}
    if not ids:
        return result
    with db.reader() as conn:
        rows = conn.execute(_FOR_NODES, {'ids': ids})
        for node_id, trait in rows:
            result[node_id].append(trait)
    return result
