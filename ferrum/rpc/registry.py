# SPDX-License-Identifier: Apache-2.0
"""What the API knows of the conductors: one view, read once and kept.

Every node the API renders needs the live conductors (for its
``conductor`` field), the JSON-RPC transport needs them (and their
addresses) to route calls, and rendering needs the secret keys the
interfaces declare (to mask ``driver_info``). They change only when a
conductor starts, stops or dies, so they are read at most once per
``[DEFAULT] hash_ring_reset_interval`` seconds rather than on every
request. Routing and the ``conductor`` field use the same
:class:`View`, so a node always shows the conductor its calls go to.

A lookup that misses reads again at once: a driver or interface
registered after the last read (a new driver's secrets are never shown,
a new conductor's drivers are accepted as soon as it has registered), or
a conductor the transport could not reach (:meth:`ConductorRegistry.refresh`).
"""

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Mapping

from oslo_config import cfg

from ferrum.common import hash_ring
from ferrum.db import api as db_api
from ferrum.objects import conductor as conductor_obj

Secrets = Mapping[tuple[str, str, str], frozenset[str]]


@dataclasses.dataclass(frozen=True)
class View:
    """The live conductors as read at ``read_at``."""

    read_at: float
    #: hostname -> (conductor group, hardware types).
    conductors: hash_ring.Conductors
    #: hostname -> JSON-RPC address, for the conductors that registered one.
    addresses: Mapping[str, str]


class ConductorRegistry:
    def __init__(self, db: db_api.Database, conf: cfg.ConfigOpts,
                 require_address: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """
        :param require_address: only conductors that registered a JSON-RPC
            address count (the json-rpc transport can reach no other).
        """
        self._db = db
        self._conf = conf
        self._require_address = require_address
        self._clock = clock
        self._lock = threading.Lock()
        self._view: View | None = None
        self._secrets: tuple[float, Secrets] | None = None

    def _fresh(self, read_at: float) -> bool:
        ttl: float = self._conf.hash_ring_reset_interval
        return self._clock() - read_at < ttl

    def refresh(self) -> View:
        """Read the conductors table now and keep what it says."""
        conductors = conductor_obj.alive_drivers(
            self._db, self._conf.conductor.heartbeat_timeout)
        addresses = {c.hostname: c.rpc_address
                     for c in conductor_obj.list_all(self._db)
                     if c.rpc_address and c.hostname in conductors}
        if self._require_address:
            conductors = {host: value for host, value in conductors.items()
                          if host in addresses}
        view = View(self._clock(), conductors, addresses)
        with self._lock:
            self._view = view
        return view

    def view(self, driver: str | None = None) -> View:
        """The current view; with ``driver``, re-read when no one runs it."""
        with self._lock:
            view = self._view
        if (view is not None and self._fresh(view.read_at)
                and (driver is None or any(
                    driver in types
                    for _g, types in view.conductors.values()))):
            return view
        return self.refresh()

    def conductors(self, driver: str | None = None) -> hash_ring.Conductors:
        """hostname -> (group, hardware types) of the live conductors.

        With ``driver``, re-read when no cached conductor has it.
        """
        return self.view(driver).conductors

    def secrets(self, needed: Iterable[tuple[str, str, str]]) -> Secrets:
        """(hardware type, kind, interface) -> declared secret keys.

        Re-read when any of ``needed`` is not known yet.
        """
        wanted = list(needed)
        with self._lock:
            cached = self._secrets
            if (cached is not None and self._fresh(cached[0])
                    and all(key in cached[1] for key in wanted)):
                return cached[1]
        value = conductor_obj.secret_keys(self._db)
        with self._lock:
            self._secrets = (self._clock(), value)
        return value
