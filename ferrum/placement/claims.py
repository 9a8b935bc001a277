# SPDX-License-Identifier: Apache-2.0
"""Placement claims of ferrum's allocations: made, made in use, released.

With ``[allocation] backend = placement`` every allocation is a consumer
in Placement whose uuid is the allocation's, holding its node's one unit
(:func:`claim`; :func:`claim_in_use` for a node already in use). A node a
running lease holds is taken from the lease's consumer, and given back to
it at the release (:func:`release`), in one request each. The queue of
releases still to send is :mod:`ferrum.placement.releases`.
A consumer is released only while no live allocation (``allocating`` or
``active``) of that uuid exists, so a row recorded too eagerly (a
statement that matched nothing, or was refused) does no harm.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from ferrum.db import api as db_api
from ferrum.objects.lease import classes as lease_classes
from ferrum.objects.lease import holds as lease_holds
from ferrum.placement import errors
from ferrum.placement import mapping
from ferrum.placement import outbox
from ferrum.placement import reservations
from ferrum.placement import sync
from ferrum.placement.resources import consumers
from ferrum.placement.resources import providers
from ferrum.placement.resources import retry

LOG = logging.getLogger(__name__)


def claim_alone(pusher: sync.Pusher, consumer: str, node_uuid: str,
                resource_class: str | None, owner: str | None) -> None:
    """Create ``consumer`` holding the node's one unit, and nothing else
    (presumed new: no read unless Placement says it exists); for project
    and user see :func:`claim`.

    :raises ConsumerTaken: a consumer of that uuid exists already.
    :raises PlacementRefused: as for :func:`claim`.
    """
    group = pusher.conf.allocation
    project = owner or group.default_project
    holding = consumers.Holding(
        {node_uuid: {mapping.resource_class_name(resource_class or ''): 1}},
        project, group.default_user)

    def build(current: Mapping[str, consumers.Consumer]
              ) -> dict[str, consumers.Holding]:
        if not current[consumer].empty:
            raise errors.ConsumerTaken(consumer,
                                             current[consumer].user)
        return {consumer: holding}

    pusher.writer.write([consumer], build, fresh=[consumer])


def claim(pusher: sync.Pusher, consumer: str, node_uuid: str,
          resource_class: str | None, owner: str | None) -> None:
    """Create ``consumer`` holding the node's one unit: project the
    allocation's owner (else ``[allocation] default_project``), user
    ``[allocation] default_user`` (which marks ferrum's consumers).

    A node a running lease holds is taken from the lease's consumer in
    the same request, with the lease's reservation unit
    (:func:`reservations.take`); just after the lease's start the sync
    worker may not have written that unit yet: it is pushed now, once.

    :raises ConsumerTaken: a consumer of that uuid exists already.
    :raises Busy: Placement refused a node a lease holds.
    :raises PlacementRefused: Placement refused the node (someone else
        holds its unit, it is reserved, or it has no provider or no such
        class yet: the sync is behind); or the consumers kept changing.
    """
    holder = lease_holds.placement_holder_of(pusher.db, node_uuid)
    if holder is None or not holder.running:
        claim_alone(pusher, consumer, node_uuid, resource_class, owner)
        return
    group = pusher.conf.allocation
    rc = mapping.resource_class_name(resource_class or '')
    project = owner or group.default_project
    user = group.default_user
    try:
        reservations.take(pusher.writer, holder.lease_uuid, consumer,
                          node_uuid, rc, project, user)
    except errors.Busy:
        if pusher.push(node_uuid, delete=False) != sync.WRITTEN:
            raise
        reservations.take(pusher.writer, holder.lease_uuid, consumer,
                          node_uuid, rc, project, user)


def claim_in_use(pusher: sync.Pusher, node_uuid: str,
                 claim_once: Callable[[], bool]) -> bool:
    """Claim a node in use (``active``), whose provider is reserved (see
    :func:`mapping.reserved`), with ``claim_once`` (True when claimed,
    False when Placement refused the node): a backfill (1.58), or the
    audit's heal of a consumer missing after a switch from the database
    backend.

    The provider is written unreserved, claimed, and pushed back to the
    rule's value (reserved) whatever happened. For that short window (a
    few requests) another service may claim the node first: the claim is
    then refused (False). A node only reserved again meanwhile (our own
    sync thread pushed it) is tried again, within the one retry budget
    (:mod:`ferrum.placement.resources.retry`). If the push back fails,
    the provider stays unreserved until the sync thread's next push or the
    periodic reconcile, which reserve it again (the node is in use).

    :raises PlacementUnavailable: Placement is away.
    """
    def attempt(_number: int) -> bool:
        pusher.unreserve(node_uuid)
        if claim_once():
            return True
        if providers.consumers_of(pusher.client, node_uuid):
            return False
        raise errors.ReservedAgain(node_uuid)

    try:
        return retry.on_conflict(
            attempt, retry.attempts(pusher.conf),
            again=lambda exc: isinstance(exc, errors.ReservedAgain))
    except errors.ReservedAgain:
        return False
    finally:
        try:
            pusher.push(node_uuid)
        except errors.PlacementUnavailable as exc:
            LOG.warning('Node %(node)s: its provider stays unreserved until '
                        'the next push (the reconcile reserves it again): '
                        '%(error)s', {'node': node_uuid, 'error': exc})


def release(pusher: sync.Pusher, consumer: str, lease_aware: bool = True
            ) -> bool:
    """Remove ``consumer`` if it is ferrum's (its user is ``[allocation]
    default_user``); another service's consumer of that uuid is left
    alone and False returned.

    A consumer that holds a node under a lease still running (its
    resources include the lease's reservation class) gives the node back
    to the lease's consumer in the same request
    (:func:`reservations.give_back`): no other consumer can take the node
    in between. Without ``lease_aware`` the lease is not looked up.

    :raises PlacementUnavailable: Placement is away.
    :raises PlacementConflict: the consumer kept changing under us.
    """
    user = pusher.conf.allocation.default_user
    db = pusher.db
    reserving: list[str] = []
    if lease_aware:
        current = consumers.read(pusher.client, consumer)
        if current.empty:
            return True
        lease = _live_lease(db, current) if current.user == user else None
        if lease is not None:
            lease_uuid, project = lease
            try:
                reservations.give_back(pusher.writer, consumer, lease_uuid,
                                       project, user)
                if _late_give_back(pusher, lease_uuid, user):
                    # The end pushed the nodes while this consumer still
                    # held their reservation units, so their reservation
                    # inventory stayed (in use): push them again, now
                    # that nothing holds it, or the lease's class is
                    # never deleted.
                    outbox.enqueue(db, _reserving(current))
                return True
            except errors.ConsumerTaken:
                # The lease's uuid is another service's consumer: never
                # written; this consumer is simply emptied.
                pass
        reserving = _reserving(current)
    if not consumers.empty(pusher.writer, [consumer],
                                    user).foreign:
        if reserving:
            # The reservation inventory of a lease that stopped running
            # was kept while this consumer held it: it can go now.
            outbox.enqueue(db, reserving)
        return True
    LOG.warning('Placement consumer %(consumer)s belongs to another '
                'service (its user is not [allocation] default_user '
                '%(user)s): not removed', {
                    'consumer': consumer, 'user': user})
    return False


def _reserving(current: consumers.Consumer) -> list[str]:
    """The providers on which ``current`` holds a lease's reservation
    unit."""
    return [provider for provider, resources in current.allocations.items()
            if any(reservations.lease_of(rc) is not None
                   for rc in resources)]


def _late_give_back(pusher: sync.Pusher, lease_uuid: str, user: str
                    ) -> bool:
    """Release the lease's consumer if the lease stopped running while
    the node was given back to it (its end may have released it already);
    whether it had. The end moves the lease to ``ending`` before it
    releases, so either this read sees it running and the end's release
    takes the node, or the release is done here."""
    if _running(pusher.db, lease_uuid) is not None:
        return False
    LOG.info('Lease %(lease)s: it ended while a node was given back '
             'to its Placement consumer; releasing that consumer',
             {'lease': lease_uuid})
    consumers.empty(pusher.writer, [lease_uuid], user)
    return True


def _running(db: db_api.Database, lease_uuid: str) -> str | None:
    """The project of lease ``lease_uuid`` if it is running."""
    return lease_classes.project_while_in(db, lease_uuid, lease_holds.RUNNING)


def _live_lease(db: db_api.Database, current: consumers.Consumer
               ) -> tuple[str, str] | None:
    """(uuid, project) of the running lease whose class ``current`` (a
    consumer as read) holds, if any."""
    for resources in current.allocations.values():
        for rc in resources:
            lease_uuid = reservations.lease_of(rc)
            project = None if lease_uuid is None else _running(
                db, lease_uuid)
            if lease_uuid is not None and project is not None:
                return lease_uuid, project
    return None


