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

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        assert self.ctx.conductor_id is not None
        while not self._stop.wait(self.ctx.conf.conductor.heartbeat_interval):
            try:
                conductor_obj.heartbeat(self.ctx.db, self.ctx.conductor_id)
            except Exception:
                # The database may be briefly away; the next beat retries.
                LOG.exception('Conductor %s failed to write its heartbeat',
                              self.ctx.host)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
