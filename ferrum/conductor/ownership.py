# SPDX-License-Identifier: Apache-2.0
"""The nodes this conductor handles: its share of the hash ring.

When several conductors share a database, each node belongs to the one
that :mod:`ferrum.common.hash_ring` picks among the live conductors of the
node's
conductor group that run its hardware type: the same pick the API routes
the node's calls to and shows in its ``conductor`` field. Periodic tasks
visit only these nodes, so adding conductors divides the BMC traffic
instead of multiplying it, and the take-over task
(:mod:`ferrum.conductor.takeover`) finds the active nodes that moved here.

The live conductors are read once per :func:`current` call (one query), so
each periodic run sees a conductor that joined, stopped or died at once.
This conductor always counts itself in, even when its own heartbeat is
late: it is running, and it must not drop all its nodes over a slow
database write.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from oslo_config import cfg

from ferrum.common import hash_ring
from ferrum.conductor import context as context_mod
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj


def group_of(conf: cfg.ConfigOpts) -> str:
    """This conductor's group as nodes store it (lower case)."""
    return str(conf.conductor.conductor_group).lower()


class Share:
    """This conductor's share of the ring, for one view of the conductors."""

    def __init__(self, host: str, conductors: hash_ring.Conductors) -> None:
        self.host = host
        self.conductors = conductors

    def owns(self, driver: str, group: str, node_uuid: str) -> bool:
        """Whether the ring gives the node to this conductor."""
        return hash_ring.conductor_for(self.conductors, driver, group,
                                  node_uuid) == self.host


def current(ctx: context_mod.ConductorContext) -> Share:
    """This conductor's share, from the conductors table as it is now."""
    conductors = dict(conductor_obj.alive_drivers(
        ctx.db, ctx.conf.conductor.heartbeat_timeout))
    conductors[ctx.host] = (group_of(ctx.conf),
                            frozenset(ctx.drivers.hardware_types))
    return Share(ctx.host, conductors)


def node_rows(ctx: context_mod.ConductorContext, columns: Iterable[str],
              filters: Mapping[str, Any] | None = None) -> list[Any]:
    """The rows of the matching nodes this conductor handles now.

    Only nodes of this conductor's group, of a hardware type it loaded,
    and that the ring gives to it.

    :param columns: the columns to read; ``uuid`` and ``driver`` are
        always read as well.
    :param filters: node list filters (see ``Node.list``), applied in SQL.
    """
    wanted = tuple(dict.fromkeys((*columns, 'uuid', 'driver')))
    group = group_of(ctx.conf)
    query = dict(filters or {}, conductor_group=group)
    rows = node_obj.Node.list_columns(ctx.db, wanted, query)
    if not rows:
        return []  # most periodic runs: no need to read the conductors
    share = current(ctx)
    return [row for row in rows
            if row.driver in ctx.drivers.hardware_types
            and share.owns(row.driver, group, row.uuid)]
