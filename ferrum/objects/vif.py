# SPDX-License-Identifier: Apache-2.0
"""Where a node's attached VIFs are recorded, and forgetting them when the
node is given back.

As in Ironic, a VIF is recorded on one of the node's ports, as
``internal_info['tenant_vif_port_id']``; one that found no free port waits
in the node's ``driver_internal_info['vifs']`` (ferrum's; see
:mod:`ferrum.drivers.vifs`, which attaches and detaches them).

A node goes back from its tenant without a tear-down when its allocation
is deleted while it is not deployed, or when its lease ends while it is
available: no network was configured for its VIFs then (ports are plugged
at deployment, as in Ironic), so forgetting their records is all a detach
would do. :func:`forget` does it in the give-back's own transaction, so
the node's next tenant never sees them. A tear-down detaches them through
the network interface instead (:mod:`ferrum.conductor.vifs`).
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

#: The ``internal_info`` key of a port that names its VIF (Ironic's).
PORT_VIF = 'tenant_vif_port_id'
#: The ``driver_internal_info`` key of VIFs waiting for a free port.
NODE_VIFS = 'vifs'

_PORTS = models.table(models.Port)
_NODES = models.table(models.Node)
_PORTS_OF = sa.select(_PORTS.c.id, _PORTS.c.internal_info).where(
    _PORTS.c.node_id.in_(sa.bindparam('b_nodes', expanding=True)))
_NODES_OF = sa.select(_NODES.c.id, _NODES.c.driver_internal_info).where(
    _NODES.c.id.in_(sa.bindparam('b_nodes', expanding=True)))


def _without(info: Any, key: str) -> dict[str, Any] | None:
    """``info`` without ``key``, or None if it has no such key."""
    if not isinstance(info, dict) or key not in info:
        return None
    return {name: value for name, value in info.items() if name != key}


def forget(db: db_api.Database, node_ids: Sequence[int]) -> int:
    """Forget every VIF recorded for the nodes ``node_ids``, in the
    current write transaction (or one of its own).

    The caller gives the nodes back: no task holds their locks (a task
    writes ``driver_internal_info`` when it lets go).

    :returns: how many records were removed (ports and nodes).
    """
    if not node_ids:
        return 0
    nodes = {'b_nodes': base.bucketed(sorted(set(node_ids)))}
    removed = 0
    with db.writer() as conn:
        for port_id, info in conn.execute(_PORTS_OF, nodes).all():
            kept = _without(info, PORT_VIF)
            if kept is not None:
                conn.execute(sa.update(_PORTS).where(_PORTS.c.id == port_id)
                             .values(internal_info=kept,
                                     updated_at=base.utcnow()))
                removed += 1
        for node_id, info in conn.execute(_NODES_OF, nodes).all():
            kept = _without(info, NODE_VIFS)
            if kept is not None:
                conn.execute(sa.update(_NODES).where(_NODES.c.id == node_id)
                             .values(driver_internal_info=kept))
                removed += 1
    return removed
