# SPDX-License-Identifier: Apache-2.0
"""The conductor's Placement handle: one per conductor, ``ctx.placement``,
chosen once at start-up and never None.

- :class:`PlacementService`, with ``[placement]``: it holds the one
  client, the pusher (:mod:`ferrum.placement.sync`) and the sync thread's
  outage state, releases the consumers queued in ``placement_releases``
  (:mod:`ferrum.placement.releases`), and gives each lease its steps
  (:mod:`ferrum.placement.leases`).
- :class:`Off`, without: the same lease surface, doing nothing (as
  Ironic's ``no-bios`` interface), so that no caller asks whether
  Placement is on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Protocol

from oslo_config import cfg

from ferrum.db import api as db_api
from ferrum.objects import lease as lease_obj
from ferrum.objects.allocation import consumers as allocation_consumers
from ferrum.objects.lease import nodes as lease_nodes
from ferrum.placement import claims
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import leases
from ferrum.placement import releases
from ferrum.placement import sync

LOG = logging.getLogger(__name__)


class OutageState(Protocol):
    """The conductor's sync thread's view of Placement
    (:class:`ferrum.placement.worker.Outage`)."""

    down: str | None

    def failed(self, exc: Exception) -> bool: ...


class Handle(Protocol):
    """What the lease engine asks of ``ctx.placement``, on or off."""

    def leases_for(self, lease: lease_obj.Lease) -> leases.Steps:
        """The lease's steps in Placement (:mod:`ferrum.placement.leases`):
        nothing to do for a lease without a class."""

    def hand_over(self, ended: Sequence[lease_obj.Lease],
                  rows: Sequence[lease_nodes.LeaseNodeRow]) -> None:
        """Claim for the project's next lease the nodes the ``ended``
        leases handed over to it (:func:`leases.hand_over`)."""

    def create_classes(self) -> None:
        """Create the classes of pending leases booked while Placement
        was away (:func:`leases.create_classes`)."""

    def delete_classes(self) -> None:
        """Delete the classes of leases that are over
        (:func:`leases.delete_classes`)."""


class Off:
    """``ctx.placement`` without ``[placement]``: nothing is in Placement.

    A lease created while another conductor had ``[placement]`` still
    has a class; its steps wait (:class:`leases.Unconfigured`) rather
    than act on half of it.
    """

    claims_allocations = False

    def leases_for(self, lease: lease_obj.Lease) -> leases.Steps:
        return (leases.Unconfigured(lease) if lease.placement_class
                else leases.NONE)

    def hand_over(self, ended: Sequence[lease_obj.Lease],
                  rows: Sequence[lease_nodes.LeaseNodeRow]) -> None:
        pass  # no lease's consumer holds anything

    def create_classes(self) -> None:
        pass  # a class waits for a conductor with [placement]

    def delete_classes(self) -> None:
        pass


class PlacementService:
    """The conductor's Placement handle (``ctx.placement``), thread-safe:
    the client, the pusher, the sync thread's outage state, and the
    release of queued consumers.

    :ivar client: the Placement client, also the allocation backend's.
    :ivar claims_allocations: whether allocations are claimed in
        Placement too (``[allocation] backend = placement``).
    :ivar writer: the one writer of consumers (the pusher's), which keeps
        the recorded provider generations true.
    :ivar outage: the sync thread's outage state. While it
        says Placement is away, nothing here waits for Placement's
        timeout: claims fail at once (:meth:`check_up`), releases stay
        queued for the sync thread, which probes Placement every
        ``[placement] outage_retry_interval`` seconds.
    """

    def __init__(self, conf: cfg.ConfigOpts, db: db_api.Database,
                 client: client_mod.PlacementClient,
                 pusher: sync.Pusher | None = None, *,
                 outage: OutageState | None = None,
                 claims_allocations: bool | None = None) -> None:
        """:param claims_allocations: whether allocations are consumers
            (``[allocation] backend = placement``), for a pusher made here
            (see :class:`sync.Pusher`); None reads the option."""
        self.conf = conf
        self.db = db
        self.client = client
        self.pusher = pusher or sync.Pusher(
            conf, db, client, claims_allocations=claims_allocations)
        self.claims_allocations = self.pusher.claims_allocations
        self.writer = self.pusher.writer
        self.outage = outage

    def check_up(self) -> None:
        """Fail fast while the sync thread finds Placement away.

        :raises PlacementUnavailable: it is away.
        """
        outage = self.outage
        if outage is not None and outage.down is not None:
            raise errors.PlacementUnavailable(reason=(
                'this conductor\'s Placement sync thread found it %s and '
                'tries again every [placement] outage_retry_interval '
                'seconds' % outage.down))

    def leases_for(self, lease: lease_obj.Lease) -> leases.Steps:
        return (leases.InPlacement(self, lease) if lease.placement_class
                else leases.NONE)

    def hand_over(self, ended: Sequence[lease_obj.Lease],
                  rows: Sequence[lease_nodes.LeaseNodeRow]) -> None:
        leases.hand_over(self, ended, rows)

    def create_classes(self) -> None:
        leases.create_classes(self)

    def delete_classes(self) -> None:
        leases.delete_classes(self)

    def failed(self, exc: Exception) -> None:
        """Tell the sync thread Placement is away (later claims then fail
        at once, until its probe finds Placement back)."""
        if self.outage is not None:
            self.outage.failed(exc)

    def _live(self, consumer_uuids: list[str]) -> set[str]:
        return allocation_consumers.live_uuids(self.db, consumer_uuids)

    def _release(self, queued: dict[str, releases.Queued]) -> None:
        """Release the queued consumers, each after pushing its node.

        :raises PlacementUnavailable: the rows not yet done stay queued.
        """
        if not queued:
            return
        live = self._live(sorted(queued))
        for consumer, entry in queued.items():
            if consumer not in live:
                for node_uuid in sorted(entry.node_uuids):
                    # Reserved first (a node still cleaning), then free.
                    self.pusher.push(node_uuid, delete=False)
                try:
                    claims.release(self.pusher, consumer)
                except errors.PlacementRefused as exc:
                    # Trying again would meet the same refusal each round;
                    # the audit reports the consumer (consumer-orphan).
                    LOG.warning('Placement consumer %(consumer)s: release '
                                'refused, left to the audit: %(error)s',
                                {'consumer': consumer, 'error': exc})
            releases.done(self.db, entry.ids)

    def release_now(self, consumer_uuids: Iterable[str]) -> bool:
        """Release consumers just recorded, once their transaction
        committed.

        Returns False when Placement could not be reached: the rows stay
        for the sync worker, and the caller's operation still succeeded.
        """
        wanted = sorted({u for u in consumer_uuids if u})
        if not wanted:
            return True
        try:
            self.check_up()
            self._release(releases.queued(self.db, wanted, 100))
        except errors.PlacementUnavailable as exc:
            LOG.warning('Placement consumers %(consumers)s: release queued '
                        'while Placement is away: %(error)s',
                        {'consumers': ', '.join(wanted), 'error': exc})
            return False
        return True

    def drain(self, limit: int = 100) -> int:
        """Release the oldest queued consumers; how many were handled.

        Several conductors may drain at once: releasing a consumer twice
        is harmless (the second DELETE finds nothing).

        :raises PlacementUnavailable: Placement is away; the rest stay
            queued.
        """
        queued = releases.queued(self.db, None, limit)
        self._release(queued)
        return len(queued)
