# SPDX-License-Identifier: Apache-2.0
"""What the API knows of the conductors, read once and kept briefly.

Every node the API renders needs the live conductors (for its
``conductor`` field) and the secret keys its interfaces declare (to mask
``driver_info``). Both change only when a conductor starts, stops or dies,
so they are read at most once per ``ttl`` seconds rather than on every
request. A lookup that misses (a driver or interface registered after the
last read) reads again at once: a new driver's secrets are never shown,
and a new conductor's drivers are accepted as soon as it has registered.
"""

import threading
import time
from collections.abc import Callable, Iterable, Mapping

from ferrum.db import api as db_api
from ferrum.objects import conductor as conductor_obj

Conductors = Mapping[str, tuple[str, frozenset[str]]]
Secrets = Mapping[tuple[str, str, str], frozenset[str]]


class ConductorRegistry:
    def __init__(self, db: db_api.Database, heartbeat_timeout: Callable[[], int],
                 ttl: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._db = db
        self._heartbeat_timeout = heartbeat_timeout
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._conductors: tuple[float, Conductors] | None = None
        self._secrets: tuple[float, Secrets] | None = None

    def conductors(self, driver: str | None = None) -> Conductors:
        """hostname -> (group, hardware types) of the live conductors.

        With ``driver``, re-read when no cached conductor has it.
        """
        with self._lock:
            cached = self._conductors
            if (cached is not None and self._clock() - cached[0] < self._ttl
                    and (driver is None or any(
                        driver in types for _g, types in cached[1].values()))):
                return cached[1]
        value = conductor_obj.alive_drivers(self._db,
                                            self._heartbeat_timeout())
        with self._lock:
            self._conductors = (self._clock(), value)
        return value

    def secrets(self, needed: Iterable[tuple[str, str, str]]) -> Secrets:
        """(hardware type, kind, interface) -> declared secret keys.

        Re-read when any of ``needed`` is not known yet.
        """
        wanted = list(needed)
        with self._lock:
            cached = self._secrets
            if (cached is not None and self._clock() - cached[0] < self._ttl
                    and all(key in cached[1] for key in wanted)):
                return cached[1]
        value = conductor_obj.secret_keys(self._db)
        with self._lock:
            self._secrets = (self._clock(), value)
        return value
