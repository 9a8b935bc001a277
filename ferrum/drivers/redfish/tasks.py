# SPDX-License-Identifier: Apache-2.0
"""BMC operations that finish later: the node waits on a task monitor.

A Redfish BMC may answer any PATCH or action with 202 and the URI of a
*task monitor*, where the operation goes on. The interface method that sent
it then calls :func:`wait` and returns what it returns, the wait state of
its hook (``clean wait`` for a clean step, ``wait call-back`` for a deploy,
``inspect wait`` for an inspection): nothing holds a conductor worker
meanwhile. The monitor's URI, the operation and the time are recorded in
the node's ``driver_internal_info`` (:data:`KEY`), so the wait outlives the
conductor: whichever conductor handles the node next goes on polling.

A periodic task of the interface (:class:`TaskPolling`, every ``[redfish]
task_poll_interval`` seconds) reads each waiting node's monitor once
(:func:`poll`), as Ironic's RAID and firmware periodics do:

* still running (202, or a Task still ``Running``...): look again at the
  next run, or later if the BMC asked so (``Retry-After``);
* ``Completed`` (``OK`` or ``Warning``), or the operation's own answer: the
  record goes and the node resumes (the next clean step...);
* ``Exception``, ``Killed``, ``Cancelled``, ``Critical``, or a 4xx answer:
  the node fails (``task.fail``), ``last_error`` naming the operation and
  the BMC's messages;
* the monitor is gone (404): the BMC deleted it once done; assumed
  completed, with a warning, as Ironic does;
* the BMC does not answer: tried again at the next run, not a failure;
* still running, or unreadable, ``[redfish] task_timeout`` seconds after
  the 202: the node fails, naming that option.

A record whose node no longer waits for it (an abort or the callback
timeout ended the wait) is ignored, and replaced by the next :func:`wait`.

To adopt it in another interface: send the request with
:func:`ferrum.drivers.redfish.client.send`, return ``wait(task, self.kind,
operation, monitor)`` when it gave a monitor, and inherit
:class:`TaskPolling` in the interface class.
"""

import datetime
import logging
from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors
from ferrum.periodic import decorators

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

#: The ``driver_internal_info`` key of the node's running BMC task.
KEY = 'redfish_task'
#: The state a hook runs in -> the wait state it returns.
WAITS = {states.CLEANING: states.CLEANWAIT,
         states.DEPLOYING: states.DEPLOYWAIT,
         states.INSPECTING: states.INSPECTWAIT}
#: Redfish TaskState values of a task that is not over yet.
RUNNING = frozenset({'New', 'Starting', 'Running', 'Suspended',
                     'Interrupted', 'Pending', 'Stopping', 'Service',
                     'Cancelling'})
#: TaskStatus values of a completed task that did what was asked.
_SUCCESS = frozenset({None, 'OK', 'Warning'})

#: What a read of the monitor comes to (:func:`outcome`).
WAITING, DONE, FAILED = 'waiting', 'done', 'failed'


def _step(node: Any) -> dict[str, Any] | None:
    step: dict[str, Any] | None = node.clean_step or node.deploy_step
    return step


def wait(task: 'Task', interface: str, operation: str, monitor: str) -> str:
    """Make the node wait for the BMC's task at ``monitor``.

    Called with the exclusive lock from a hook that may return a wait state
    (a clean step, ``deploy``, ``inspect_hardware``), which returns this.

    :param interface: the kind of the calling interface, whose
        :class:`TaskPolling` polls it.
    :param operation: what the BMC does, for logs and ``last_error``
        ("clean step management.set_bmc_clock").
    :returns: the wait state for the hook to return.
    :raises RedfishError: the hook runs where ferrum cannot wait.
    """
    node = task.node
    state = WAITS.get(node.provision_state)
    if state is None:
        raise errors.RedfishError(
            action=operation, address=driver_info.parse(
                node.driver_info).address,
            reason='the BMC answered that it goes on asynchronously (task '
                   'monitor %s), which ferrum cannot wait for in "%s"'
                   % (monitor, node.provision_state))
    info = dict(node.driver_internal_info)
    info[KEY] = {'monitor': monitor, 'operation': operation,
                 'interface': interface, 'wait': state, 'step': _step(node),
                 'started_at': task.ctx.clock().isoformat()}
    node.driver_internal_info = info
    LOG.info('Node %(node)s: the BMC runs %(op)s as a task (%(monitor)s); '
             'the node waits in "%(state)s"',
             {'node': node.uuid, 'op': operation, 'monitor': monitor,
              'state': state})
    return state


def record(node: Any) -> dict[str, Any] | None:
    """The node's BMC task, if the node still waits for it."""
    found = (node.driver_internal_info or {}).get(KEY)
    if (not isinstance(found, dict) or not found.get('monitor')
            or found.get('wait') != node.provision_state):
        return None
    return found


def outcome(report: client.TaskReport | None) -> str:
    """:data:`WAITING`, :data:`DONE` or :data:`FAILED` for one read
    (None: the monitor is gone, taken as done)."""
    if report is None:
        return DONE
    if report.processing or report.state in RUNNING:
        return WAITING
    if report.state in (None, 'Completed') and report.status in _SUCCESS:
        return DONE
    return FAILED


def _since(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)


def _last_read(exc: Exception) -> str:
    if isinstance(exc, errors.RedfishUnreachable):
        # Its own message tells how to reach the BMC; the node's error
        # says which read it was, the last before the timeout.
        return 'the BMC did not answer the last read: %s' % (
            exc.kwargs.get('reason'),)
    return 'the last read failed: %s' % exc


def _upgrade(task: 'Task', seen: dict[str, Any]) -> bool:
    """Take the exclusive lock; True if the node still waits for ``seen``."""
    task.upgrade_lock()
    if record(task.node) != seen:
        return False
    info = dict(task.node.driver_internal_info)
    info.pop(KEY, None)
    task.node.driver_internal_info = info
    return True


def _fail(task: 'Task', seen: dict[str, Any], error: str) -> None:
    if _upgrade(task, seen):
        task.fail(error)


def _wait_later(task: 'Task', seen: dict[str, Any], seconds: float) -> None:
    """Remember the BMC's Retry-After, if it is longer than our spacing."""
    if seconds <= task.ctx.conf.redfish.task_poll_interval:
        return
    task.upgrade_lock()
    if record(task.node) != seen:
        return
    later = task.ctx.clock() + datetime.timedelta(seconds=seconds)
    info = dict(task.node.driver_internal_info)
    info[KEY] = dict(seen, poll_after=later.isoformat())
    task.node.driver_internal_info = info


def poll(task: 'Task', interface: str) -> None:
    """Read the monitor of the node's BMC task once, and act on it.

    Called with a shared lock; takes the exclusive one only to change the
    node. See the module docstring for what each answer does.
    """
    seen = record(task.node)
    if seen is None or seen.get('interface') != interface:
        return
    if seen.get('step') != _step(task.node):
        return  # left by an earlier wait, for another step
    node, conf = task.node, task.ctx.conf
    now = task.ctx.clock()
    limit = conf.redfish.task_timeout
    late = bool(limit) and now - _since(seen['started_at']) >= (
        datetime.timedelta(seconds=limit))
    if not late and seen.get('poll_after') and now < _since(
            seen['poll_after']):
        return
    what = 'Redfish task of %s (task monitor %s)' % (seen['operation'],
                                                    seen['monitor'])
    timed_out = ('%s did not finish within %d seconds ([redfish] '
                 'task_timeout)' % (what, limit))
    try:
        report = client.read_task(conf, driver_info.parse(node.driver_info),
                                  seen['monitor'])
    except (errors.RedfishError, exception.InvalidParameterValue,
            exception.MissingParameterValue) as exc:
        if late:
            _fail(task, seen, '%s; %s' % (timed_out, _last_read(exc)))
            return
        LOG.warning('Node %(node)s: could not read the %(what)s, trying '
                    'again at the next run: %(error)s',
                    {'node': node.uuid, 'what': what, 'error': exc})
        return
    result = outcome(report)
    if result == WAITING:
        if late:
            _fail(task, seen, timed_out)
        elif report is not None and report.retry_after:
            _wait_later(task, seen, report.retry_after)
        return
    if result == FAILED:
        assert report is not None
        _fail(task, seen, '%s failed on the BMC: task %s%s%s' % (
            what, report.state or 'failed',
            ' (%s)' % report.status if report.status else '',
            ': %s' % '; '.join(report.messages) if report.messages
            else ', without a message'))
        return
    if report is None:
        LOG.warning('Node %(node)s: the BMC no longer has the %(what)s; '
                    'assuming it completed successfully',
                    {'node': node.uuid, 'what': what})
    else:
        log = LOG.warning if report.status == 'Warning' else LOG.info
        log('Node %(node)s: %(what)s completed%(messages)s',
            {'node': node.uuid, 'what': what,
             'messages': ': %s' % '; '.join(report.messages)
             if report.messages else ''})
    if _upgrade(task, seen):
        task.resume()


def _waiting(row: Any) -> bool:
    return record(row) is not None


class TaskPolling:
    """Mix into a redfish interface whose methods may call :func:`wait`:
    adds the periodic task that polls the BMC tasks those started."""

    kind: str

    @decorators.node_periodic(
        purpose='polling Redfish task monitors',
        spacing=lambda conf: conf.redfish.task_poll_interval,
        filters={'provision_state_in': sorted(WAITS.values()),
                 'reserved': False},
        predicate=_waiting, columns=('driver_internal_info', 'clean_step',
                                     'deploy_step'))
    def poll_redfish_tasks(self, task: 'Task') -> None:
        poll(task, self.kind)
