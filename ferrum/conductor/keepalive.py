# SPDX-License-Identifier: Apache-2.0
"""The heartbeat thread: proves to the other conductors that we are alive.

It runs on its own thread rather than as a periodic task, so that busy
periodic workers can never delay it long enough for this conductor to be
declared dead and taken over.
"""

import logging
import threading

from ferrum.conductor import context as context_mod
from ferrum.objects import conductor as conductor_obj

LOG = logging.getLogger(__name__)


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
        assert self.ctx.conductor_id is not None
        with self._lock:
            self._online = False
            conductor_obj.unregister(self.ctx.db, self.ctx.conductor_id)

    def _loop(self) -> None:
        assert self.ctx.conductor_id is not None
        while not self._stop.wait(self.ctx.conf.conductor.heartbeat_interval):
            try:
                with self._lock:
                    conductor_obj.heartbeat(self.ctx.db,
                                            self.ctx.conductor_id,
                                            online=self._online)
            except Exception:
                # The database may be briefly away; the next beat retries.
                LOG.exception('Conductor %s failed to write its heartbeat',
                              self.ctx.host)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
