# SPDX-License-Identifier: Apache-2.0
"""What every conductor-side operation needs, bundled once per conductor."""

import dataclasses
import datetime
from collections.abc import Callable

from oslo_config import cfg

from ferrum.conductor import inflight as inflight_mod
from ferrum.conductor import workers
from ferrum.db import api as db_api
from ferrum.drivers import loader
from ferrum.objects import base


@dataclasses.dataclass
class ConductorContext:
    """The conductor's shared resources.

    :ivar conf: the conductor's configuration (read options at call time).
    :ivar db: the database of this process.
    :ivar host: the conductor's name, written into node reservations.
    :ivar conductor_id: the conductors-table id, set once registered.
    :ivar drivers: the loaded hardware types and interfaces.
    :ivar workers: the bounded pool node operations run on.
    :ivar clock: returns "now" as naive UTC; tests inject their own.
    :ivar inflight: the locks and allocations live threads work on.
    """

    conf: cfg.ConfigOpts
    db: db_api.Database
    host: str
    drivers: loader.DriverRegistry
    workers: workers.WorkerPool
    conductor_id: int | None = None
    clock: Callable[[], datetime.datetime] = base.utcnow
    inflight: inflight_mod.InFlight = dataclasses.field(
        default_factory=inflight_mod.InFlight)
