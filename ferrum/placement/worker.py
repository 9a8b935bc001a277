# SPDX-License-Identifier: Apache-2.0
"""The conductor's Placement sync: a thread draining the change outbox, and
the periodic reconcile.

Draining. The thread claims the queued nodes' head rows (see
:mod:`ferrum.placement.outbox`) and pushes them: what ferrum's records
settle in one batch (no request for an unchanged node, one ``POST
/reshaper`` for the inventory-only changes: see
:meth:`ferrum.placement.sync.Pusher.push_batch`), the rest one node at a
time on a small thread pool; then it deletes the rows it pushed. Rounds
follow each other at once while there is work, so a change waits at most
for the round in progress; the queue is polled every ``[placement]
poll_interval`` seconds only while it is empty: node changes are made in
other processes too (the API), so no in-process signal would see them all.

Consumers. Each round first releases the Placement consumers of deleted
allocations that could not be released at once (the placement allocation
backend, :mod:`ferrum.placement.releases`).

Outages. Placement down, failing or refusing the credentials is one state
of the whole worker, not of each node: the first failure logs one warning
(with the backlog size), gives back the claims so a conductor that does
reach Placement can push them, and the worker then tries again every
``[placement] outage_retry_interval`` seconds; the first success logs
once that Placement is back. Node operations never wait for any of this:
they only wrote outbox rows.

Reconcile. Every ``[placement] sync_interval`` seconds the conductor compares
ferrum's nodes with Placement (:func:`ferrum.placement.audit.drift`, one
listing of the providers plus ferrum's own records) and queues the nodes
that drifted; a node whose provider did not change is not queued, so a
quiet cloud costs no write. With the placement allocation backend it
also claims the missing consumer of an active allocation whose node is
still ``available`` (so not reserved): one made before a switch from the
database backend (:func:`consumer_audit.claim_missing_unreserved`).
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import threading
import time
from collections.abc import Callable

import futurist
from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import metrics
from ferrum.common import plural
from ferrum.conf import placement as placement_conf
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.periodic import decorators
from ferrum.placement import audit
from ferrum.placement import client as client_mod
from ferrum.placement import consumer_audit
from ferrum.placement import errors
from ferrum.placement import outbox
from ferrum.placement import records
from ferrum.placement import service
from ferrum.placement.resources import classes

LOG = logging.getLogger(__name__)
#: A resource class read (and never found) to see whether Placement is back.
PROBE = 'CUSTOM_FERRUM_PROBE'


class Outage:
    """Whether Placement answers, logged and recorded only when it changes."""

    def __init__(self, db: db_api.Database, host: str) -> None:
        self.db = db
        self.host = host
        self.down: str | None = None
        self._lock = threading.Lock()

    def failed(self, exc: Exception) -> bool:
        """Note a failure; True when it starts an outage."""
        state = (records.TOO_OLD if isinstance(exc, errors.PlacementTooOld)
                 else records.UNAVAILABLE)
        with self._lock:
            if self.down is not None:
                return False
            self.down = state
        queued = outbox.backlog(self.db)
        LOG.warning('Placement sync stopped: %(error)s. %(changes)s of '
                    '%(nodes)s queued; node operations go on and the queue '
                    'is pushed once Placement answers.',
                    {'error': exc,
                     'changes': plural.count(queued.size, 'change'),
                     'nodes': plural.count(queued.nodes, 'node is',
                                           'nodes are')})
        records.set_status(self.db, self.host, state, str(exc)[:1000])
        return True

    def succeeded(self) -> None:
        with self._lock:
            if self.down is None:
                return
            self.down = None
        LOG.info('Placement answers again; pushing %s.', plural.count(
            outbox.backlog(self.db).size, 'queued change'))
        records.set_status(self.db, self.host, records.OK, None)


class SyncWorker:
    """Drains the outbox on one conductor (see the module docstring)."""

    def __init__(self, conf: cfg.ConfigOpts, db: db_api.Database, host: str,
                 placement: service.PlacementService,
                 outage: Outage | None = None) -> None:
        """:param placement: the conductor's Placement handle (its client,
            pusher and release queue are the ones drained with).
        :param outage: the outage state to keep, the one the handle was
            given (claims fail fast while this thread finds Placement
            away)."""
        self.conf = conf
        self.db = db
        self.host = host
        self.placement = placement
        self.client = placement.client
        self.pusher = placement.pusher
        self.outage = outage or Outage(db, host)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: futurist.ThreadPoolExecutor | None = None
        #: Pushes by outcome (sync.WRITTEN, ...), for tests and benchmarks.
        self.pushed: dict[str, int] = {}
        #: Called with each pushed head and its outcome, before its rows
        #: are dropped (tests and benchmarks watch the pushes with it).
        self.on_pushed: Callable[[outbox.Head, str], None] | None = None
        self._count_lock = threading.Lock()

    def start(self) -> None:
        given_back = outbox.unclaim(self.db, self.host)
        if given_back:
            LOG.info('Took back %s a previous run of %s had claimed',
                     plural.count(given_back, 'Placement change'), self.host)
        records.set_status(self.db, self.host, records.OK, None)
        self._pool = futurist.ThreadPoolExecutor(
            max_workers=self.conf.placement.push_workers)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='ferrum-placement-sync')
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._pool is not None:
            # Nothing is in flight once the sync thread is joined (a drain
            # waits for its pushes). Not shutdown(wait=True): futurist's
            # idle workers look for the stop once a second, which cost
            # every stop up to a second (as conductor/runner.py says).
            self._pool.shutdown(wait=False)
        outbox.unclaim(self.db, self.host)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                pushed = self.drain_once()
            except errors.PlacementUnavailable:
                # Logged by the outage state; the claims went back.
                self._stop.wait(self.conf.placement.outage_retry_interval)
                continue
            except exception.FerrumException as exc:
                # The database away: one line, and tried again.
                LOG.warning('Placement sync round failed: %s', exc)
                self._stop.wait(self.conf.placement.outage_retry_interval)
                continue
            except Exception:
                LOG.exception('Placement sync round failed')
                self._stop.wait(self.conf.placement.outage_retry_interval)
                continue
            if not pushed:
                self._stop.wait(self.conf.placement.poll_interval)

    def drain_once(self) -> int:
        """Claim and push one batch; returns how many nodes were pushed.

        :raises PlacementUnavailable: after an outage began or goes on.
        """
        if self.outage.down is not None:
            self._probe()
        released = self._release_consumers()
        stale = base.utcnow() - datetime.timedelta(
            seconds=self.conf.conductor.heartbeat_timeout)
        heads = outbox.claim(self.db, self.host, outbox.heads(
            self.db, stale, self.conf.placement.push_batch_size), stale)
        if not heads:
            return released
        started = time.monotonic()
        try:
            results = self._push(heads)
        except Exception:
            # The database away, or a bug: the rest of the batch goes back
            # to the queue now rather than after a heartbeat timeout.
            with contextlib.suppress(Exception):
                outbox.unclaim(self.db, self.host)
            raise
        failures = [r for r in results if isinstance(r, Exception)]
        metrics.PLACEMENT_PUSH_SECONDS.labels(
            'unavailable' if failures else 'done').observe(
                time.monotonic() - started)
        if failures:
            outbox.unclaim(self.db, self.host)
            self.outage.failed(failures[0])
            raise errors.PlacementUnavailable(reason=str(failures[0]))
        self.outage.succeeded()
        return len(heads) + released

    def _release_consumers(self) -> int:
        """Release the queued consumers of deleted allocations (see
        :mod:`ferrum.placement.releases`; none unless the placement
        allocation backend queued some)."""
        try:
            return self.placement.drain(
                self.conf.placement.push_batch_size)
        except errors.PlacementUnavailable as exc:
            self.outage.failed(exc)
            raise

    def _probe(self) -> None:
        """One cheap call while down: ends the outage when it answers."""
        self.client.forget_version()
        # Authenticated, unlike GET /: refused credentials are an outage too.
        classes.exists(self.client, PROBE)
        self.outage.succeeded()

    def _push(self, heads: list[outbox.Head]) -> list[str | Exception]:
        """Push the claimed nodes: what the records settle in one batch
        (:meth:`sync.Pusher.push_batch`), the rest one by one on the pool.
        """
        covered = outbox.queued(self.db, [head.node_uuid for head in heads])
        by_uuid = {head.node_uuid: head for head in heads}
        try:
            outcomes, rest = self.pusher.push_batch(list(by_uuid))
        except errors.PlacementUnavailable as exc:
            return [exc]
        self._finish([(by_uuid[uuid], covered[uuid], outcome)
                      for uuid, outcome in outcomes.items()])
        singles = [(by_uuid[uuid], covered[uuid]) for uuid in rest]
        if self._pool is None or len(singles) <= 1:
            results = [self._push_one(*single) for single in singles]
        else:
            results = list(self._pool.map(
                lambda single: self._push_one(*single), singles))
        return list(outcomes.values()) + results

    def _push_one(self, head: outbox.Head,
                  covered: list[int]) -> str | Exception:
        try:
            outcome = self.pusher.push(head.node_uuid)
        except errors.PlacementUnavailable as exc:
            return exc
        self._finish([(head, covered, outcome)])
        return outcome

    def _finish(self, done: list[tuple[outbox.Head, list[int], str]]
                ) -> None:
        """Count the pushes done and drop the rows they covered."""
        with self._count_lock:
            for _head, _covered, outcome in done:
                self.pushed[outcome] = self.pushed.get(outcome, 0) + 1
        if self.on_pushed is not None:
            for head, _covered, outcome in done:
                self.on_pushed(head, outcome)
        pushed = [(head, covered) for head, covered, _ in done if covered]
        held = outbox.finish(self.db, self.host, pushed)
        for head, _covered in pushed:
            if head.id not in held:
                LOG.warning('Node %s: the Placement push finished after '
                            'this conductor\'s claim was taken over; the '
                            'new holder pushes again', head.node_uuid)


class Reconcile:
    """The periodic reconcile (see the module docstring)."""

    def __init__(self, worker: SyncWorker) -> None:
        self.worker = worker

    @decorators.periodic(spacing=lambda conf: conf.placement.sync_interval,
                         run_immediately=True)
    def reconcile_placement(self, ctx: decorators.Conductor) -> None:
        worker = self.worker
        if worker.outage.down is not None:
            return
        try:
            drifted = audit.drift(worker.pusher, deep=False)
            if worker.pusher.claims_allocations:
                consumer_audit.claim_missing_unreserved(worker.pusher)
        except errors.PlacementUnavailable as exc:
            worker.outage.failed(exc)
            return
        uuids = sorted({d.node_uuid for d in drifted
                        if d.repairable and d.node_uuid is not None})
        if uuids:
            LOG.info('Placement reconcile: %s drifted; queued for a push',
                     plural.count(len(uuids), 'node'))
            records.distrust(worker.db, uuids)
            outbox.enqueue(worker.db, uuids)


def check_config(conf: cfg.ConfigOpts) -> client_mod.PlacementClient | None:
    """The client, or None when sync is off; refuses a bad ``[placement]``.

    Only the configuration is checked: Placement being unreachable or
    refusing the credentials does not stop a conductor, it is reported.

    :raises ConfigInvalid: naming the option that is wrong.
    """
    if not placement_conf.enabled(conf):
        return None
    return client_mod.PlacementClient(conf)


def start(conf: cfg.ConfigOpts, db: db_api.Database, host: str,
          placement: service.PlacementService,
          outage: Outage | None = None) -> SyncWorker:
    """Start draining the queued node changes with the conductor's
    Placement handle (see :class:`SyncWorker`)."""
    worker = SyncWorker(conf, db, host, placement, outage)
    worker.start()
    return worker
