# SPDX-License-Identifier: Apache-2.0
"""The conductor service: start-up, steady state and graceful stop.

Start-up, in order: bind the metrics endpoint when ``[metrics] port`` is
set (:mod:`ferrum.conductor.metrics_endpoint`; a port in use stops
start-up before anything else), open the database and check its schema,
load and validate every enabled driver (refusing to start on any problem),
register in the conductors table, fail and unlock the nodes a previous run
of this host left locked, then start the heartbeat, resume the allocations
a previous run left "allocating", start the Placement sync when
``[placement]`` is configured (its configuration is checked with the
drivers', before anything else: ``[allocation] backend = placement``
without it stops start-up), and start the periodic tasks. Only
then is the service ready (and systemd told so, by the command).

Stop (SIGTERM) hands the nodes over without failing them: the conductor
marks itself offline first, so it leaves the hash ring at once and the API
and the other conductors route its nodes elsewhere from their next read of
the conductors table; its JSON-RPC endpoint answers "not serving", which
makes the API re-read at once and call the new owner. It takes no new
work and stops its periodic tasks, lets running work finish within
``[conductor]graceful_shutdown_timeout``, and only fails and unlocks what
is still running after that. Its heartbeat goes on (offline) until then,
so that nobody takes it for dead and fails the nodes it is finishing. The
new owners take its active nodes over (:mod:`ferrum.conductor.takeover`).
The metrics endpoint stops last.
"""

import datetime
import logging
import threading
import time
from collections.abc import Callable, Sequence

from futurist import periodics
from oslo_config import cfg

from ferrum.allocation import backends
from ferrum.allocation import takeover
from ferrum.common import plural
from ferrum.conductor import context as context_mod
from ferrum.conductor import driver_calls
from ferrum.conductor import history
from ferrum.conductor import keepalive
from ferrum.conductor import manager
from ferrum.conductor import metrics_endpoint
from ferrum.conductor import ownership
from ferrum.conductor import power
from ferrum.conductor import recovery
from ferrum.conductor import runner
from ferrum.conductor import takeover as node_takeover
from ferrum.conductor import timeouts
from ferrum.conductor import workers
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.drivers import loader
from ferrum.objects import base
from ferrum.objects import conductor as conductor_obj
from ferrum.periodic import worker as periodic_worker
from ferrum.placement import service
from ferrum.placement import worker as placement_sync

LOG = logging.getLogger(__name__)


class ConductorService:
    def __init__(self, conf: cfg.ConfigOpts,
                 clock: Callable[[], datetime.datetime] = base.utcnow,
                 db: db_api.Database | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 extra_periodics: Sequence[object] = ()) -> None:
        """:param extra_periodics: more objects with periodic tasks, from the
            layers above the conductor (the lease engine)."""
        self.conf = conf
        self._extra_periodics = list(extra_periodics)
        self._clock = clock
        self._sleep = sleep
        self._db = db
        self.ctx: context_mod.ConductorContext | None = None
        self.manager: manager.ConductorManager | None = None
        self._heartbeat: keepalive.Heartbeat | None = None
        self._periodic: periodics.PeriodicWorker | None = None
        self._periodic_thread: threading.Thread | None = None
        self.power_sync = power.PowerSync()
        self.history_cleanup = history.HistoryCleanup()
        self.placement: placement_sync.SyncWorker | None = None
        self.metrics = metrics_endpoint.MetricsEndpoint(conf)

    def start(self, start_periodics: bool = True,
              rpc_address: str | None = None) -> manager.ConductorManager:
        """Start (see the module docstring).

        :param rpc_address: the URL of this conductor's JSON-RPC endpoint,
            registered for the API to call; None on the local transport.
        """
        # First: a port in use stops start-up before anything registers.
        self.metrics.start()
        try:
            return self._start(start_periodics, rpc_address)
        except BaseException:
            self.metrics.stop()
            raise

    def _start(self, start_periodics: bool, rpc_address: str | None
               ) -> manager.ConductorManager:
        db = self._db or db_api.Database(self.conf)
        migration.require_current(db.engine)
        db.history_host = self.conf.host
        drivers = loader.DriverRegistry(self.conf)
        drivers.check_configuration(self.conf)
        driver_calls.instrument(drivers)
        client = placement_sync.check_config(self.conf)
        allocations = backends.choose(self.conf)
        placement: service.PlacementService | None = None
        outage: placement_sync.Outage | None = None
        if client is not None:
            # One outage state, the sync thread's: while it finds
            # Placement away, claims and releases fail fast rather than
            # wait for its timeout.
            outage = placement_sync.Outage(db, self.conf.host)
            placement = service.PlacementService(
                self.conf, db, client, outage=outage,
                claims_allocations=allocations.in_placement)
        me = conductor_obj.register(
            db, self.conf.host, ownership.group_of(self.conf),
            self.conf.conductor.heartbeat_timeout, rpc_address=rpc_address)
        ctx = context_mod.ConductorContext(
            conf=self.conf, db=db, host=self.conf.host, conductor_id=me.id,
            drivers=drivers, runner=runner.Runner(),
            workers=workers.WorkerPool(self.conf.conductor.workers_pool_size),
            allocations=allocations, clock=self._clock, sleep=self._sleep,
            placement=service.Off() if placement is None else placement)
        conductor_obj.set_hardware_interfaces(db, me.id, drivers.advertised())
        cleared = recovery.fail_and_release(db, ctx.host, 'restarted')
        if cleared:
            LOG.warning('Cleared %s of a previous run of %s',
                        plural.count(cleared, 'stale node lock'), ctx.host)
        self.ctx = ctx
        serving = self.manager = manager.ConductorManager(ctx)
        self._heartbeat = keepalive.Heartbeat(ctx)
        self._heartbeat.start()
        takeover.resume_own(ctx)
        if placement is not None:
            self.placement = placement_sync.start(
                self.conf, db, ctx.host, placement, outage)
        if start_periodics:
            self.start_periodics()
        LOG.info('Conductor %s started with hardware types %s',
                 ctx.host, ', '.join(sorted(drivers.hardware_types)))
        return serving

    def _running(self) -> context_mod.ConductorContext:
        if self.ctx is None:
            raise RuntimeError('The conductor is not running: start() it '
                               'first.')
        return self.ctx

    def periodic_objects(self) -> list[object]:
        objects: list[object] = [self.power_sync, self.history_cleanup,
                                 timeouts.ProvisionTimeouts(),
                                 recovery.DeadConductors(),
                                 takeover.AllocationTakeover(),
                                 node_takeover.NodeTakeover(),
                                 *self._extra_periodics]
        if self.placement is not None:
            objects.append(placement_sync.Reconcile(self.placement))
        return objects + list(
            self._running().drivers.all_interface_objects())

    def start_periodics(self) -> None:
        self._periodic = periodic_worker.build_worker(
            self._running(), self.periodic_objects())
        self._periodic_thread = threading.Thread(
            target=self._periodic.start, daemon=True,
            name='ferrum-periodic')
        self._periodic_thread.start()

    def stop(self) -> None:
        """Stop gracefully (see the module docstring). Safe to call twice."""
        ctx = self.ctx
        if ctx is None:
            return
        self.ctx = None
        self.manager = None  # the JSON-RPC endpoint now answers "not serving"
        if self._heartbeat is not None:
            self._heartbeat.go_offline()
        else:
            conductor_obj.unregister(ctx.db, ctx.conductor_id)
        ctx.workers.stop_accepting()
        if self._periodic is not None:
            self._periodic.stop()
            self._periodic.wait()
        timeout = self.conf.conductor.graceful_shutdown_timeout
        if not ctx.workers.wait_idle(timeout):
            LOG.warning('%s still running after %ds; failing their nodes',
                        plural.count(ctx.workers.running, 'operation'),
                        timeout)
        recovery.fail_and_release(ctx.db, ctx.host, 'stopped')
        if self.placement is not None:
            self.placement.stop()
        if self._heartbeat is not None:
            self._heartbeat.stop()
        ctx.workers.shutdown()
        for interface in ctx.drivers.all_interface_objects():
            try:
                interface.shutdown()
            except Exception:
                LOG.exception('Stopping the %s interface %s failed',
                              interface.kind, type(interface).__name__)
        self.metrics.stop()
        LOG.info('Conductor %s stopped', ctx.host)
