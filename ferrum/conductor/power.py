# SPDX-License-Identifier: Apache-2.0
"""Power changes on request, and the periodic power-state sync."""

import logging
import threading
import time

from ferrum.common import exception
from ferrum.common import metrics
from ferrum.common import plural
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import driver_errors
from ferrum.conductor import task_manager
from ferrum.drivers.agent import session
from ferrum.objects import node_history
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)

#: The sync leaves these alone: not verified yet, or a ramdisk or the
#: hardware itself is expected to change the power state meanwhile.
_SYNC_EXCLUDED_STATES = frozenset({
    states.ENROLL, states.DEPLOYWAIT, states.CLEANWAIT, states.INSPECTWAIT,
    states.ADOPTFAIL})

_RESULT_STATE = {
    states.POWER_ON: states.POWER_ON,
    states.POWER_OFF: states.POWER_OFF,
    states.SOFT_POWER_OFF: states.POWER_OFF,
    states.REBOOT: states.POWER_ON,
    states.SOFT_REBOOT: states.POWER_ON,
}


def change_power_state(ctx: context_mod.ConductorContext, node_id: int | str,
                       target: str, timeout: int | None = None) -> None:
    """Start a power change; ``target_power_state`` shows it is under way.

    Returns once the change is done, or ``[conductor]action_wait_timeout``
    has passed, whichever comes first.

    :raises InvalidParameterValue: unknown target, or one the driver does
        not support.
    :raises PowerOffDisabled: a power off of a node with
        ``disable_power_off``.
    :raises NoFreeConductorWorker: nothing was changed.
    """
    if target not in _RESULT_STATE:
        raise exception.InvalidParameterValue(
            reason='Unknown power state "%s"; use one of %s' % (
                target, ', '.join(sorted(_RESULT_STATE))))
    with task_manager.acquire(ctx, node_id, purpose='power change') as task:
        if (_RESULT_STATE[target] == states.POWER_OFF
                and task.node.disable_power_off):
            # As Ironic (API 1.95): such a node is never powered off.
            raise exception.PowerOffDisabled(pstate=target)
        task.driver.power.validate(task)
        supported = task.driver.power.get_supported_power_states(task)
        if target not in supported:
            raise exception.InvalidParameterValue(
                reason='Node %s does not support power state "%s"; it '
                       'supports %s' % (task.node.uuid, target, supported))
        task.node.target_power_state = _RESULT_STATE[target]
        task.spawn_after(_do_power, task, target, timeout)
    task.wait_for_worker(ctx.conf.conductor.action_wait_timeout)


def _do_power(task: task_manager.Task, target: str,
              timeout: int | None) -> None:
    # The request's timeout only: without one, the driver waits its
    # default for the change, which is longer for a soft one
    # (power_iface.change_timeout).
    try:
        # Only a hard reboot is reboot(); a soft one goes to
        # set_power_state, as in Ironic, since reboot() cannot say "soft".
        if target == states.REBOOT:
            task.driver.power.reboot(task, timeout=timeout)
        else:
            task.driver.power.set_power_state(task, target, timeout=timeout)
    except Exception as exc:
        task.node.target_power_state = None
        task.node.last_error = driver_errors.describe(
            task, 'Power change to "%s" failed' % target, exc)
        return
    task.node.power_state = _RESULT_STATE[target]
    task.node.target_power_state = None
    task.node.last_error = None
    if target != states.POWER_ON:
        # A ramdisk agent stopped (or restarts): as in Ironic, its token
        # and URL go, so the next agent looks the node up anew.
        session.forget(task)


class PowerSync:
    """The power-state sync periodic of one conductor.

    Failure counts live in memory: after a restart a node gets
    ``power_state_sync_max_retries`` fresh attempts, which is harmless.
    """

    PURPOSE = 'power state sync'

    def __init__(self) -> None:
        self.failures: dict[str, int] = {}
        self._lock = threading.Lock()

    @decorators.periodic(
        spacing=lambda conf: conf.conductor.sync_power_state_interval)
    def sync_power_states(self, ctx: decorators.Conductor) -> None:
        # Only this conductor's share (each_node): every conductor querying
        # every BMC would multiply the BMC traffic by their number.
        conf = ctx.conf.conductor
        started = time.monotonic()
        count = ctx.each_node(
            self.PURPOSE, self._sync, columns=('fault',),
            filters={'reserved': False},
            predicate=lambda row: (not row.maintenance
                                   or row.fault == states.FAULT_POWER_FAILURE),
            workers=min(conf.sync_power_state_workers,
                        conf.periodic_max_workers) or 1)
        LOG.debug('Power sync checked %(nodes)s in %(secs).1fs',
                  {'nodes': plural.count(count, 'node'),
                   'secs': time.monotonic() - started})

    def _sync(self, task: task_manager.Task) -> None:
        node = task.node
        if (node.provision_state in _SYNC_EXCLUDED_STATES
                or node.target_power_state):
            return  # see _SYNC_EXCLUDED_STATES, or a change is under way
        try:
            actual = task.driver.power.get_power_state(task)
        except Exception as exc:
            self._record_failure(task, exc)
            return
        with self._lock:
            self.failures.pop(node.uuid, None)
        recovered = node.fault == states.FAULT_POWER_FAILURE
        if actual == node.power_state and not recovered:
            return
        seen = (node.power_state, node.provision_state)
        task.upgrade_lock()
        node = task.node
        if (node.target_power_state
                or (node.power_state, node.provision_state) != seen):
            return  # someone acted while we read the BMC: next run
        if recovered and node.fault == states.FAULT_POWER_FAILURE:
            LOG.info('Node %(node)s: BMC answers again, leaving maintenance',
                     {'node': node.uuid})
            node.maintenance = False
            node.fault = None
            node.maintenance_reason = None
        force = task.ctx.conf.conductor.force_power_state_during_sync
        # A node that must stay on is never powered off by the sync either.
        if (force and node.power_state in (states.POWER_ON, states.POWER_OFF)
                and actual != node.power_state and not recovered
                and not node.disable_power_off):
            LOG.warning('Node %(node)s is %(actual)s but should be '
                        '%(db)s; setting it back',
                        {'node': node.uuid, 'actual': actual,
                         'db': node.power_state})
            metrics.POWER_SYNC_MISMATCHES.labels('forced').inc()
            task.driver.power.set_power_state(task, node.power_state)
            node.note(node_history.note(
                node_history.MONITORING, 'Power state %s found by the sync; '
                'set back to %s' % (actual, node.power_state)))
        else:
            if actual != node.power_state:
                metrics.POWER_SYNC_MISMATCHES.labels('recorded').inc()
                node.note(node_history.note(
                    node_history.MONITORING, 'Power state corrected by the '
                    'sync: %s -> %s' % (node.power_state, actual)))
            node.power_state = actual

    def _record_failure(self, task: task_manager.Task,
                        exc: Exception) -> None:
        node = task.node
        with self._lock:
            count = self.failures.get(node.uuid, 0) + 1
            self.failures[node.uuid] = count
        limit = task.ctx.conf.conductor.power_state_sync_max_retries
        driver_errors.describe(
            task, 'Reading the power state failed (%d of %d)'
            % (count, limit), exc, level=logging.WARNING)
        if count < limit or node.maintenance:
            return
        task.upgrade_lock()
        task.node.maintenance = True
        task.node.fault = states.FAULT_POWER_FAILURE
        task.node.maintenance_reason = (
            'Power state could not be read %s in a row: %s' % (
                plural.count(count, 'time'), exc))
        task.node.last_error = task.node.maintenance_reason
        with self._lock:
            self.failures.pop(node.uuid, None)

