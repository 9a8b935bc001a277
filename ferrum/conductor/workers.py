# SPDX-License-Identifier: Apache-2.0
"""The bounded pool of threads that run node operations.

Submitting never queues: when every worker is busy the caller gets
:class:`NoFreeConductorWorker` at once, while it still holds the node lock
and can put the node back as it was. A queue would instead leave nodes in a
transient state for an unbounded time.
"""

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import futurist

from ferrum.common import exception
from ferrum.common import requester

LOG = logging.getLogger(__name__)


class WorkerPool:
    def __init__(self, size: int) -> None:
        self.size = size
        self._slots = threading.BoundedSemaphore(size)
        self._executor = futurist.ThreadPoolExecutor(max_workers=size)
        self._idle = threading.Condition()
        self._running = 0
        self._accepting = True

    def submit(self, func: Callable[..., Any], *args: Any,
               **kwargs: Any) -> None:
        """Run ``func`` on a free worker.

        :raises NoFreeConductorWorker: every worker is busy.
        :raises ConductorShuttingDown: the pool no longer takes work.
        """
        if not self._accepting:
            raise exception.ConductorShuttingDown(host='this conductor')
        if not self._slots.acquire(blocking=False):
            raise exception.NoFreeConductorWorker(size=self.size)
        with self._idle:
            self._running += 1
        # What a request started is done for whoever asked (not a copy of
        # the whole context: in the all-in-one process that would keep the
        # API's finished request alive in the worker).
        asked = requester.current()
        try:
            self._executor.submit(self._run, asked, func, args, kwargs)
        except Exception:
            self._done()
            raise exception.NoFreeConductorWorker(size=self.size) from None

    def _run(self, asked: requester.Requester, func: Callable[..., Any],
             args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            with requester.acting_for(asked.user_id, asked.project_id):
                func(*args, **kwargs)
        except Exception:
            # Flows handle their own errors; this is the last line of defence
            # so a bug never kills a worker thread silently.
            LOG.exception('Unhandled error in conductor worker running %s',
                          getattr(func, '__qualname__', func))
        finally:
            self._done()

    def _done(self) -> None:
        self._slots.release()
        with self._idle:
            self._running -= 1
            self._idle.notify_all()

    @contextlib.contextmanager
    def occupied(self) -> Iterator[int]:
        """Hold every free worker for the duration of the block, as a
        burst of operations would: :meth:`submit` refuses meanwhile. The
        seam for staging a full pool (tests, doc/testing.md).

        :returns: how many workers it held (those already busy stay so).
        """
        held = 0
        while self._slots.acquire(blocking=False):
            held += 1
        try:
            yield held
        finally:
            for _ in range(held):
                self._slots.release()

    @property
    def running(self) -> int:
        return self._running

    def stop_accepting(self) -> None:
        self._accepting = False

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for running work; True when idle."""
        with self._idle:
            return self._idle.wait_for(lambda: self._running == 0, timeout)

    def shutdown(self) -> None:
        self._accepting = False
        self._executor.shutdown(wait=False)
