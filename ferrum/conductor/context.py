# SPDX-License-Identifier: Apache-2.0
"""What every conductor-side operation needs, bundled once per conductor."""

import dataclasses
import datetime
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from oslo_config import cfg

from ferrum.conductor import inflight as inflight_mod
from ferrum.conductor import workers
from ferrum.db import api as db_api
from ferrum.drivers import loader
from ferrum.objects import base
from ferrum.placement import service


class Runner(Protocol):
    """The node work a context offers to tasks and drivers.

    Implemented by :class:`ferrum.conductor.runner.Runner`. The context
    holds it (rather than importing it) because the flows behind it import
    the task manager, which imports this module.
    """

    def start(self, task: Any, verb: str,
              args: Mapping[str, Any] | None) -> None:
        """Start a provision verb on a locked node."""

    def resume(self, task: Any) -> None:
        """End the locked node's wait and continue its flow."""

    def each_node(self, ctx: 'ConductorContext', purpose: str,
                  func: Callable[[Any], None], *, columns: Iterable[str],
                  filters: Mapping[str, Any] | None,
                  predicate: Callable[[Any], bool] | None,
                  limit: int | None, shared: bool, workers: int) -> int:
        """Visit this conductor's nodes (see ``ConductorContext``)."""


@dataclasses.dataclass(frozen=True)
class ConductorContext:
    """The conductor's shared resources. Built once, after registration.

    :ivar conf: the conductor's configuration (read options at call time).
    :ivar db: the database of this process.
    :ivar host: the conductor's name, written into node reservations.
    :ivar conductor_id: the conductors-table id of this conductor.
    :ivar drivers: the loaded hardware types and interfaces.
    :ivar workers: the bounded pool node operations run on.
    :ivar runner: starts, resumes and iterates node work.
    :ivar clock: returns "now" as naive UTC; tests inject their own.
    :ivar sleep: waits so many seconds; tests inject their own.
    :ivar inflight: the locks and allocations live threads work on.
    :ivar placement: with ``[allocation] backend = placement``, the
        Placement client and consumer releases allocations go through;
        None with the database backend.
    :ivar inventory: whenever ``[placement]`` is configured, the same
        (it is ``placement`` with the placement backend): what the lease
        engine puts leases in Placement with.
    """

    conf: cfg.ConfigOpts
    db: db_api.Database
    host: str
    conductor_id: int
    drivers: loader.DriverRegistry
    workers: workers.WorkerPool
    runner: Runner
    clock: Callable[[], datetime.datetime] = base.utcnow
    sleep: Callable[[float], None] = time.sleep
    inflight: inflight_mod.InFlight = dataclasses.field(
        default_factory=inflight_mod.InFlight)
    placement: service.PlacementService | None = None
    inventory: service.PlacementService | None = None

    def each_node(self, purpose: str, func: Callable[[Any], None], *,
                  columns: Iterable[str] = (),
                  filters: Mapping[str, Any] | None = None,
                  predicate: Callable[[Any], bool] | None = None,
                  limit: int | None = None, shared: bool = True,
                  workers: int = 1) -> int:
        """See :meth:`ferrum.periodic.decorators.Conductor.each_node`."""
        return self.runner.each_node(
            self, purpose, func, columns=columns, filters=filters,
            predicate=predicate, limit=limit, shared=shared, workers=workers)
