# SPDX-License-Identifier: Apache-2.0
"""Allocations as their Placement consumers are checked against: the
live ones (whose consumer is legitimately held) and the active ones with
the nodes they hold. Read by the release queue and the audits
(:mod:`ferrum.placement`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj

TABLE = allocation_obj.TABLE
_NODES = node_obj.TABLE


class ActiveOnNode(NamedTuple):
    """An ``active`` allocation and the node it holds."""

    uuid: str
    owner: str | None
    node_id: int
    node_uuid: str
    resource_class: str | None


_ACTIVE_ON_NODES = sa.select(
    TABLE.c.uuid, TABLE.c.owner, _NODES.c.id.label('node_id'),
    _NODES.c.uuid.label('node_uuid'), _NODES.c.resource_class).select_from(
        TABLE.join(_NODES, _NODES.c.id == TABLE.c.node_id)).where(
            TABLE.c.state == allocation_obj.ACTIVE)


def active_on_nodes(db: db_api.Database, node_state: str | None = None
                    ) -> list[ActiveOnNode]:
    """The ``active`` allocations with their nodes (only the nodes in
    provision state ``node_state``, when given)."""
    query = _ACTIVE_ON_NODES
    if node_state is not None:
        query = query.where(_NODES.c.provision_state == node_state)
    with db.reader() as conn:
        return [ActiveOnNode(*row) for row in conn.execute(query)]


def is_active(db: db_api.Database, uuid: str) -> bool:
    with db.reader() as conn:
        return conn.execute(sa.select(TABLE.c.id).where(
            TABLE.c.uuid == uuid, TABLE.c.state == allocation_obj.ACTIVE)
        ).first() is not None


def live_uuids(db: db_api.Database, uuids: Collection[str] | None
               ) -> set[str]:
    """The uuids (of ``uuids``; of all with None) of the allocations in
    flight or holding a node (:data:`ferrum.objects.allocation.LIVE`):
    those whose Placement consumer is legitimately held."""
    query = sa.select(TABLE.c.uuid).where(
        TABLE.c.state.in_(sorted(allocation_obj.LIVE)))
    if uuids is not None:
        if not uuids:
            return set()
        query = query.where(TABLE.c.uuid.in_(sorted(uuids)))
    with db.reader() as conn:
        return set(conn.execute(query).scalars())
