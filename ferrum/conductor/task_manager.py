# SPDX-License-Identifier: Apache-2.0
"""A *task* is one piece of conductor work on one node, under its lock.

Every operation on a node runs inside ``with acquire(ctx, node, purpose)``.
Entering the block loads the node and its driver; with ``shared=False``
(the default) it first takes the node's *exclusive lock*, which is the
conditional UPDATE of :meth:`ferrum.objects.node.Node.reserve`: the database
decides, so conductors sharing it never both hold a node. A *shared* task
takes no lock and must only read.

Leaving the block releases the lock, always: on success the node's pending
changes are written in the same UPDATE that clears ``reservation``; when the
block raises, pending changes are dropped and only the lock is cleared.

Long work does not run inside the block. The block fires a state-machine
event and hands the rest to a worker thread with :meth:`Task.spawn_after`;
the lock then passes to that thread, which releases it when done. When no
worker is free the event is undone, the lock released and
:class:`~ferrum.common.exception.NoFreeConductorWorker` raised, so the node
is never left in a transient state that nobody works on::

    with task_manager.acquire(ctx, node_id, purpose='node deployment') as task:
        task.process_event('deploy')
        task.spawn_after(deployments.do_deploy, task)
    task.wait_for_worker(ctx.conf.conductor.action_wait_timeout)

The last line is for API requests: most work on fake or fast hardware ends
within milliseconds, and waiting briefly for it saves the client polls.

A task is what :class:`ferrum.drivers.base.Task` describes to drivers:
``node`` (:class:`~ferrum.objects.node.Node`), ``driver``
(:class:`~ferrum.drivers.base.Driver`), ``shared``, ``purpose`` (for
logs), ``ctx`` (the :class:`ConductorContext`), and ``resume()`` and
``start()``, which drivers use to go on with a flow.

Lock retries follow ``[conductor]node_locked_retry_attempts`` and
``node_locked_retry_interval``, read at each acquisition.
"""

import logging
import threading
import time
import types
from collections.abc import Callable, Mapping
from typing import Any

from ferrum.common import exception
from ferrum.common import metrics
from ferrum.common import state_machine
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.drivers import base
from ferrum.objects import node as node_obj

LOG = logging.getLogger(__name__)
_RELEASE_ATTEMPTS = 3
#: Written by the lock itself, never restored by an undo.
_LOCK_COLUMNS = frozenset({'reservation'})


class Task:
    """One unit of work on one node. Create it with :func:`acquire`."""

    def __init__(self, ctx: context_mod.ConductorContext, node_id: int | str,
                 purpose: str, shared: bool = False, retry: bool = True,
                 load_driver: bool = True) -> None:
        self.ctx = ctx
        self.purpose = purpose
        self.shared = shared
        self._spawn: tuple[Callable[..., Any], tuple[Any, ...]] | None = None
        self._worker_done: threading.Event | None = None
        self._released = shared
        if shared:
            self.node = node_obj.Node.get(ctx.db, node_id)
        else:
            self.node = self._reserve(node_id, retry)
        try:
            self._driver = (ctx.drivers.build(self.node) if load_driver
                            else None)
        except Exception:
            self.release()
            raise
        self.fsm = state_machine.new_machine(self.node.provision_state)
        self._remember_initial_state()

    @property
    def driver(self) -> base.Driver:
        """The node's interfaces.

        :raises RuntimeError: the task was acquired with
            ``load_driver=False`` (a bug in the caller).
        """
        if self._driver is None:
            raise RuntimeError('The task on node %s was acquired with '
                               'load_driver=False; it has no driver'
                               % self.node.uuid)
        return self._driver

    def rebuild_driver(self) -> None:
        """Build the driver again, after a change of the node's interfaces.

        :raises InterfaceNotSupported: the new interfaces are not usable.
        """
        self._driver = self.ctx.drivers.build(self.node)

    def _remember_initial_state(self) -> None:
        """What ``_undo_event`` restores when no worker takes the job."""
        self._initial_state = self.node.snapshot()

    def _reserve(self, node_id: int | str, retry: bool) -> node_obj.Node:
        conf = self.ctx.conf.conductor
        attempts = conf.node_locked_retry_attempts if retry else 1
        started = time.monotonic()
        for attempt in range(1, attempts + 1):
            self.ctx.inflight.reserving(+1)
            try:
                node = node_obj.Node.reserve(self.ctx.db, self.ctx.host,
                                             node_id)
            except exception.NodeLocked:
                if attempt == attempts:
                    metrics.LOCK_WAIT_SECONDS.labels('locked').observe(
                        time.monotonic() - started)
                    raise
                self.ctx.sleep(conf.node_locked_retry_interval)
            else:
                metrics.LOCK_WAIT_SECONDS.labels('acquired').observe(
                    time.monotonic() - started)
                self.ctx.inflight.lock_taken(node.id)
                LOG.debug('Node %(node)s locked for %(purpose)s',
                          {'node': node.uuid, 'purpose': self.purpose})
                return node
            finally:
                self.ctx.inflight.reserving(-1)
        raise AssertionError('unreachable')

    # ---- state machine ------------------------------------------------------

    def process_event(self, event: str, last_error: str | None = None,
                      target_state: str | None = None) -> str:
        """Fire ``event`` and record the new state (and ``last_error``).

        The state is persisted before the task hands over to a worker
        (``spawn_after``) and otherwise in the same UPDATE that releases the
        lock, so nobody sees a state whose work has not been handed on, and
        a block that raises after the event leaves the node as it was.

        :param last_error: recorded on the node; a failure event should give
            one. It is cleared when omitted for a non-failure state.
        :param target_state: overrides the target shown for the new state
            (manual cleaning targets ``manageable``, not ``available``).
        :raises InvalidStateRequested: ``event`` is not allowed now.
        """
        self._require_exclusive('process_event')
        old = self.node.provision_state
        new = state_machine.process_event(self.fsm, event, self.node.uuid)
        self.node.provision_state = new
        if new in states.STABLE_STATES:
            self.node.target_provision_state = None
        elif target_state is not None:
            self.node.target_provision_state = target_state
        elif (new in (states.CLEANING, states.CLEANWAIT)
              and self.node.target_provision_state == states.MANAGEABLE):
            pass  # manual cleaning keeps its manageable target throughout
        elif new not in states.FAILURE_STATES:
            self.node.target_provision_state = states.TARGETS.get(new)
        if last_error is not None:
            self.node.last_error = last_error
        elif new not in states.FAILURE_STATES:
            self.node.last_error = None
        log = LOG.error if new in states.FAILURE_STATES else LOG.info
        log('Node %(node)s moved from %(old)s to %(new)s on event %(event)s '
            '(%(purpose)s)%(error)s',
            {'node': self.node.uuid, 'old': old, 'new': new, 'event': event,
             'purpose': self.purpose,
             'error': ': %s' % last_error if last_error else ''})
        return new

    def resume(self) -> None:
        """End the node's wait; see :meth:`ferrum.drivers.base.Task.resume`."""
        self._require_exclusive('resume')
        self.ctx.runner.resume(self)

    def fail(self, error: str) -> None:
        """Fail the node's wait; see :meth:`ferrum.drivers.base.Task.fail`."""
        self._require_exclusive('fail')
        self.ctx.runner.fail(self, error)

    def start(self, verb: str,
              args: Mapping[str, Any] | None = None) -> None:
        """Start a provision verb; see :class:`ferrum.drivers.base.Task`."""
        self._require_exclusive('start')
        self.ctx.runner.start(self, verb, args)

    # ---- hand-over to a worker ----------------------------------------------

    def spawn_after(self, func: Callable[..., Any], *args: Any) -> None:
        """Run ``func(*args)`` on a worker once the ``with`` block exits.

        The lock passes to the worker, which releases it when ``func``
        returns or raises. Called from work already on a worker, ``func``
        runs after that work, on the same worker.
        """
        self._require_exclusive('spawn_after')
        if self._spawn is not None:
            raise RuntimeError('Node %s: %s already handed work on (%s); '
                               'a task hands on one piece of work'
                               % (self.node.uuid, self.purpose,
                                  getattr(self._spawn[0], '__name__', '?')))
        self._spawn = (func, args)

    def _run_spawned(self, func: Callable[..., Any],
                     args: tuple[Any, ...]) -> None:
        try:
            func(*args)
            while self._spawn is not None:
                # The work handed on more work (a driver ended a wait from
                # an asynchronous passthru, say): run it here, under the
                # lock this worker holds, once the state is visible.
                (func, args), self._spawn = self._spawn, None
                self.node.save()
                func(*args)
        except exception.DatabaseUnavailable as exc:
            # The work stopped half-way: keep the lock until the outage
            # recovery writes what was done and fails the node if it was
            # left in a transient state (a plain release could leave it
            # "deploying" with nobody working on it).
            LOG.warning('Node %(node)s: %(purpose)s interrupted: %(error)s',
                        {'node': self.node.uuid, 'purpose': self.purpose,
                         'error': exc})
            changes = self.node.changes()
            self.ctx.inflight.release_failed(self.node.id, self.node.uuid,
                                             changes,
                                             self.node.history(changes))
            self._released = True
        except Exception as exc:
            LOG.exception('Node %(node)s: %(purpose)s failed unexpectedly',
                          {'node': self.node.uuid, 'purpose': self.purpose})
            self._fail_unexpectedly(exc)
        finally:
            self.release()
            if self._worker_done is not None:
                self._worker_done.set()

    def wait_for_worker(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the work handed on to finish.

        Called by a request after its ``with`` block, so that a change that
        takes milliseconds is already done when the client first polls.
        True when the worker released the lock, or nothing was handed on.
        """
        if self._worker_done is None:
            return True
        return self._worker_done.wait(timeout)

    def _fail_unexpectedly(self, exc: Exception) -> None:
        """A flow raised (a bug): fail the node rather than strand it."""
        try:
            self.node.refresh()
            state = self.node.provision_state
            self.fsm = state_machine.new_machine(state)
            if state_machine.is_allowed(state, 'fail'):
                self.process_event('fail', last_error=(
                    'Unexpected error during %s: %s' % (self.purpose, exc)))
        except Exception:
            LOG.exception('Node %s: could not record the failure',
                          self.node.uuid)

    # ---- lock ---------------------------------------------------------------

    def _require_exclusive(self, what: str) -> None:
        if self.shared or self._released:
            raise RuntimeError('%s needs an exclusive lock on node %s'
                               % (what, self.node.uuid))

    def upgrade_lock(self) -> None:
        """Turn a shared task into an exclusive one (re-reading the node)."""
        if not self.shared:
            return
        self.node = self._reserve(self.node.id, retry=True)
        self.fsm = state_machine.new_machine(self.node.provision_state)
        self._remember_initial_state()
        self.shared = False
        self._released = False

    def release(self, save: bool = True) -> None:
        """Release the lock, writing pending changes when ``save``.

        A database error is retried, then the release is tried once more
        without the changes: a lock must not outlive its task.
        """
        if self._released:
            return
        changes = self.node.changes() if save else {}
        history = self.node.history(changes) if save else []
        for attempt in range(_RELEASE_ATTEMPTS):
            try:
                held = node_obj.Node.release(self.ctx.db, self.ctx.host,
                                             self.node.id, changes, history)
                break
            except exception.DatabaseUnavailable as exc:
                # Retrying now would fail the same way: the lock and the
                # changes are written once the database is back (see
                # ferrum.conductor.outage).
                LOG.warning('Node %(node)s: lock not released yet: %(error)s',
                            {'node': self.node.uuid, 'error': exc})
                self.ctx.inflight.release_failed(self.node.id,
                                                 self.node.uuid, changes,
                                                 history)
                self._released = True
                return
            except Exception:
                LOG.exception('Node %(node)s: releasing the lock failed '
                              '(attempt %(attempt)d)',
                              {'node': self.node.uuid, 'attempt': attempt + 1})
                if attempt == _RELEASE_ATTEMPTS - 2:
                    changes = {}  # maybe the changes are what fails
                    history = []
                self.ctx.sleep(0.1 * (attempt + 1))
        else:
            self.ctx.inflight.release_failed(self.node.id, self.node.uuid, {})
            self._released = True
            return
        self._released = True
        self.ctx.inflight.lock_released(self.node.id)
        if not held:
            LOG.warning('Node %(node)s: the lock of %(host)s was cleared by '
                        'someone else before %(purpose)s finished; its last '
                        'changes were not written',
                        {'node': self.node.uuid, 'host': self.ctx.host,
                         'purpose': self.purpose})

    def forget(self) -> None:
        """The node is gone (deleted): there is no lock left to release."""
        self._released = True
        self.ctx.inflight.lock_released(self.node.id)

    def __enter__(self) -> 'Task':
        return self

    def __exit__(self, exc_type: type[BaseException] | None,
                 exc: BaseException | None,
                 tb: types.TracebackType | None) -> None:
        if exc_type is not None or self._spawn is None:
            self.release(save=exc_type is None)
            return
        func, args = self._spawn
        self._spawn = None
        try:
            self.node.save()
            self._worker_done = threading.Event()
            self.ctx.workers.submit(self._run_spawned, func, args)
        except Exception:
            self._undo_event()
            raise

    def _undo_event(self) -> None:
        """The job could not be handed on: put the node back as it was."""
        LOG.warning('Node %(node)s: could not hand %(purpose)s to a worker; '
                    'back to %(state)s',
                    {'node': self.node.uuid, 'purpose': self.purpose,
                     'state': self._initial_state['provision_state']})
        # Every field, not only the state: the block may have changed
        # others (maintenance, instance_info) for the work it started.
        self.node.restore(self._initial_state, keep=_LOCK_COLUMNS)
        self.release()


def acquire(ctx: context_mod.ConductorContext, node_id: int | str,
            purpose: str, shared: bool = False, retry: bool = True,
            load_driver: bool = True) -> Task:
    """Start a task on a node; use it as a context manager.

    :param purpose: what the task is for, in human words; it is logged.
    :param shared: take no lock (read-only work).
    :param retry: retry a held lock as configured (else fail at once).
    :param load_driver: resolve the node's driver (allocation does not need
        it and may run on a conductor without the node's hardware type).
    :raises NodeLocked: the lock stayed held through every retry.
    :raises NodeNotFound: no such node.
    """
    return Task(ctx, node_id, purpose, shared=shared, retry=retry,
                load_driver=load_driver)
