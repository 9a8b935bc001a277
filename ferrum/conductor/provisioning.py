# SPDX-License-Identifier: Apache-2.0
"""Provision verbs: turn an API target into a state-machine event and work.

Each verb takes the node's lock, checks what can be checked at once (so a
bad request changes nothing and gets a clear error), fires the event and
hands the slow part to a worker. The table ``_VERBS`` maps API targets to
the function that runs them.
"""

import logging
from collections.abc import Callable
from typing import Any

from ferrum.common import exception
from ferrum.common import state_machine
from ferrum.common import states
from ferrum.conductor import cleaning
from ferrum.conductor import context as context_mod
from ferrum.conductor import deployments
from ferrum.conductor import task_manager

LOG = logging.getLogger(__name__)


def _verify(task: task_manager.Task) -> None:
    """enroll -> verifying -> manageable: can we talk to the BMC?"""
    assert task.driver is not None
    try:
        task.driver.power.validate(task)
        task.node.power_state = task.driver.power.get_power_state(task)
    except Exception as exc:
        # Advice that fits: an unreachable BMC or appliance needs waiting,
        # not new driver_info.
        advice = ('run "manage" again once it answers'
                  if getattr(exc, 'code', None) == 503 else
                  'fix driver_info (or the driver\'s configuration), then '
                  'run "manage" again')
        task.process_event('fail', last_error=(
            'Verifying the power interface failed: %s; %s.'
            % (str(exc).rstrip('. '), advice)))
        return
    task.process_event('done')


def _manage(task: task_manager.Task, _args: dict[str, Any]) -> None:
    if task.node.provision_state == states.ENROLL:
        task.process_event('manage')
        task.spawn_after(_verify, task)
    else:
        task.process_event('manage')


def _provide(task: task_manager.Task, _args: dict[str, Any]) -> None:
    if task.node.retired:
        raise exception.NodeIsRetired(op='provide', node=task.node.uuid)
    task.process_event('provide')
    task.spawn_after(cleaning.do_node_clean, task)


def _clean(task: task_manager.Task, args: dict[str, Any]) -> None:
    requested = args.get('clean_steps')
    if not requested:
        raise exception.InvalidParameterValue(
            reason='Manual cleaning needs "clean_steps": a list of '
                   '{"interface", "step", "args"} objects.')
    _check_allowed(task, 'clean')
    steps = cleaning.check_manual_steps(task, requested)
    task.process_event('clean', target_state=states.MANAGEABLE)
    task.spawn_after(cleaning.do_node_clean, task, steps)


def _validate_for_deploy(task: task_manager.Task) -> None:
    assert task.driver is not None
    task.driver.power.validate(task)
    task.driver.deploy.validate(task)
    task.driver.boot.validate(task)


def _store_configdrive(task: task_manager.Task, args: dict[str, Any]) -> None:
    """Keep a requested config drive where deploy interfaces look for it."""
    if args.get('configdrive') is not None:
        task.node.instance_info = dict(task.node.instance_info,
                                       configdrive=args['configdrive'])


def _deploy(task: task_manager.Task, args: dict[str, Any]) -> None:
    _check_allowed(task, 'deploy')
    _validate_for_deploy(task)
    _store_configdrive(task, args)
    task.process_event('deploy')
    task.spawn_after(deployments.do_deploy, task)


def _check_unprotected(task: task_manager.Task, action: str) -> None:
    """A protected node keeps its instance: no rebuild, no tear-down."""
    if task.node.protected:
        raise exception.InvalidState(reason=(
            'Node %s is protected and cannot be %s; unset "protected" first.'
            % (task.node.uuid, action)))


def _rebuild(task: task_manager.Task, args: dict[str, Any]) -> None:
    _check_allowed(task, 'rebuild')
    _check_unprotected(task, 'rebuilt')
    _validate_for_deploy(task)
    _store_configdrive(task, args)
    task.process_event('rebuild')
    task.spawn_after(deployments.do_deploy, task)


def _undeploy(task: task_manager.Task, _args: dict[str, Any]) -> None:
    _check_unprotected(task, 'undeployed')
    task.process_event('delete')
    task.spawn_after(deployments.do_tear_down, task)


def _inspect(task: task_manager.Task, _args: dict[str, Any]) -> None:
    task.process_event('inspect')
    task.spawn_after(_do_inspect, task)


def _do_inspect(task: task_manager.Task) -> None:
    assert task.driver is not None
    try:
        task.driver.inspect.validate(task)
        result = task.driver.inspect.inspect_hardware(task)
    except Exception as exc:
        task.process_event('fail', last_error='Inspection failed: %s' % exc)
        return
    task.process_event('wait' if result == states.INSPECTWAIT else 'done')


def _adopt(task: task_manager.Task, _args: dict[str, Any]) -> None:
    task.process_event('adopt')
    task.spawn_after(deployments.do_adopt, task)


def _abort(task: task_manager.Task, _args: dict[str, Any]) -> None:
    state = task.node.provision_state
    _check_allowed(task, 'abort')
    if state in (states.CLEANWAIT, states.CLEANHOLD):
        error = 'Cleaning aborted by request.'
        task.process_event('abort', last_error=error)
        task.spawn_after(cleaning.tear_down_aborted, task, error)
    else:
        task.process_event('abort', last_error='%s aborted by request.'
                           % state.capitalize())


def _check_allowed(task: task_manager.Task, event: str) -> None:
    """Raise before doing any work when ``event`` is not allowed now."""
    if not state_machine.is_allowed(task.node.provision_state, event):
        raise exception.InvalidStateRequested(
            action=event, node=task.node.uuid,
            state=task.node.provision_state)


_Verb = Callable[[task_manager.Task, dict[str, Any]], None]
_VERBS: dict[str, tuple[_Verb, str]] = {
    'manage': (_manage, 'node verification or management'),
    'provide': (_provide, 'providing (automated cleaning)'),
    'clean': (_clean, 'manual cleaning'),
    'deploy': (_deploy, 'node deployment'),
    'active': (_deploy, 'node deployment'),
    'rebuild': (_rebuild, 'node rebuild'),
    'deleted': (_undeploy, 'node tear-down'),
    'undeploy': (_undeploy, 'node tear-down'),
    'inspect': (_inspect, 'hardware inspection'),
    'adopt': (_adopt, 'node adoption'),
    'abort': (_abort, 'aborting an operation'),
}


def do_provisioning_action(ctx: context_mod.ConductorContext,
                           node_id: int | str, action: str,
                           args: dict[str, Any] | None = None) -> None:
    """Start ``action`` (an API provision target) on a node.

    Returns once the work is handed to a worker and has finished, or
    ``[conductor]action_wait_timeout`` has passed; the node's state tells
    how it goes.

    :raises InvalidParameterValue: unknown action or bad arguments.
    :raises InvalidStateRequested: the action is not allowed in this state.
    :raises NodeInMaintenance: for actions other than manage/abort.
    :raises NoFreeConductorWorker: no worker free; nothing was changed.
    """
    if action not in _VERBS:
        raise exception.InvalidParameterValue(
            reason='Unknown provision action "%s"; use one of %s' % (
                action, ', '.join(sorted(_VERBS))))
    verb, purpose = _VERBS[action]
    with task_manager.acquire(ctx, node_id, purpose=purpose) as task:
        event = states.VERBS[action]
        # In these states the conductor fires events itself (e.g. "manage"
        # ends a manual clean); an operator must not fire them midway.
        if (task.node.provision_state in states.STUCK_STATES_TREATED_AS_FAIL
                or not state_machine.is_allowed(task.node.provision_state,
                                                event)):
            raise exception.InvalidStateRequested(
                action=action, node=task.node.uuid,
                state=task.node.provision_state)
        if task.node.maintenance and action not in ('manage', 'abort',
                                                    'deleted', 'undeploy'):
            raise exception.NodeInMaintenance(
                node=task.node.uuid, action='"%s"' % action)
        verb(task, args or {})
    task.wait_for_worker(ctx.conf.conductor.action_wait_timeout)
