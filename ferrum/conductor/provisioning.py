# SPDX-License-Identifier: Apache-2.0
"""Provision verbs: the one table of them, and how each one starts.

:data:`VERBS` is read by the API (which verbs exist, from which API
version), by the conductor (the event, the purpose logged, the function)
and by drivers, which start a verb with ``task.start(verb)``. Each verb
runs under the node's exclusive lock, checks what can be checked at once
(so a bad request changes nothing and gets a clear error), fires its event
and hands the slow part to a worker.
"""

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from ferrum.common import exception
from ferrum.common import state_machine
from ferrum.common import states
from ferrum.conductor import cleaning
from ferrum.conductor import context as context_mod
from ferrum.conductor import deploy_steps
from ferrum.conductor import deployments
from ferrum.conductor import driver_errors
from ferrum.conductor import firmware
from ferrum.conductor import inspection
from ferrum.conductor import task_manager

LOG = logging.getLogger(__name__)


def _verify(task: task_manager.Task) -> None:
    """enroll -> verifying -> manageable: can we talk to the BMC? Once
    it answers, the node's firmware list is refreshed, as Ironic does."""
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
        text = driver_errors.describe(
            task, 'Verifying the power interface failed', exc)
        task.process_event('fail', last_error='%s; %s.' % (
            text.rstrip('. '), advice))
        return
    firmware.cache_components(task)
    task.process_event('done')


def _manage(task: task_manager.Task, _args: dict[str, Any]) -> None:
    enrolled = task.node.provision_state == states.ENROLL
    task.process_event('manage')
    if enrolled:
        task.spawn_after(_verify, task)


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
    steps = cleaning.check_manual_steps(task, requested)
    task.process_event('clean', target_state=states.MANAGEABLE)
    task.spawn_after(cleaning.do_node_clean, task, steps)


def _check_unprotected(task: task_manager.Task, action: str) -> None:
    """A protected node keeps its instance: no rebuild, no tear-down."""
    if task.node.protected:
        raise exception.InvalidState(reason=(
            'Node %s is protected and cannot be %s; unset "protected" first.'
            % (task.node.uuid, action)))


def _start_deploy(task: task_manager.Task, args: dict[str, Any],
                  event: str) -> None:
    """``active`` (and ``deploy``) and ``rebuild``: the same flow."""
    task.driver.power.validate(task)
    task.driver.deploy.validate(task)
    task.driver.boot.validate(task)
    # Refused now, as Ironic does, rather than as a failed deploy.
    deploy_steps.for_deploy(task)
    if args.get('configdrive') is not None:
        # Kept where deploy interfaces look for it.
        task.node.instance_info = dict(task.node.instance_info,
                                       configdrive=args['configdrive'])
    task.process_event(event)
    task.spawn_after(deployments.do_deploy, task)


def _deploy(task: task_manager.Task, args: dict[str, Any]) -> None:
    _start_deploy(task, args, 'deploy')


def _rebuild(task: task_manager.Task, args: dict[str, Any]) -> None:
    _check_unprotected(task, 'rebuilt')
    _start_deploy(task, args, 'rebuild')


def _undeploy(task: task_manager.Task, _args: dict[str, Any]) -> None:
    _check_unprotected(task, 'undeployed')
    task.process_event('delete')
    task.spawn_after(deployments.do_tear_down, task)


def _inspect(task: task_manager.Task, _args: dict[str, Any]) -> None:
    task.process_event('inspect')
    task.spawn_after(inspection.do_inspect, task)


def _adopt(task: task_manager.Task, _args: dict[str, Any]) -> None:
    task.process_event('adopt')
    task.spawn_after(deployments.do_adopt, task)


def _abort(task: task_manager.Task, _args: dict[str, Any]) -> None:
    state = task.node.provision_state
    if state == states.CLEANWAIT:
        error = 'Cleaning aborted by request.'
        task.process_event('abort', last_error=error)
        task.spawn_after(cleaning.tear_down_aborted, task, error)
    elif state == states.DEPLOYWAIT:
        error = 'Deployment aborted by request.'
        task.process_event('abort', last_error=error)
        task.spawn_after(deployments.clean_up_failed, task)
    else:
        task.process_event('abort', last_error='%s aborted by request.'
                           % state.capitalize())


@dataclasses.dataclass(frozen=True)
class Verb:
    """One provision verb (an API target).

    :ivar event: the state-machine event it fires.
    :ivar purpose: what the task is for, as logs show it.
    :ivar min_version: the API minor version that introduced it.
    :ivar run: checks, fires ``event`` and hands the work to a worker.
    """

    event: str
    purpose: str
    min_version: int
    run: Callable[[task_manager.Task, dict[str, Any]], None]


#: Every provision verb. ``deploy`` and ``undeploy`` are Ironic 1.73's
#: names for ``active`` and ``deleted``, past ferrum's maximum version, so
#: the API refuses them with 406 as Ironic does at 1.65; drivers may use
#: either name.
VERBS: dict[str, Verb] = {
    'manage': Verb('manage', 'node verification or management', 4,
                   _manage),
    'provide': Verb('provide', 'providing (automated cleaning)', 4,
                    _provide),
    'clean': Verb('clean', 'manual cleaning', 15, _clean),
    'active': Verb('deploy', 'node deployment', 1, _deploy),
    'deploy': Verb('deploy', 'node deployment', 73, _deploy),
    'rebuild': Verb('rebuild', 'node rebuild', 1, _rebuild),
    'deleted': Verb('delete', 'node tear-down', 1, _undeploy),
    'undeploy': Verb('delete', 'node tear-down', 73, _undeploy),
    'inspect': Verb('inspect', 'hardware inspection', 6, _inspect),
    'adopt': Verb('adopt', 'node adoption', 17, _adopt),
    'abort': Verb('abort', 'aborting an operation', 13, _abort),
}
#: Verbs allowed on a node in maintenance.
_IN_MAINTENANCE = frozenset({'manage', 'abort', 'deleted', 'undeploy'})


def start(task: task_manager.Task, action: str,
          args: dict[str, Any]) -> None:
    """Start ``action`` on the task's node (exclusive lock held).

    :raises InvalidParameterValue: unknown action or bad arguments.
    :raises InvalidStateRequested: the action is not allowed in this state.
    :raises NodeInMaintenance: for actions other than manage/abort/undeploy.
    """
    verb = VERBS.get(action)
    if verb is None:
        raise exception.InvalidParameterValue(
            reason='Unknown provision action "%s"; use one of %s' % (
                action, ', '.join(sorted(VERBS))))
    state = task.node.provision_state
    # In the transient states the conductor fires events itself (e.g.
    # "manage" ends a manual clean); an operator must not fire them midway.
    if (state in states.STUCK_STATES_TREATED_AS_FAIL
            or not state_machine.is_allowed(state, verb.event)):
        raise exception.InvalidStateRequested(
            action=action, node=task.node.uuid, state=state)
    if task.node.maintenance and action not in _IN_MAINTENANCE:
        raise exception.NodeInMaintenance(
            node=task.node.uuid, action='"%s"' % action)
    verb.run(task, args)


def do_provisioning_action(ctx: context_mod.ConductorContext,
                           node_id: int | str, action: str,
                           args: dict[str, Any] | None = None,
                           wait: bool = True) -> None:
    """Start ``action`` (an API provision target) on a node.

    Returns once the work is handed to a worker and has finished, or
    ``[conductor]action_wait_timeout`` has passed; the node's state tells
    how it goes. Raises as :func:`start` does, and
    :class:`~ferrum.common.exception.NoFreeConductorWorker` when no worker
    is free (then nothing was changed).

    :param wait: False returns once the work is handed on: for a caller
        that starts many nodes in a row (the lease engine), where each
        wait would hold up the next node.
    """
    verb = VERBS.get(action)
    purpose = verb.purpose if verb is not None else 'provision action'
    with task_manager.acquire(ctx, node_id, purpose=purpose) as task:
        start(task, action, args or {})
    if wait:
        task.wait_for_worker(ctx.conf.conductor.action_wait_timeout)
