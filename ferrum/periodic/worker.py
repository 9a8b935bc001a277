# SPDX-License-Identifier: Apache-2.0
"""Collects marked periodic methods and runs them on a futurist worker.

One collector gathers the periodic methods of the conductor's own objects
and of every loaded driver interface. It de-duplicates by class, so an
interface class loaded under two entry-point names runs its periodics once.
Spacing is read here, when the worker is built.
"""

import logging
import threading
import time
import types
from collections.abc import Callable, Iterable
from concurrent import futures
from typing import Any

import futurist
from futurist import periodics

from ferrum.common import exception
from ferrum.common import metrics
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)


def collect(objects: Iterable[object]) -> list[tuple[object, str,
                                                     decorators.PeriodicSpec]]:
    """``(object, method name, spec)`` of every marked method, once a
    class."""
    seen: set[type] = set()
    found = []
    for obj in objects:
        cls = type(obj)
        if cls in seen:
            continue
        seen.add(cls)
        for name in sorted(dir(cls)):
            spec = getattr(getattr(cls, name, None), decorators.MARK, None)
            if isinstance(spec, decorators.PeriodicSpec):
                found.append((obj, name, spec))
    return found


def _callable_for(obj: object, name: str, ctx: decorators.Conductor,
                  spacing: float, run_immediately: bool
                  ) -> Callable[[], None]:
    method = getattr(obj, name)
    task = '%s.%s' % (type(obj).__name__, name)
    duration = metrics.PERIODIC_SECONDS.labels(task)
    failures = metrics.PERIODIC_FAILURES.labels(task)

    @periodics.periodic(spacing=spacing, run_immediately=run_immediately)
    def run() -> None:
        started = time.monotonic()
        try:
            method(ctx)
        except BaseException:
            failures.inc()
            raise
        finally:
            duration.observe(time.monotonic() - started)

    run.__name__ = task
    run.__qualname__ = run.__name__
    return run


def build_worker(ctx: decorators.Conductor,
                 objects: Iterable[object],
                 now_func: Callable[[], float] | None = None,
                 cond_cls: type[threading.Condition] | None = None,
                 executor: Callable[[], futures.Executor] | None = None
                 ) -> periodics.PeriodicWorker:
    """A futurist ``PeriodicWorker`` over the enabled periodic tasks.

    ``now_func`` and ``cond_cls`` let tests drive time without sleeping;
    ``executor`` (a factory) replaces the pool of ``[conductor]
    periodic_max_workers`` threads, e.g. with futurist's
    ``SynchronousExecutor`` for a test whose clock only moves while the
    worker waits.
    """
    callables: list[tuple[Callable[..., Any], tuple[Any, ...],
                          dict[str, Any]]] = []
    for obj, name, spec in collect(objects):
        spacing = float(spec.spacing(ctx.conf))
        if spacing <= 0:
            LOG.info('Periodic task %s.%s is disabled (interval 0)',
                     type(obj).__name__, name)
            continue
        callables.append((_callable_for(obj, name, ctx, spacing,
                                        spec.run_immediately), (), {}))
        LOG.debug('Periodic task %s.%s every %.1fs',
                  type(obj).__name__, name, spacing)
    max_workers = ctx.conf.conductor.periodic_max_workers
    kwargs: dict[str, Any] = {}
    if now_func is not None:
        kwargs['now_func'] = now_func
    if cond_cls is not None:
        kwargs['cond_cls'] = cond_cls
    return periodics.PeriodicWorker(
        callables,
        executor_factory=executor or (lambda: futurist.ThreadPoolExecutor(
            max_workers=max_workers)),
        on_failure=_log_failure, **kwargs)


def _log_failure(callback: Callable[..., Any], kind: str, spacing: float,
                 exc_info: tuple[type[BaseException], BaseException,
                                 types.TracebackType | None],
                 traceback: str | None = None) -> None:
    """futurist's ``on_failure``: ``(cb, kind, spacing, exc_info,
    traceback=...)`` (futurist 3.x; see ``PeriodicWorker.__init__``)."""
    name = getattr(callback, '__name__', callback)
    _kind, value, frames = exc_info
    if isinstance(value, exception.FerrumException):
        # An expected failure (the database or an appliance is away, a
        # login is refused) says what is wrong in its message: one line,
        # not a traceback per task per run. Anything else is a bug.
        LOG.warning('Periodic task %s failed this run: %s', name, value)
        return
    if frames is None and traceback:
        # An out-of-process executor sends the traceback as text only.
        LOG.error('Periodic task %s failed; it runs again in %.1fs:\n%s',
                  name, spacing, traceback)
        return
    LOG.error('Periodic task %s failed; it runs again in %.1fs',
              name, spacing, exc_info=exc_info)
