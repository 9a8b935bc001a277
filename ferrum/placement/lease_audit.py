# SPDX-License-Identifier: Apache-2.0
"""Comparing ferrum's leases with Placement: the leases' consumers and
their reservation classes (part of ``ferrum-placement audit``).

The reservation inventory on each node's provider is the node audit's
(:mod:`ferrum.placement.audit`): it wants what the sync pushes, the
lease's class included, so a missing or stale reservation unit is an
``inventory`` finding there. What is left is found here, with one GET
per lease in Placement plus one listing of the classes:

- ``lease-consumer-missing``: an ``active`` lease's consumer does not
  hold a node it should (a node the lease holds that no ferrum allocation
  uses; see :class:`_Want` for the database backend); ``--heal`` claims
  it again, which Placement refuses if someone else took the node
  meanwhile;
- ``lease-consumer-orphan``: a lease's consumer holds a node it should
  not (a node the lease does not hold, or, with the placement backend,
  one an allocation took), or
  anything at all once the lease is not running (``pending``, ``error``,
  ``ended``, ``cancelled``); ``--heal`` rewrites the consumer to what it
  should hold, in one request;
- ``class-orphan``: the class of a lease that is over (``ended`` or
  ``cancelled``), or a lease over that still records its class; ``--heal``
  deletes it (refused while an inventory still uses it). A class named
  after no lease of ferrum's is reported and left alone: Blazar names its
  classes the same way;
- ``class-missing``: a lease in Placement, from ``pending`` to
  ``ending``, whose class is absent; ``--heal`` creates it.

Leases ``starting`` or ``ending`` are in flight (their conductor, or the
one that takes them over, finishes them) and a node an allocation is
taking is left to the allocation, as the consumer audit does. A
consumer of the lease's uuid whose user is not ``[allocation]
default_user`` is another service's and never touched.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import NamedTuple

from ferrum.common import lease_statuses as statuses
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.objects.allocation import consumers as allocation_consumers
from ferrum.objects.lease import classes as lease_classes
from ferrum.objects.lease import holds as lease_holds
from ferrum.placement import audit
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import reservations
from ferrum.placement import sync
from ferrum.placement.resources import classes
from ferrum.placement.resources import consumers
from ferrum.placement.resources import providers

CONSUMER_MISSING = 'lease-consumer-missing'
CONSUMER_ORPHAN = 'lease-consumer-orphan'
CLASS_ORPHAN = 'class-orphan'
CLASS_MISSING = 'class-missing'

#: Statuses in which a lease in Placement has its class.
_CLASSED = frozenset({statuses.PENDING, statuses.STARTING, statuses.ACTIVE,
                      statuses.ENDING})




class _Want(NamedTuple):
    """What an ``active`` lease's consumer holds: node uuid -> the node's
    ``CUSTOM_<RC>``."""

    #: What it must hold.
    required: dict[str, str]
    #: What it may hold: the required nodes, and with the database
    #: backend those an allocation uses (held since the start; in use,
    #: they are reserved, so Placement would refuse to claim them again,
    #: and nothing else can claim them either).
    allowed: dict[str, str]


_NOTHING = _Want({}, {})


def _expected(pusher: sync.Pusher) -> dict[str, _Want]:
    """What each ``active`` lease's consumer should hold, by lease uuid
    (:func:`reservations.held_by_lease`, by the pusher's
    ``claims_allocations``)."""
    db = pusher.db
    with db.reader() as conn:
        holders = lease_holds.placement_holders(conn, None)
        if not holders:
            return {}
        rows = node_obj.Node.list_columns(
            db, ['id', 'uuid', 'resource_class', 'allocation_id'],
            {'id_in': base.bucketed(sorted(holders))})
    expected: dict[str, _Want] = {}
    for row in rows:
        holder = holders[row.id]
        rc = reservations.held_by_lease(row.resource_class,
                                        row.allocation_id,
                                        pusher.claims_allocations)
        if holder.status != statuses.ACTIVE or rc is None:
            continue
        want = expected.setdefault(holder.lease_uuid, _Want({}, {}))
        want.allowed[row.uuid] = rc
        if row.allocation_id is None:
            want.required[row.uuid] = rc
    return expected


def _live(db: db_api.Database, uuids: Collection[str]) -> bool:
    """Whether any of ``uuids`` is an allocation in flight or active."""
    return bool(allocation_consumers.live_uuids(db, uuids))


def classes_to_delete(db: db_api.Database) -> int:
    """How many leases are over and still have their class in Placement
    (the status view's ``lease_classes``): each engine run deletes them
    once no inventory uses them, so a count that stays up means nodes
    that do not come back, or a Placement that refuses."""
    return lease_classes.over_with_class(db)


def drift(pusher: sync.Pusher) -> list[audit.Drift]:
    """Every difference (see the module docstring).

    :raises PlacementUnavailable: when Placement cannot be read.
    """
    db, client = pusher.db, pusher.client
    named = {}
    for name in classes.names(client, reservations.PREFIX):
        lease_uuid = reservations.lease_of(name)
        if lease_uuid is not None:
            named[lease_uuid] = name
    leases = lease_classes.classed_or_named(db, named)
    found = list(_classes(leases, named))
    expected = _expected(pusher)
    user = pusher.conf.allocation.default_user
    for uuid, lease in sorted(leases.items()):
        if lease.placement_class and lease.status not in (
                statuses.TRANSITIONAL):
            found.extend(_consumer(db, client, user, lease,
                                   expected.get(uuid, _NOTHING)))
    return found


def _classes(leases: dict[str, lease_classes.ClassedLease],
             named: dict[str, str]) -> Iterator[audit.Drift]:
    for uuid, name in sorted(named.items()):
        lease = leases.get(uuid)
        if lease is None:
            yield audit.Drift(None, CLASS_ORPHAN, 'class %s names no lease '
                              'of ferrum\'s (another service\'s?): left '
                              'alone' % name, repairable=False,
                              lease_uuid=uuid)
        elif lease.status in statuses.FINAL:
            yield audit.Drift(None, CLASS_ORPHAN, 'class %s outlived its '
                              'lease, which is %s' % (name, lease.status),
                              lease_uuid=uuid)
    for uuid, lease in sorted(leases.items()):
        if not lease.placement_class or uuid in named:
            continue
        if lease.status in statuses.FINAL:
            yield audit.Drift(None, CLASS_ORPHAN, 'lease is %s and still '
                              'records its class %s, which Placement no '
                              'longer has' % (lease.status,
                                              reservations.class_name(uuid)),
                              lease_uuid=uuid)
        elif lease.status == statuses.PENDING and not lease.class_created:
            continue  # booked since the engine's last sweep, which makes it
        elif lease.status in _CLASSED:
            yield audit.Drift(None, CLASS_MISSING, 'lease is %s and its '
                              'class %s is missing' % (
                                  lease.status, reservations.class_name(uuid)),
                              lease_uuid=uuid)


def _consumer(db: db_api.Database, client: client_mod.PlacementClient,
              user: str, lease: lease_classes.ClassedLease,
              expected: _Want) -> Iterator[audit.Drift]:
    current = consumers.read(client, lease.uuid)
    held = set(current.allocations)
    if current.foreign(user):
        return  # another service's consumer of that uuid
    wanted = expected if lease.status == statuses.ACTIVE else _NOTHING
    for node in sorted(set(wanted.required) - held):
        if _live(db, providers.consumers_of(client, node)):
            continue  # an allocation under the lease is taking it
        yield audit.Drift(node, CONSUMER_MISSING, 'the consumer of active '
                          'lease %s does not hold node %s'
                          % (lease.uuid, node), lease_uuid=lease.uuid)
    for node in sorted(held - set(wanted.allowed)):
        yield audit.Drift(node, CONSUMER_ORPHAN, 'the consumer of %s lease '
                          '%s holds node %s, which it should not'
                          % (lease.status, lease.uuid, node),
                          lease_uuid=lease.uuid)


def heal_consumers(pusher: sync.Pusher,
                   found: list[audit.Drift]) -> dict[str, str]:
    """Rewrite each drifted lease consumer to what it should hold now
    (read again), in one request each; lease uuid -> outcome."""
    uuids = sorted({item.lease_uuid for item in found
                    if item.repairable and item.lease_uuid is not None
                    and item.kind in (CONSUMER_MISSING, CONSUMER_ORPHAN)})
    if not uuids:
        return {}
    db, client, writer = pusher.db, pusher.client, pusher.writer
    leases = lease_classes.classed_or_named(db, uuids)
    expected = _expected(pusher)
    user = pusher.conf.allocation.default_user
    outcomes = {}
    for uuid in uuids:
        lease = leases.get(uuid)
        want = expected.get(uuid, _NOTHING)
        held = set(consumers.read(client, uuid).allocations)
        wanted = {node: rc for node, rc in want.allowed.items()
                  if node in want.required or node in held}
        if lease is None or lease.status in statuses.TRANSITIONAL:
            outcomes[uuid] = 'in flight, left alone'
        elif lease.status != statuses.ACTIVE or not wanted:
            released = reservations.release_all(writer, user, [uuid])
            outcomes[uuid] = 'released' if released else 'nothing held'
        else:
            outcomes[uuid] = _claim(writer, user, lease, wanted)
    return outcomes


def _claim(writer: consumers.Writer, user: str,
           lease: lease_classes.ClassedLease,
           wanted: dict[str, str]) -> str:
    """Make the lease's consumer hold ``wanted``; the nodes Placement
    refuses (another consumer holds them) are left out and reported."""
    try:
        reservations.claim_lease(writer, lease.uuid, lease.project, user,
                                 wanted)
        return 'claimed'
    except errors.ConsumerTaken:
        return 'not ours'
    except errors.Busy as exc:
        if not exc.providers:
            return 'refused: %s' % exc
        rest = {node: rc for node, rc in wanted.items()
                if node not in exc.providers}
        outcome = ('Placement refused nodes %s (another consumer holds '
                   'them, or they are reserved)' % ', '.join(sorted(
                       exc.providers)))
    if not rest:
        return outcome
    try:
        reservations.claim_lease(writer, lease.uuid, lease.project, user,
                                 rest)
    except (errors.Busy, errors.ConsumerTaken) as exc:
        return '%s; refused: %s' % (outcome, exc)
    return 'claimed; %s' % outcome


def heal_classes(pusher: sync.Pusher,
                 found: list[audit.Drift]) -> dict[str, str]:
    """Create the missing classes and delete the orphans (after the
    inventories were pushed: Placement refuses to delete a class in
    use); class name -> outcome."""
    db, client = pusher.db, pusher.client
    outcomes = {}
    gone = []
    made = []
    leases = lease_classes.classed_or_named(
        db, [item.lease_uuid for item in found
             if item.lease_uuid is not None])
    for item in found:
        lease = leases.get(item.lease_uuid or '')
        if not item.repairable or lease is None:
            continue
        name = reservations.class_name(lease.uuid)
        if item.kind == CLASS_MISSING and lease.status in _CLASSED:
            reservations.ensure_class(client, lease.uuid)
            made.append(lease.id)
            outcomes[name] = 'created'
        elif item.kind == CLASS_ORPHAN and lease.status in statuses.FINAL:
            if reservations.delete_class(client, lease.uuid):
                gone.append(lease.id)
                outcomes[name] = 'deleted'
            else:
                outcomes[name] = 'still in use by an inventory'
    lease_classes.forget(db, gone)
    lease_classes.created(db, made)
    return outcomes
