# SPDX-License-Identifier: Apache-2.0
"""The lease engine's steps in Placement, as objects chosen once a lease.

The engine asks ``ctx.placement.leases_for(lease)`` for a lease's steps
and calls them whatever they are, as Ironic's conductor calls a
``no-bios`` interface rather than asking whether there is a BIOS:

- :data:`NONE` (:class:`Steps`): the lease has no class
  (``placement_class`` false): nothing to claim, release or push;
- :class:`InPlacement`: the lease has a class and this conductor a
  ``[placement]``:

  - **start**: one request claims every node of the lease for the
    lease's consumer (:meth:`InPlacement.claim`), after ferrum's
    database gave them to the lessee; nodes Placement refuses go to the
    busy-node policy;
  - **end**: one request empties the lease's consumer and its
    allocations' before any node goes back
    (:meth:`InPlacement.end_waits_for`);
  - nodes lose or gain the reservation inventory as the lease goes, by
    the sync worker (queued with :meth:`Steps.push`);

- :class:`Unconfigured`: the lease has a class but this conductor no
  ``[placement]``: it must not act on half of the lease, so the start
  and the end wait, saying why.

Around the leases, :func:`hand_over`, :func:`create_classes` (of leases
booked while Placement was away) and :func:`delete_classes` (once no
inventory uses them) are the handle's (:mod:`ferrum.placement.service`).

While Placement is away a start or an end waits (the lease stays
``starting`` or ``ending``, ``last_error`` says why) and is tried again
at the next run: nothing is half done in one system and not the other.
The steps answer with what happened (:class:`Claimed`, a reason to
wait); they do not raise for Placement's failures.
"""

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from oslo_config import cfg

from ferrum.common import lease_statuses as statuses
from ferrum.db import api as db_api
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import lease as lease_obj
from ferrum.objects.lease import classes as lease_classes
from ferrum.objects.lease import holds as lease_holds
from ferrum.objects.lease import nodes as lease_nodes
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import mapping
from ferrum.placement import outbox
from ferrum.placement import reservations
from ferrum.placement.resources import consumers
from ferrum.placement.resources import providers

LOG = logging.getLogger(__name__)
_TABLE = lease_obj.TABLE
#: Classes created or deleted per run, at most.
_SWEEP = 100
Row = lease_nodes.LeaseNodeRow


class Service(Protocol):
    """What the steps use of the conductor's Placement handle
    (:class:`ferrum.placement.service.PlacementService`)."""

    conf: cfg.ConfigOpts
    db: db_api.Database
    client: client_mod.PlacementClient
    writer: consumers.Writer
    claims_allocations: bool

    def check_up(self) -> None: ...


class Claimed(NamedTuple):
    """What a start's claim in Placement came to: at most one of
    ``waits`` and ``failure`` is set, and then ``busy`` is empty."""

    #: The rows Placement still refused after the rounds.
    busy: Sequence[Row] = ()
    #: Why the start waits for the next run (Placement away, or it
    #: refused without naming a node).
    waits: str | None = None
    #: Why the start fails at once (the lease's uuid is another
    #: service's consumer).
    failure: str | None = None


class Steps:
    """The steps of a lease without a class: nothing to do in Placement.

    Each method says what its :class:`InPlacement` counterpart does; all
    run on a conductor, outside any transaction unless said otherwise.
    """

    #: Whether the start claims the nodes somewhere after ferrum's
    #: database gave them, so that the lease cannot go active in the
    #: transaction that gives them.
    claims: bool = False

    def claim(self, rounds: int, substitute: bool,
              replace: Callable[[Row], bool]) -> Claimed:
        """Claim the lease's nodes, all held in ferrum's database, in
        up to ``rounds`` requests; with ``substitute`` the refused nodes
        are let go and each ``replace``-d before the next round."""
        return Claimed()

    def unheld(self, nodes: Sequence[tuple[int, str]]
               ) -> list[tuple[int, str]]:
        """Those of ``nodes`` (id, uuid) no other consumer holds."""
        return list(nodes)

    def release_start(self) -> str | None:
        """Let go of what a failed start claimed; why that must wait,
        if it must."""
        return None

    def end_waits_for(self, rows: Sequence[Row]) -> str | None:
        """Release what the lease and its allocations hold on ``rows``;
        what the end waits for, if anything: nothing goes back before
        it is released."""
        return None

    def push(self, node_uuids: Iterable[str]) -> None:
        """Queue the nodes' providers for the sync worker (their
        reservation inventory follows the lease); joins the caller's
        transaction."""


#: The steps of every lease without a class.
NONE = Steps()


class Unconfigured(Steps):
    """A lease created with ``[placement]`` configured, on a conductor
    without it: its start and its end wait (another conductor, or this
    one once configured, carries them out)."""

    claims = True

    def __init__(self, lease: lease_obj.Lease) -> None:
        self.why = str(errors.PlacementUnavailable(reason=(
            'lease %s was created with [placement] configured, but this '
            'conductor has no [placement] section' % lease.uuid)))

    def claim(self, rounds: int, substitute: bool,
              replace: Callable[[Row], bool]) -> Claimed:
        return Claimed(waits=self.why)

    def release_start(self) -> str | None:
        return self.why

    def end_waits_for(self, rows: Sequence[Row]) -> str | None:
        return _waits_to_release(self.why)


def _waits_to_release(why: object) -> str:
    return 'Placement, to release the lease\'s claims (%s)' % why


class InPlacement(Steps):
    """A lease with a class, on a conductor with ``[placement]``."""

    claims = True

    def __init__(self, service: Service, lease: lease_obj.Lease) -> None:
        self.service = service
        self.lease = lease

    def claim(self, rounds: int, substitute: bool,
              replace: Callable[[Row], bool]) -> Claimed:
        try:
            return Claimed(busy=self._rounds(rounds, substitute, replace))
        except errors.PlacementUnavailable as exc:
            return Claimed(waits=str(exc))
        except errors.Collision as exc:
            return Claimed(failure=str(exc))

    def _rounds(self, rounds: int, substitute: bool,
                replace: Callable[[Row], bool]) -> Sequence[Row]:
        busy: Sequence[Row] = []
        db = self.service.db
        for _round in range(rounds):
            busy = self._claim(self.lease.node_rows())
            if not busy or not substitute:
                return busy
            for row in busy:
                lease_holds.unhold_node(db, row, self.lease.project)
            if [row for row in busy if not replace(row)]:
                return busy
        return busy

    def _claim(self, rows: Sequence[Row]) -> list[Row]:
        """Claim ``rows`` for the lease's consumer in one request; the
        rows Placement refused.

        A node an allocation under the lease already holds keeps its
        allocation's claim; a node without a resource class has no
        inventory, so nothing in Placement can claim it and neither can
        the lease.

        :raises PlacementUnavailable: Placement is away, or refused
            without saying which node is held elsewhere
            (:class:`Undecided`); tried again next run.
        :raises Collision: the lease's uuid is another consumer's.
        """
        service, lease = self.service, self.lease
        service.check_up()
        reservations.ensure_class(service.client, lease.uuid)
        lease.class_was_created()
        # With the placement backend an allocation's consumer holds its
        # node; with the database backend the lease's consumer keeps
        # holding it. A node the project's previous lease still has comes
        # with its hand-over (see hand_over), not now: that lease's
        # consumer holds it.
        others = lease_holds.held_by_others(service.db, lease.id,
                                           lease.project,
                                           [row.node_id for row in rows])
        held = {row.node_uuid: reservations.held_by_lease(
            row.resource_class, row.allocation_id,
            service.claims_allocations)
            for row in rows if row.node_id not in others}
        nodes = {uuid: rc for uuid, rc in held.items() if rc is not None}
        if not nodes:
            return []
        try:
            reservations.claim_lease(
                service.writer, lease.uuid, lease.project,
                service.conf.allocation.default_user, nodes)
            return []
        except errors.Busy as exc:
            # Placement names only the first node it refused: every node
            # is read, so that all the busy ones are substituted at once.
            named = exc.providers | self._held_elsewhere(nodes)
            if not named:
                raise errors.Undecided(
                    reason='it refused the lease\'s claim (%s)' % exc
                ) from exc
            LOG.warning('Lease %(lease)s: Placement refused its claim, '
                        'nodes %(nodes)s are held by other consumers or '
                        'reserved there', {'lease': lease.uuid,
                                           'nodes': ', '.join(sorted(named))})
            return [row for row in rows if row.node_uuid in named]
        except errors.ConsumerTaken as exc:
            raise errors.Collision(
                'The lease could not start: its uuid %s is already a '
                'consumer in Placement, another service\'s. Delete the '
                'lease and book again with another uuid.' % lease.uuid
            ) from exc
        except errors.PlacementRefused as exc:
            # A node's provider missing (not synced yet, or deleted
            # behind ferrum's back: the sync creates it again), or the
            # consumer kept changing: nothing was claimed, the next run
            # tries again.
            raise errors.Undecided(
                reason='it refused the lease\'s claim (%s)' % exc) from exc

    def unheld(self, nodes: Sequence[tuple[int, str]]
               ) -> list[tuple[int, str]]:
        # Placement away: all of them, the claim finds out.
        try:
            return [(node_id, uuid) for node_id, uuid in nodes
                    if not self._held_by_another(uuid)]
        except errors.PlacementUnavailable:
            return list(nodes)

    def _held_elsewhere(self, nodes: Mapping[str, str]) -> set[str]:
        """Nodes another consumer holds, read one by one: only after a
        refusal (Placement names the first node it met)."""
        return {node for node in nodes if self._held_by_another(node)}

    def _held_by_another(self, node: str) -> bool:
        """Whether a consumer other than the lease's holds ``node``."""
        return bool(set(providers.consumers_of(self.service.client, node))
                    - {self.lease.uuid})

    def release_start(self) -> str | None:
        try:
            self.service.check_up()
            reservations.release_all(
                self.service.writer,
                self.service.conf.allocation.default_user,
                [self.lease.uuid])
        except (errors.PlacementUnavailable, errors.PlacementRefused) as exc:
            return str(exc)
        return None

    def end_waits_for(self, rows: Sequence[Row]) -> str | None:
        try:
            if self._release_end(rows):
                LOG.info('Lease %(lease)s: its claims in Placement are '
                         'released', {'lease': self.lease.uuid})
            # Their reservation units are reserved from now on (queued
            # every run: an unchanged provider costs no request, and a
            # conductor that died after the release still gets them
            # pushed).
            self.push(row.node_uuid for row in rows)
        except (errors.PlacementUnavailable, errors.PlacementRefused) as exc:
            return _waits_to_release(exc)
        return None

    def _release_end(self, rows: Sequence[Row]) -> int:
        """Empty the lease's consumer and the consumers of the
        allocations on its nodes (ferrum's only), in one request; how
        many held anything.

        :raises PlacementUnavailable: Placement is away; nothing is
            released.
        """
        service = self.service
        service.check_up()
        held = [row.allocation_id for row in rows
                if row.allocation_id is not None]
        allocations = allocation_obj.uuids_by_id(service.db, held).values()
        return reservations.release_all(
            service.writer, service.conf.allocation.default_user,
            [self.lease.uuid, *sorted(allocations)])

    def push(self, node_uuids: Iterable[str]) -> None:
        outbox.enqueue(self.service.db, node_uuids)


def hand_over(service: Service, leases: Iterable[lease_obj.Lease],
              rows: Sequence[Row]) -> None:
    """Claim for the project's next lease the nodes ending ``leases``
    just handed over to it (``rows``, theirs; the others were given
    back): its start left them to the ending lease's consumer, which the
    end released. A failure is logged; the lease audit reports the
    missing claim and ``--heal`` makes it."""
    placed = {lease.id for lease in leases if lease.placement_class}
    rows = [row for row in rows if row.lease_id in placed]
    if not rows:
        return
    with service.db.reader() as conn:
        holders = lease_holds.placement_holders(
            conn, [row.node_id for row in rows])
    wanted: dict[str, dict[str, str]] = {}
    for row in rows:
        held = holders.get(row.node_id)
        if held is not None and held.running and row.resource_class:
            wanted.setdefault(held.lease_uuid, {})[row.node_uuid] = (
                mapping.resource_class_name(row.resource_class))
    for lease_uuid, nodes in sorted(wanted.items()):
        try:
            reservations.add_nodes(service.writer, lease_uuid,
                                   rows[0].project,
                                   service.conf.allocation.default_user,
                                   nodes)
        except (errors.PlacementUnavailable, errors.PlacementRefused,
                errors.Busy, errors.ConsumerTaken) as exc:
            LOG.warning('Lease %(lease)s: nodes %(nodes)s handed over to '
                        'it are not claimed in Placement (the audit reports '
                        'them): %(error)s', {
                            'lease': lease_uuid, 'error': exc,
                            'nodes': ', '.join(sorted(nodes))})


def create_classes(service: Service) -> None:
    """Create the classes of pending leases booked while Placement was
    away, so that a flavor can name them before the start (which would
    create them otherwise); the API shows ``reservation_class`` from
    then on."""
    waiting = lease_obj.Lease.matching(service.db, [
        _TABLE.c.placement_class.is_(True),
        _TABLE.c.class_created.is_(False),
        _TABLE.c.status == statuses.PENDING], limit=_SWEEP)
    if not waiting:
        return
    made = []
    try:
        service.check_up()
        for lease in waiting:
            # One lease refused must not hold back every later one (the
            # sweep takes the oldest first): it is tried again next time.
            try:
                reservations.ensure_class(service.client, lease.uuid)
            except errors.PlacementRefused as exc:
                LOG.warning('Lease %(lease)s: Placement refused to create '
                            'its class: %(error)s',
                            {'lease': lease.uuid, 'error': exc})
                continue
            made.append(lease.id)
    except errors.PlacementUnavailable as exc:
        LOG.debug('Lease classes wait for Placement: %s', exc)
    finally:
        lease_classes.created(service.db, made)


def delete_classes(service: Service) -> None:
    """Delete the classes of leases that are over, once no inventory uses
    them (their nodes all went back and were pushed)."""
    over = lease_obj.Lease.matching(service.db, [
        _TABLE.c.placement_class.is_(True),
        _TABLE.c.status.in_(sorted(statuses.FINAL))], limit=_SWEEP)
    if not over:
        return
    gone = []
    try:
        service.check_up()
        for lease in over:
            try:
                deleted = reservations.delete_class(service.client,
                                                    lease.uuid)
            except errors.PlacementRefused as exc:
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
    except errors.PlacementUnavailable as exc:
        LOG.debug('Lease classes wait for Placement: %s', exc)
    lease_classes.forget(service.db, gone)
