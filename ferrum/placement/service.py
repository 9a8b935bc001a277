# SPDX-License-Identifier: Apache-2.0
"""The conductor's Placement handle: one per conductor, ``ctx.placement``.

It holds the one client, the pusher (:mod:`ferrum.placement.sync`) and
the sync thread's outage state, and releases the consumers queued in
``placement_releases`` (:mod:`ferrum.placement.releases`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

from oslo_config import cfg

from ferrum.db import api as db_api
from ferrum.objects import allocation_consumers
from ferrum.placement import claims
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import releases
from ferrum.placement import sync

LOG = logging.getLogger(__name__)


class OutageState(Protocol):
    """The conductor's sync thread's view of Placement
    (:class:`ferrum.placement.worker.Outage`)."""

    down: str | None

    def failed(self, exc: Exception) -> bool: ...


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
