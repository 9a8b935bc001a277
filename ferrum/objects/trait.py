# SPDX-License-Identifier: Apache-2.0
"""Node traits: the capability strings allocations match on.

Every write of a node's traits first locks the node's row for its
transaction (:func:`_lock_node`), so writers of one node's traits take
turns in the database: a replace deletes and inserts without another
replace's rows appearing in between (on PostgreSQL that was a
``DBDuplicateEntry`` on the primary key, or a mixture of both sets), and
an add reads, checks the count and inserts on the rows it read. The last
writer wins whole. On SQLite every write transaction already holds the
database's write lock from its start (``BEGIN IMMEDIATE``); the node is
still read there, to find it gone.
"""

from collections.abc import Callable, Iterable

import sqlalchemy as sa

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.objects import placement_queue

TABLE = models.table(models.NodeTrait)
_NODES = models.table(models.Node)
_FOR_NODES = sa.select(TABLE.c.node_id, TABLE.c.trait).where(
    TABLE.c.node_id.in_(sa.bindparam('ids', expanding=True))).order_by(
        TABLE.c.trait)
_OF_NODE = sa.select(TABLE.c.trait).where(
    TABLE.c.node_id == sa.bindparam('b_node'))
# FOR NO KEY UPDATE on PostgreSQL: it excludes the other trait writers
# (and node updates) but not the foreign-key checks of rows inserted for
# the node elsewhere (ports, allocations), which only take KEY SHARE.
_LOCK_NODE = sa.select(_NODES.c.id).where(
    _NODES.c.id == sa.bindparam('b_node')).with_for_update(key_share=True)


def _lock_node(conn: sa.Connection, node_id: int) -> None:
    """Hold the node's row until the transaction ends.

    :raises NodeNotFound: the node was deleted (its traits went with it).
    """
    if conn.execute(_LOCK_NODE, {'b_node': node_id}).first() is None:
        raise exception.NodeNotFound(node=node_id)


def get_for_node(db: db_api.Database, node_id: int) -> list[str]:
    with db.reader() as conn:
        return sorted(conn.execute(_OF_NODE, {'b_node': node_id}).scalars())


def set_for_node(db: db_api.Database, node_id: int,
                 traits: Iterable[str]) -> list[str]:
    """Replace every trait of a node; returns the new sorted list.

    :raises NodeNotFound: the node was deleted.
    """
    wanted = sorted(set(traits))
    now = base.utcnow()
    with db.writer() as conn:
        _lock_node(conn, node_id)
        dropped = conn.execute(sa.delete(TABLE).where(
            TABLE.c.node_id == node_id)).rowcount
        if wanted:
            conn.execute(sa.insert(TABLE), [
                {'node_id': node_id, 'trait': t, 'created_at': now}
                for t in wanted])
        if dropped or wanted:
            placement_queue.nodes_changed(db, [node_id])
    return wanted


def add(db: db_api.Database, node_id: int, trait: str,
        check_count: Callable[[int], None] | None = None) -> bool:
    """Add one trait; adding one the node already has is a no-op.

    ``check_count`` is called with the node's number of traits after the
    addition, under the node's lock, and may raise to refuse it. Returns
    whether the trait was added.

    :raises NodeNotFound: the node was deleted.
    """
    with db.writer() as conn:
        _lock_node(conn, node_id)
        current = conn.execute(_OF_NODE, {'b_node': node_id}).scalars().all()
        if trait in current:
            return False
        if check_count is not None:
            check_count(len(current) + 1)
        conn.execute(sa.insert(TABLE).values(
            node_id=node_id, trait=trait, created_at=base.utcnow()))
        placement_queue.nodes_changed(db, [node_id])
    return True


def remove(db: db_api.Database, node_id: int, trait: str) -> bool:
    """Remove one trait; returns False when the node did not have it.

    One DELETE, atomic on its own: it needs no lock.
    """
    with db.writer() as conn:
        removed = conn.execute(sa.delete(TABLE).where(
            TABLE.c.node_id == node_id, TABLE.c.trait == trait)).rowcount == 1
        if removed:
            placement_queue.nodes_changed(db, [node_id])
    return removed


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
