# SPDX-License-Identifier: Apache-2.0
"""The lease engine's steps in Placement, for leases created while
``[placement]`` was configured (``placement_class``); the mapping itself
is :mod:`ferrum.placement.reservations`.

- **Start**: one request claims every node of the lease for the lease's
  consumer (:func:`claim_start`), after ferrum's database gave them to
  the lessee; nodes Placement refuses go to the busy-node policy.
- **End**: one request empties the lease's consumer and its allocations'
  (:func:`release_end`) before any node goes back.
- **Before the start**: the class of a lease booked while Placement was
  away is created at the next run (:func:`create_classes`).
- **After the end**: the class goes once no inventory uses it any more
  (:func:`delete_classes`); nodes lose the inventory as they go back
  (pushed by the sync worker, queued here with :func:`queue_push`).

While Placement is away a start or an end waits (the lease stays
``starting`` or ``ending``, ``last_error`` says why) and is tried again
at the next run: nothing is half done in one system and not the other.
"""

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from ferrum.common import lease_statuses as statuses
from ferrum.conductor import context as context_mod
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import lease as lease_obj
from ferrum.objects import lease_booking
from ferrum.objects import lease_class
from ferrum.objects import lease_node
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import mapping
from ferrum.placement import outbox
from ferrum.placement import reservations
from ferrum.placement import service
from ferrum.placement.resources import providers

LOG = logging.getLogger(__name__)
_TABLE = lease_obj.TABLE
#: Classes deleted per run, at most.
_SWEEP = 100

Unavailable = errors.PlacementUnavailable
Refused = errors.PlacementRefused




def placement_of(ctx: context_mod.ConductorContext,
                 lease: lease_obj.Lease) -> service.PlacementService | None:
    """The conductor's Placement handle, when the lease is in Placement
    (and None when it is not).

    :raises PlacementUnavailable: the lease is in Placement but this
        conductor has no ``[placement]`` (it must not act on half of it).
    """
    if not lease.placement_class:
        return None
    if ctx.placement is None:
        raise Unavailable(reason=(
            'lease %s was created with [placement] configured, but this '
            'conductor has no [placement] section' % lease.uuid))
    ctx.placement.check_up()
    return ctx.placement


def claim_start(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
                rows: Sequence[lease_booking.LeaseNodeRow]
                ) -> list[lease_booking.LeaseNodeRow]:
    """Claim the lease's nodes (``rows``, all held in ferrum's database)
    for its consumer, in one request; the rows Placement refused.

    A node an allocation under the lease already holds keeps its
    allocation's claim; a node without a resource class has no inventory,
    so nothing in Placement can claim it and neither can the lease.

    :raises PlacementUnavailable: Placement is away, or refused without
        saying which node is held elsewhere (:class:`Undecided`); tried
        again next run.
    """
    placement = placement_of(ctx, lease)
    if placement is None:
        return []
    client = placement.client
    reservations.ensure_class(client, lease.uuid)
    lease.class_was_created()
    # With the placement backend an allocation's consumer holds its node;
    # with the database backend the lease's consumer keeps holding it.
    # A node the project's previous lease still has comes with its
    # hand-over (see hand_over), not now: that lease's consumer holds it.
    others = lease_node.held_by_others(ctx.db, lease.id, lease.project,
                                       [row.node_id for row in rows])
    held = {row.node_uuid: reservations.held_by_lease(
        row.resource_class, row.allocation_id, placement.claims_allocations)
        for row in rows if row.node_id not in others}
    nodes = {uuid: rc for uuid, rc in held.items() if rc is not None}
    if not nodes:
        return []
    try:
        reservations.claim_lease(placement.writer, lease.uuid, lease.project,
                                 ctx.conf.allocation.default_user, nodes)
        return []
    except errors.Busy as exc:
        # Placement names only the first node it refused: every node is
        # read, so that all the busy ones are substituted at once.
        named = exc.providers | _held_elsewhere(client, lease, nodes)
        if not named:
            raise errors.Undecided(reason='it refused the lease\'s claim (%s)'
                                   % exc) from exc
        LOG.warning('Lease %(lease)s: Placement refused its claim, nodes '
                    '%(nodes)s are held by other consumers or reserved '
                    'there', {'lease': lease.uuid,
                              'nodes': ', '.join(sorted(named))})
        return [row for row in rows if row.node_uuid in named]
    except errors.ConsumerTaken as exc:
        raise errors.Collision(
            'The lease could not start: its uuid %s is already a consumer '
            'in Placement, another service\'s. Delete the lease and book '
            'again with another uuid.' % lease.uuid) from exc
    except Refused as exc:
        # A node's provider missing (not synced yet, or deleted behind
        # ferrum's back: the sync creates it again), or the consumer
        # kept changing: nothing was claimed, the next run tries again.
        raise errors.Undecided(reason='it refused the lease\'s claim (%s)'
                               % exc) from exc


def claim_rounds(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
                 rounds: int, substitute: bool,
                 replace: Callable[[lease_booking.LeaseNodeRow], bool]
                 ) -> list[lease_booking.LeaseNodeRow]:
    """The Placement claim of a start (one request a round); with
    ``substitute``, the busy nodes are let go and each ``replace``-d
    before the next round. The rows still busy.

    :raises PlacementUnavailable: as :func:`claim_start`.
    """
    busy: list[lease_booking.LeaseNodeRow] = []
    for _round in range(rounds):
        busy = claim_start(ctx, lease, lease.node_rows())
        if not busy or not substitute:
            return busy
        for row in busy:
            lease_node.unhold_node(ctx.db, row, lease.project)
        if [row for row in busy if not replace(row)]:
            return busy
    return busy


def unheld(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
           nodes: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """Those of ``nodes`` (id, uuid) no other consumer holds in Placement
    (all of them when the lease is not in Placement, or it is away: the
    claim finds out)."""
    if not lease.placement_class or ctx.placement is None:
        return list(nodes)
    client = ctx.placement.client
    try:
        return [(node_id, uuid) for node_id, uuid in nodes
                if not _held_by_another(client, lease, uuid)]
    except Unavailable:
        return list(nodes)


def _held_elsewhere(client: client_mod.PlacementClient,
                    lease: lease_obj.Lease,
                    nodes: Mapping[str, str]) -> set[str]:
    """Nodes another consumer holds, read one by one: only after a
    refusal (Placement names the first node it met)."""
    return {node for node in nodes if _held_by_another(client, lease, node)}


def _held_by_another(client: client_mod.PlacementClient,
                     lease: lease_obj.Lease, node: str) -> bool:
    """Whether a consumer other than the lease's holds ``node``."""
    return bool(set(providers.consumers_of(client, node)) - {lease.uuid})


def release_start(ctx: context_mod.ConductorContext,
                  lease: lease_obj.Lease) -> None:
    """Empty the lease's consumer after a start that failed."""
    placement = placement_of(ctx, lease)
    if placement is not None:
        reservations.release_all(placement.writer,
                                 ctx.conf.allocation.default_user,
                                 [lease.uuid])


def release_end(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
                rows: Sequence[lease_booking.LeaseNodeRow]) -> int:
    """Empty the lease's consumer and the consumers of the allocations on
    its nodes (ferrum's only), in one request; how many held anything.

    :raises PlacementUnavailable: Placement is away; nothing is released.
    """
    placement = placement_of(ctx, lease)
    if placement is None:
        return 0
    held = [row.allocation_id for row in rows
            if row.allocation_id is not None]
    allocations = allocation_obj.uuids_by_id(ctx.db, held).values()
    return reservations.release_all(placement.writer,
                                    ctx.conf.allocation.default_user,
                                    [lease.uuid, *sorted(allocations)])


def end_waits_for(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
                  rows: Sequence[lease_booking.LeaseNodeRow]) -> str | None:
    """Release the lease's claims in Placement (its consumer's and its
    allocations', in one request); what the end waits for, if anything:
    nothing goes back before Placement let go of it."""
    try:
        if release_end(ctx, lease, rows):
            LOG.info('Lease %(lease)s: its claims in Placement are '
                     'released', {'lease': lease.uuid})
        # Their reservation units are reserved from now on (queued every
        # run: an unchanged provider costs no request, and a conductor
        # that died after the release still gets them pushed).
        queue_push(ctx, lease, [row.node_uuid for row in rows])
    except (Unavailable, Refused) as exc:
        return 'Placement, to release the lease\'s claims (%s)' % exc
    return None


def hand_over(ctx: context_mod.ConductorContext,
              rows: Sequence[lease_booking.LeaseNodeRow]) -> None:
    """Claim for the project's next lease the nodes an ending lease just
    handed over to it (``rows``, the ending lease's; the others were
    given back): its start left them to the ending lease's consumer,
    which the end released. A failure is logged; the lease audit reports
    the missing claim and ``--heal`` makes it."""
    if ctx.placement is None or not rows:
        return
    with ctx.db.reader() as conn:
        holders = lease_node.placement_holders(
            conn, [row.node_id for row in rows])
    wanted: dict[str, dict[str, str]] = {}
    for row in rows:
        held = holders.get(row.node_id)
        if held is not None and held.running and row.resource_class:
            wanted.setdefault(held.lease_uuid, {})[row.node_uuid] = (
                mapping.resource_class_name(row.resource_class))
    for lease_uuid, nodes in sorted(wanted.items()):
        try:
            reservations.add_nodes(ctx.placement.writer, lease_uuid,
                                   rows[0].project,
                                   ctx.conf.allocation.default_user, nodes)
        except (Unavailable, Refused, errors.Busy,
                errors.ConsumerTaken) as exc:
            LOG.warning('Lease %(lease)s: nodes %(nodes)s handed over to '
                        'it are not claimed in Placement (the audit reports '
                        'them): %(error)s', {
                            'lease': lease_uuid, 'error': exc,
                            'nodes': ', '.join(sorted(nodes))})


def queue_push(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
               node_uuids: Iterable[str]) -> None:
    """Queue the nodes' providers for the sync worker (their reservation
    inventory follows the lease); joins the caller's transaction."""
    if lease.placement_class and ctx.placement is not None:
        outbox.enqueue(ctx.db, node_uuids)


def create_classes(ctx: context_mod.ConductorContext) -> None:
    """Create the classes of pending leases booked while Placement was
    away, so that a flavor can name them before the start (which would
    create them otherwise); the API shows ``reservation_class`` from
    then on."""
    if ctx.placement is None:
        return
    waiting = lease_obj.Lease.matching(ctx.db, [
        _TABLE.c.placement_class.is_(True),
        _TABLE.c.class_created.is_(False),
        _TABLE.c.status == statuses.PENDING], limit=_SWEEP)
    if not waiting:
        return
    made = []
    try:
        ctx.placement.check_up()
        for lease in waiting:
            # One lease refused must not hold back every later one (the
            # sweep takes the oldest first): it is tried again next time.
            try:
                reservations.ensure_class(ctx.placement.client, lease.uuid)
            except Refused as exc:
                LOG.warning('Lease %(lease)s: Placement refused to create '
                            'its class: %(error)s',
                            {'lease': lease.uuid, 'error': exc})
                continue
            made.append(lease.id)
    except Unavailable as exc:
        LOG.debug('Lease classes wait for Placement: %s', exc)
    finally:
        lease_class.created(ctx.db, made)


def delete_classes(ctx: context_mod.ConductorContext) -> None:
    """Delete the classes of leases that are over, once no inventory uses
    them (their nodes all went back and were pushed)."""
    if ctx.placement is None:
        return
    over = lease_obj.Lease.matching(ctx.db, [
        _TABLE.c.placement_class.is_(True),
        _TABLE.c.status.in_(sorted(statuses.FINAL))], limit=_SWEEP)
    if not over:
        return
    client = ctx.placement.client
    gone = []
    try:
        ctx.placement.check_up()
        for lease in over:
            try:
                deleted = reservations.delete_class(client, lease.uuid)
            except Refused as exc:
                LOG.warning('Lease %(lease)s: Placement refused to delete '
                            'its class: %(error)s',
                            {'lease': lease.uuid, 'error': exc})
                continue
            if deleted:
                gone.append(lease.id)
                LOG.info('Lease %(lease)s: its class %(class)s is deleted '
                         'from Placement', {
                             'lease': lease.uuid,
                             'class': reservations.class_name(lease.uuid)})
    except Unavailable as exc:
        LOG.debug('Lease classes wait for Placement: %s', exc)
    lease_class.forget(ctx.db, gone)
