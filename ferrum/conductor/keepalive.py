# SPDX-License-Identifier: Apache-2.0
"""The heartbeat thread: proves to the other conductors that we are alive.

It runs on its own thread rather than as a periodic task, so that busy
periodic workers can never delay it long enough for this conductor to be
declared dead and taken over.
"""

import logging
import threading

from ferrum.common import exception
from ferrum.conductor import context as context_mod
from ferrum.conductor import outage as outage_mod
from ferrum.objects import conductor as conductor_obj

LOG = logging.getLogger(__name__)
#: Seconds between attempts to reach the database after a failed beat.
_OUTAGE_RETRY_S = 0.5


class Heartbeat:
    def __init__(self, ctx: context_mod.ConductorContext) -> None:
        self.ctx = ctx
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name='ferrum-heartbeat')
        # Held while a beat is written, so that a beat read "online" before
        # go_offline() cannot land after it and bring the conductor back.
        self._lock = threading.Lock()
        self._online = True

    def start(self) -> None:
        self._thread.start()

    def go_offline(self) -> None:
        """Mark the conductor offline now; later beats keep it offline.

        A stopping conductor leaves the hash ring at once, but goes on
        beating while it finishes its work, so that it is not taken for
        dead and its nodes are not failed under it.
        """
        with self._lock:
            self._online = False
            conductor_obj.unregister(self.ctx.db, self.ctx.conductor_id)

    def _loop(self) -> None:
        outage = False
        while not self._stop.wait(self._interval(outage)):
            try:
                with self._lock:
                    conductor_obj.heartbeat(self.ctx.db,
                                            self.ctx.conductor_id,
                                            online=self._online)
            except exception.DatabaseUnavailable as exc:
                if not outage:
                    LOG.warning('Conductor %s cannot write its heartbeat; '
                                'retrying every %ss: %s', self.ctx.host,
                                _OUTAGE_RETRY_S, exc)
                outage = True
                continue
            except Exception:
                LOG.exception('Conductor %s failed to write its heartbeat',
                              self.ctx.host)
                continue
            if outage or self.ctx.inflight.unreleased():
                if outage:
                    LOG.info('Conductor %s reaches the database again',
                             self.ctx.host)
                outage = not outage_mod.recover_quietly(self.ctx)

    def _interval(self, outage: bool) -> float:
        """Beat as usual, but look often while the database is away, so
        that service and the clean-up resume as soon as it is back."""
        interval = float(self.ctx.conf.conductor.heartbeat_interval)
        return min(interval, _OUTAGE_RETRY_S) if outage else interval

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
