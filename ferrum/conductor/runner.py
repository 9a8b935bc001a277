# SPDX-License-Identifier: Apache-2.0
"""Node work offered to tasks and drivers: start, resume, fail, visit.

The conductor's context holds a :class:`Runner` (see
:class:`ferrum.conductor.context.Runner`), so that a driver reaches these
through ``task.start()``, ``task.resume()``, ``task.fail()`` and
``ctx.each_node()`` without importing the conductor.
"""

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent import futures
from typing import Any

import futurist

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import cleaning
from ferrum.conductor import context as context_mod
from ferrum.conductor import deployments
from ferrum.conductor import inspection
from ferrum.conductor import ownership
from ferrum.conductor import provisioning
from ferrum.conductor import task_manager
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)

#: The wait states a driver ends with ``task.resume()``, and what follows.
_RESUMES: dict[str, Callable[[task_manager.Task], None]] = {
    states.DEPLOYWAIT: deployments.continue_deploy,
    states.CLEANWAIT: cleaning.continue_cleaning,
    states.INSPECTWAIT: inspection.continue_inspection,
}
#: The wait states whose failure runs a flow's clean-up on a worker; a
#: failed ``inspect wait`` only changes state.
_FAILS: dict[str, Callable[[task_manager.Task, str], None]] = {
    states.DEPLOYWAIT: deployments.fail_deploy,
    states.CLEANWAIT: cleaning.fail_cleaning,
}
_ROW = ('id', 'uuid', 'driver', 'provision_state', 'maintenance')


class Runner:
    """See :class:`ferrum.conductor.context.Runner`."""

    def start(self, task: task_manager.Task, verb: str,
              args: Mapping[str, Any] | None) -> None:
        provisioning.start(task, verb, dict(args or {}))

    def resume(self, task: task_manager.Task) -> None:
        then = _RESUMES.get(task.node.provision_state)
        if then is None:
            raise exception.InvalidStateRequested(
                action='resume', node=task.node.uuid,
                state=task.node.provision_state)
        task.process_event('resume')
        task.spawn_after(then, task)

    def fail(self, task: task_manager.Task, error: str) -> None:
        state = task.node.provision_state
        if state not in _RESUMES:
            raise exception.InvalidStateRequested(
                action='fail', node=task.node.uuid, state=state)
        then = _FAILS.get(state)
        if then is None:
            task.process_event('fail', last_error=error)
        else:
            task.spawn_after(then, task, error)

    def each_node(self, ctx: context_mod.ConductorContext, purpose: str,
                  func: Callable[[Any], None], *, columns: Iterable[str],
                  filters: Mapping[str, Any] | None,
                  predicate: Callable[[Any], bool] | None,
                  limit: int | None, shared: bool, workers: int) -> int:
        rows = [row for row in ownership.node_rows(
                    ctx, _ROW + tuple(columns), filters)
                if predicate is None or predicate(row)]
        visit = _Visit(ctx, purpose, func, shared)
        if workers <= 1 or len(rows) <= 1:
            for row in rows:
                if limit is not None and visit.done >= limit:
                    break
                if not visit(row):
                    break
        else:
            rows = rows if limit is None else rows[:limit]
            # Nodes are independent and mostly wait on their BMC: visit
            # them in parallel, on a pool of this run's own.
            pool = futurist.ThreadPoolExecutor(
                max_workers=min(workers, len(rows)))
            try:
                futures.wait([pool.submit(visit, row) for row in rows])
            finally:
                # Not shutdown(wait=True): futurist's idle workers look for
                # the stop only once a second, which cost every run up to
                # a second after its last node (half of a 200-node
                # Redfish sync, doc/performance/power-sync.md, issue 30).
                # They stop on their own.
                pool.shutdown(wait=False)
        if visit.error is not None:
            raise visit.error
        return visit.done


class _Visit:
    """One node of an ``each_node`` run, under the one error policy."""

    def __init__(self, ctx: context_mod.ConductorContext, purpose: str,
                 func: Callable[[Any], None], shared: bool) -> None:
        self.ctx = ctx
        self.purpose = purpose
        self.func = func
        self.shared = shared
        self.done = 0
        self.stopped = False
        self._lock = threading.Lock()  # visits may run on several threads
        self.error: exception.DatabaseUnavailable | None = None

    def __call__(self, row: Any) -> bool:
        """Visit ``row``'s node; False once the run is to end."""
        if self.stopped:
            return False
        try:
            with task_manager.acquire(self.ctx, row.id, purpose=self.purpose,
                                      shared=self.shared,
                                      retry=False) as task:
                self.func(task)
        except (exception.NodeLocked, exception.NodeNotFound):
            return True  # busy or gone: the next run looks again
        except (decorators.Stop, exception.NoFreeConductorWorker) as exc:
            if isinstance(exc, exception.NoFreeConductorWorker):
                LOG.info('%s: no free worker; the rest waits for the next '
                         'run', self.purpose)
            self.stopped = True
            return False
        except exception.DatabaseUnavailable as exc:
            # Every other node would fail the same way: end the run and let
            # the periodic worker log it once.
            self.error, self.stopped = exc, True
            return False
        except exception.FerrumException as exc:
            LOG.warning('Node %(node)s: %(purpose)s failed: %(error)s',
                        {'node': row.uuid, 'purpose': self.purpose,
                         'error': exc})
            return True
        except Exception:
            LOG.exception('Node %(node)s: %(purpose)s failed unexpectedly',
                          {'node': row.uuid, 'purpose': self.purpose})
            return True
        with self._lock:
            self.done += 1
        return True
