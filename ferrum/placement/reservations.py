# SPDX-License-Identifier: Apache-2.0
"""A lease in Placement: its reservation class and its claims.

The mapping (see ``doc/placement.md`` for the diagram):

- **Class.** Each lease has the custom class ``CUSTOM_RESERVATION_<UUID>``
  (:func:`class_name`, as in Blazar), created with the lease and deleted
  after its end.
- **Inventory.** While the lease holds a node, the node's provider offers
  one unit of that class (:mod:`ferrum.placement.mapping`): what a nova
  flavor with ``resources:CUSTOM_RESERVATION_<UUID>=1`` asks for.
- **The lease's consumer** (uuid = the lease's) holds the one unit of
  ``CUSTOM_<RC>`` of every leased node nobody uses under the lease, so
  that no consumer that ignores the lease can claim them. The lease's
  start claims them all in one request (:func:`claim_lease`): all or
  nothing.
- **A ferrum allocation under the lease** takes a node from the lease's
  consumer in one ``POST /allocations`` (:func:`take`): its consumer gets
  the node's ``CUSTOM_<RC>`` unit and its ``CUSTOM_RESERVATION`` unit, the
  lease's consumer loses the node, in one transaction. The reservation
  unit (total 1) is what makes ferrum and a consumer claiming through the
  reservation class exclude each other. Deleting the allocation gives the
  node back to the lease's consumer the same way (:func:`give_back`).
- **The end** empties the lease's consumer and its allocations' consumers
  in one request (:func:`release_all`); the inventory goes as each node
  goes back, then the class (:func:`delete_class`): Placement refuses any
  other order (Blazar bug 1813252).

Consumers are ferrum's when their user is ``[allocation] default_user``;
a consumer of another user is never changed. Each write here only says
what each consumer should hold afterwards; the one writer
(:class:`ferrum.placement.resources.consumers.Writer`) reads them, sends
their generations, and reads again on a concurrent change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import mapping
from ferrum.placement.resources import classes
from ferrum.placement.resources import consumers

Consumer = consumers.Consumer
Holding = consumers.Holding

PREFIX = 'CUSTOM_RESERVATION_'
_UUID = re.compile('[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                   '[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')


def class_name(lease_uuid: str) -> str:
    """``CUSTOM_RESERVATION_`` + the uuid in upper case, ``-`` as ``_``."""
    return PREFIX + lease_uuid.upper().replace('-', '_')


def held_by_lease(resource_class: str | None, allocation_id: int | None,
                  claims_allocations: bool) -> str | None:
    """The class a running lease's consumer holds one unit of for one of
    its nodes (``CUSTOM_<RC>``); None when it holds none: a node without
    a resource class has no inventory (nothing in Placement can claim it,
    nor can the lease), and when allocations are consumers
    (``claims_allocations``) an allocation's consumer holds its node.
    The lease's start claims by this rule and the lease audit checks by
    it."""
    if not resource_class or (claims_allocations
                              and allocation_id is not None):
        return None
    return mapping.resource_class_name(resource_class)


def lease_of(resource_class: str) -> str | None:
    """The lease uuid of a reservation class; None for any other class."""
    if not resource_class.startswith(PREFIX):
        return None
    text = resource_class[len(PREFIX):].replace('_', '-').lower()
    return text if _UUID.fullmatch(text) else None




def _busy(exc: errors.PlacementRefused,
          providers: Iterable[str]) -> errors.Busy:
    """Which of ``providers`` Placement named in its refusal."""
    wanted = set(providers)
    named = {m.lower() for m in _UUID.findall(exc.kwargs.get('detail', ''))}
    return errors.Busy(named & wanted, str(exc))


def ensure_class(client: client_mod.PlacementClient, lease_uuid: str) -> None:
    """Create the lease's class (idempotent)."""
    classes.ensure(client, class_name(lease_uuid))


def delete_class(client: client_mod.PlacementClient,
                 lease_uuid: str) -> bool:
    """Delete the lease's class; False while an inventory still uses it."""
    return classes.delete(client, class_name(lease_uuid))


def _lease_consumer(current: Mapping[str, Consumer], lease_uuid: str,
                    user: str) -> Consumer:
    """The lease's consumer as read.

    :raises ConsumerTaken: the lease's uuid is another user's consumer.
    """
    lease = current[lease_uuid]
    if lease.foreign(user):
        raise errors.ConsumerTaken(lease_uuid, lease.user)
    return lease


def _units(nodes: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """One unit of each node's class (provider uuid -> class)."""
    return {provider: {rc: 1} for provider, rc in nodes.items()}


def _write(writer: consumers.Writer, uuids: list[str],
           build: consumers.Build, nodes: Iterable[str],
           fresh: Iterable[str] = ()) -> consumers.Written:
    """The write; a refusal other than a concurrent change is
    :class:`Busy`, naming which of ``nodes`` Placement named."""
    try:
        return writer.write(uuids, build, fresh=set(fresh))
    except errors.PlacementConflict as exc:
        if exc.error_code == client_mod.CONCURRENT_UPDATE:
            raise
        raise _busy(exc, nodes) from exc


def claim_lease(writer: consumers.Writer, lease_uuid: str, project: str,
                user: str, nodes: Mapping[str, str]) -> None:
    """Make the lease's consumer hold the ``CUSTOM_<RC>`` unit of each of
    ``nodes`` (provider uuid -> class), and nothing else: one request, all
    or nothing. Run again (a start taken over), it replaces what the
    consumer held, keeping what its allocations took.

    :raises Busy: Placement refused; ``providers`` are the nodes it named
        (empty when it named none of them).
    :raises ConsumerTaken: the lease's uuid is another user's consumer.
    :raises PlacementConflict: the consumer kept changing.
    """
    def build(current: Mapping[str, Consumer]) -> dict[str, Holding]:
        _lease_consumer(current, lease_uuid, user)
        return {lease_uuid: Holding(_units(nodes), project, user)}

    # Presumed new: a start's first claim costs no read.
    _write(writer, [lease_uuid], build, nodes, fresh=[lease_uuid])


def add_nodes(writer: consumers.Writer, lease_uuid: str, project: str,
              user: str, nodes: Mapping[str, str]) -> None:
    """Make the lease's consumer hold ``nodes`` (provider uuid -> class)
    too, keeping what it holds: one request.

    :raises Busy: Placement refused (someone else holds one of them).
    :raises ConsumerTaken: the lease's uuid is another user's consumer.
    :raises PlacementConflict: the consumer kept changing.
    """
    def build(current: Mapping[str, Consumer]) -> dict[str, Holding]:
        lease = _lease_consumer(current, lease_uuid, user)
        held = dict(lease.allocations)
        held.update(_units(nodes))
        return {lease_uuid: Holding(held, lease.project or project, user)}

    _write(writer, [lease_uuid], build, nodes)


def take(writer: consumers.Writer, lease_uuid: str, consumer: str,
         provider: str, resource_class: str, project: str,
         user: str) -> None:
    """Move ``provider`` from the lease's consumer to new consumer
    ``consumer`` (an allocation under the lease), with the lease's
    reservation unit: one request.

    :raises Busy: Placement refused the node (someone holds its
        reservation unit, or its class unit outside the lease).
    :raises ConsumerTaken: ``consumer`` exists already, or the lease's
        uuid is another user's consumer.
    :raises PlacementConflict: the lease's consumer kept changing.
    """
    mine = {provider: {resource_class: 1, class_name(lease_uuid): 1}}

    def build(current: Mapping[str, Consumer]) -> dict[str, Holding]:
        if not current[consumer].empty:
            raise errors.ConsumerTaken(consumer, current[consumer].user)
        wanted = {consumer: Holding(mine, project, user)}
        lease = current[lease_uuid]
        if provider in lease.allocations:
            _lease_consumer(current, lease_uuid, user)
            held = {p: found for p, found in lease.allocations.items()
                    if p != provider}
            wanted[lease_uuid] = Holding(held, lease.project or project,
                                         user)
        return wanted

    _write(writer, [consumer, lease_uuid], build, [provider],
           fresh=[consumer])


def give_back(writer: consumers.Writer, consumer: str, lease_uuid: str,
              project: str, user: str) -> None:
    """Empty ferrum's consumer ``consumer`` and give the lease's consumer
    the class units it held under the lease: one request. Nothing is
    written once ``consumer`` is empty.

    :raises ConsumerTaken: the lease's uuid is another user's consumer
        (nothing written; the caller empties ``consumer`` alone), or
        ``consumer`` is now another user's (nothing written).
    :raises PlacementConflict: the consumers kept changing.
    """
    reservation = class_name(lease_uuid)

    def build(current: Mapping[str, Consumer]) -> dict[str, Holding]:
        mine = current[consumer]
        if mine.empty:
            return {}
        if mine.foreign(user):
            # Emptied and made again by another service since the
            # caller's read: never ours to change.
            raise errors.ConsumerTaken(consumer, mine.user)
        lease = _lease_consumer(current, lease_uuid, user)
        held = dict(lease.allocations)
        for provider, resources in mine.allocations.items():
            rest = {rc: amount for rc, amount in resources.items()
                    if rc != reservation}
            if reservation in resources and rest:
                held[provider] = rest
        wanted = {consumer: Holding({}, mine.project or project, user)}
        if held:
            wanted[lease_uuid] = Holding(held, lease.project or project,
                                         user)
        return wanted

    writer.write([consumer, lease_uuid], build)


def release_all(writer: consumers.Writer, user: str,
                uuids: Iterable[str]) -> int:
    """Empty ``uuids`` (the lease's and its allocations') in one
    request, those of ``user`` only; how many held anything.

    :raises PlacementConflict: they kept changing.
    """
    return len(consumers.empty(writer, list(uuids), user).emptied)
