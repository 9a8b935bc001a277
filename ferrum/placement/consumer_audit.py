# SPDX-License-Identifier: Apache-2.0
"""Comparing ferrum's allocations with Placement's consumers, node by node
(``[allocation] backend = placement``; part of ``ferrum-placement audit``).

Each node's provider is asked who holds it (one GET per node). Then:

- an ``active`` allocation whose consumer does not hold its node is
  ``consumer-missing``; ``--heal`` claims it again (``consumer_generation:
  null``; a node in use is unreserved for the claim and reserved again at
  once; a node a running lease holds is taken from the lease's consumer
  in the same request), which Placement refuses if someone else took the
  node meanwhile;
- a consumer of ferrum's (its user is ``[allocation] default_user``)
  holding a node without a live allocation of that uuid is
  ``consumer-orphan``; ``--heal`` releases it (one that took the node
  under a running lease gives it back to the lease's consumer in the same
  request);
- another service's consumer holding a node a ferrum allocation holds too
  is ``double``: reported, never repaired by ferrum (one of the two
  services must give the node up).

Allocations still ``allocating`` are in flight and left alone. The
consumers of leases in Placement (uuid = the lease's) are the lease
audit's (:mod:`ferrum.placement.lease_audit`).
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from ferrum.common import lease_statuses
from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.objects import node as node_obj
from ferrum.objects.allocation import consumers as allocation_consumers
from ferrum.objects.lease import classes as lease_classes
from ferrum.objects.lease import holds as lease_holds
from ferrum.placement import audit
from ferrum.placement import claims
from ferrum.placement import errors
from ferrum.placement import sync
from ferrum.placement.resources import consumers
from ferrum.placement.resources import providers

LOG = logging.getLogger(__name__)

MISSING = 'consumer-missing'
ORPHAN = 'consumer-orphan'
DOUBLE = 'double'


class _Held(NamedTuple):
    allocation: str
    owner: str | None
    resource_class: str | None


def _ending(db: db_api.Database) -> set[int]:
    """The nodes of leases ``ending`` in Placement: the end released their
    allocations' consumers with the lease's, before the allocations go."""
    with db.reader() as conn:
        holders = lease_holds.placement_holders(conn, None)
    return {node_id for node_id, holder in holders.items()
            if holder.status == lease_statuses.ENDING}


def _state(db: db_api.Database) -> tuple[list[str], dict[str, _Held],
                                         set[str]]:
    """Every node uuid; the active allocations by node; the live uuids
    and those of the leases in Placement (whose consumers are not
    allocations').

    An allocation on a node of a lease ending (:func:`_ending`) is not
    held.
    """
    with db.reader():  # one snapshot for every read below
        nodes = [row.uuid for row in node_obj.Node.list_columns(
            db, ['uuid'])]
        ending = _ending(db)
        held = {row.node_uuid: _Held(row.uuid, row.owner, row.resource_class)
                for row in allocation_consumers.active_on_nodes(db)
                if row.node_id not in ending}
        live = allocation_consumers.live_uuids(db, None)
        live.update(lease_classes.classed_uuids(db))
    return nodes, held, live


def drift(pusher: sync.Pusher) -> list[audit.Drift]:
    """Every difference (see the module docstring).

    :raises PlacementUnavailable: when Placement cannot be read.
    """
    db, client = pusher.db, pusher.client
    user = pusher.conf.allocation.default_user
    nodes, held, live = _state(db)
    found: list[audit.Drift] = []
    for node in sorted(nodes):
        holders = providers.consumers_of(client, node)
        mine = held.get(node)
        if mine is not None and mine.allocation not in holders:
            found.append(audit.Drift(
                node, MISSING, 'allocation %s holds the node in ferrum but '
                'has no consumer in Placement' % mine.allocation,
                consumer=mine.allocation))
        for consumer in sorted(holders):
            if mine is not None and consumer == mine.allocation:
                continue
            if consumer in live:
                # An allocation in flight, one moving, or a lease's.
                continue
            ours = consumers.read(client, consumer).user == user
            if ours:
                found.append(audit.Drift(
                    node, ORPHAN, 'ferrum consumer %s holds the node '
                    'without an allocation' % consumer, consumer=consumer))
            elif mine is not None:
                found.append(audit.Drift(
                    node, DOUBLE, 'consumer %s of another service holds the '
                    'node ferrum allocated to %s' % (
                        consumer, mine.allocation), repairable=False,
                    consumer=consumer))
    return found


def heal(pusher: sync.Pusher, found: list[audit.Drift]) -> dict[str, str]:
    """Repair what can be repaired; consumer -> outcome."""
    _nodes, held, _live = _state(pusher.db)
    outcomes: dict[str, str] = {}
    for item in found:
        consumer, node_uuid = item.consumer, item.node_uuid
        if not item.repairable or consumer is None or node_uuid is None:
            continue
        if item.kind == ORPHAN:
            outcomes[consumer] = (
                'released' if claims.release(pusher, consumer)
                else 'not ours')
            continue
        mine = held.get(node_uuid)
        if mine is None or mine.allocation != consumer:
            outcomes[consumer] = 'gone meanwhile'
            continue
        outcomes[consumer] = _claim(pusher, consumer, node_uuid, mine)
    return outcomes


def _claim(pusher: sync.Pusher, consumer: str, node_uuid: str,
           mine: _Held) -> str:
    """Claim a missing consumer as the allocation claimed it
    (:func:`claims.claim`: a node a running lease holds is taken from
    the lease's consumer in the same request); its node is in use
    (reserved) unless ``available``, hence :func:`claims.claim_in_use`.
    """
    refusal: list[str] = []

    def claim_once() -> bool:
        try:
            claims.claim(pusher, consumer, node_uuid,
                            mine.resource_class, mine.owner)
            return True
        except (errors.PlacementRefused, errors.Busy,
                errors.ConsumerTaken) as exc:
            refusal[:] = [str(exc)]
            return False

    if claims.claim_in_use(pusher, node_uuid, claim_once):
        return 'claimed'
    return 'refused: %s' % ''.join(refusal)


def claim_missing_unreserved(pusher: sync.Pusher) -> int:
    """The periodic reconcile's check (placement backend): an active
    allocation whose node is still ``available`` is not reserved in
    Placement (see :func:`mapping.reserved`), so only its consumer fences
    the node. One missing (an allocation made before a switch from the
    database backend) is claimed at once; a node another consumer holds
    is logged (the audit reports it as ``double``); a node of a lease
    ending is left alone (:func:`_ending`). One GET per such node.

    Returns how many consumers were created.

    :raises PlacementUnavailable: Placement is away.
    """
    db, client = pusher.db, pusher.client
    with db.reader():  # one snapshot for both reads
        ending = _ending(db)
        rows = [row for row in allocation_consumers.active_on_nodes(
            db, states.AVAILABLE) if row.node_id not in ending]
    claimed = 0
    for row in rows:
        holders = providers.consumers_of(client, row.node_uuid)
        if row.uuid in holders:
            continue
        if holders:
            LOG.warning('Node %(node)s: allocation %(alloc)s has no consumer '
                        'in Placement and %(others)s hold the node there',
                        {'node': row.node_uuid, 'alloc': row.uuid,
                         'others': ', '.join(sorted(holders))})
            continue
        try:
            claims.claim_alone(pusher, row.uuid, row.node_uuid,
                                  row.resource_class, row.owner)
        except (errors.PlacementRefused,
                errors.ConsumerTaken) as exc:
            LOG.warning('Node %(node)s: the missing consumer of allocation '
                        '%(alloc)s was refused: %(error)s',
                        {'node': row.node_uuid, 'alloc': row.uuid,
                         'error': exc})
            continue
        if not allocation_consumers.is_active(db, row.uuid):
            # Deleted meanwhile: its release may be done.
            claims.release(pusher, row.uuid, lease_aware=False)
            continue
        LOG.warning('Node %(node)s: created the missing Placement consumer '
                    'of allocation %(alloc)s', {'node': row.node_uuid,
                                                'alloc': row.uuid})
        claimed += 1
    return claimed
