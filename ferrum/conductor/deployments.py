# SPDX-License-Identifier: Apache-2.0
"""The deploy flow: prepare, the deploy steps by priority, then active.

The deploy steps are every interface's (``get_deploy_steps``) with a
priority above 0, highest first: ``deploy.deploy`` (100) for every deploy
interface, and for the ``direct`` deploy the agent's ``write_image`` (80)
and the steps that boot the instance after it; the node's deploy templates
add steps or change those (:mod:`ferrum.conductor.deploy_steps`). A step
may make the node wait in ``wait call-back``; ``task.resume()`` goes on
with the next one.

Every function here runs in a worker thread with the node's exclusive lock,
handed over by ``Task.spawn_after``; none of them raises: a failure moves
the node to ``deploy failed`` with ``last_error``, after the deploy
interface's ``clean_up`` has released what ``prepare`` allocated.
"""

import logging

from ferrum.allocation import release
from ferrum.common import states
from ferrum.conductor import cleaning
from ferrum.conductor import deploy_steps
from ferrum.conductor import driver_errors
from ferrum.conductor import step_flow
from ferrum.conductor import task_manager
from ferrum.conductor import vifs
from ferrum.drivers.agent import session

LOG = logging.getLogger(__name__)


def do_deploy(task: task_manager.Task) -> None:
    """Run prepare, then the deploy steps; the node is in ``deploying``."""
    try:
        task.driver.deploy.prepare(task)
    except Exception as exc:
        fail_deploy(task, driver_errors.describe(
            task, 'Deploy failed in the %s interface'
            % task.driver.deploy.__class__.__name__, exc))
        return
    try:
        step_flow.start(FLOW, task, deploy_steps.for_deploy(task))
    except Exception as exc:
        fail_deploy(task, driver_errors.describe(
            task, 'Cannot get deploy steps; failed to deploy', exc))
        return
    step_flow.run(FLOW, task, 0)


def continue_deploy(task: task_manager.Task) -> None:
    """The driver ended ``wait call-back`` (the node resumed to
    ``deploying``): the next deploy step, or ``active``."""
    step_flow.resume(FLOW, task)


def finish_deploy(task: task_manager.Task) -> None:
    """The last deploy step is done: the workload is on, ``active``."""
    step_flow.forget(FLOW, task)
    # The deploy's agent, if any, is done: its token and URL go (Ironic).
    session.forget(task)
    task.node.power_state = states.POWER_ON
    # Which conductor set the workload up: when the hash ring gives the
    # node to another one, that one takes it over (conductor/takeover.py).
    task.node.conductor_affinity = task.ctx.conductor_id
    task.process_event('done')


def fail_deploy(task: task_manager.Task, error: str) -> None:
    """``deploying`` or ``wait call-back`` -> ``deploy failed``, cleaned up."""
    task.process_event('fail', last_error=error)
    clean_up_failed(task)


def clean_up_failed(task: task_manager.Task) -> None:
    """Release what ``prepare`` allocated, the node already failed.

    As in Ironic: a failed, timed-out or aborted deploy must not keep the
    boot files, networks or profiles it set up. A failure here is added to
    ``last_error``; the node stays ``deploy failed`` either way.
    """
    step_flow.forget(FLOW, task)
    session.forget(task)
    try:
        task.driver.deploy.clean_up(task)
    except Exception as exc:
        task.node.last_error = '%s; cleaning up also failed: %s' % (
            (task.node.last_error or '').rstrip('. '),
            driver_errors.describe(task, 'clean_up after the failure', exc))


def do_tear_down(task: task_manager.Task) -> None:
    """Tear the workload down, then hand over to automated cleaning."""
    try:
        task.driver.deploy.tear_down(task)
        task.driver.deploy.clean_up(task)
    except Exception as exc:
        task.process_event('fail', last_error=(
            '%s. Fix the cause, then retry with the "deleted" action.'
            % driver_errors.describe(task, 'Tear-down failed', exc)))
        return
    task.node.power_state = states.POWER_OFF
    task.node.instance_info = {}
    task.node.instance_uuid = None
    task.node.instance_name = None
    # As Ironic's tear-down: the tenant's VIFs go with its instance.
    vifs.detach_all(task)
    release.detach(task)
    task.process_event('clean')
    cleaning.do_node_clean(task)


def do_adopt(task: task_manager.Task) -> None:
    """Take over a node that already runs a workload; node in ``adopting``."""
    try:
        task.driver.power.validate(task)
        task.driver.deploy.validate(task)
        task.driver.deploy.take_over(task)
    except Exception as exc:
        task.process_event('fail', last_error=driver_errors.describe(
            task, 'Adoption failed', exc))
        return
    task.node.power_state = states.POWER_ON
    task.node.conductor_affinity = task.ctx.conductor_id
    task.process_event('done')


FLOW = step_flow.Flow(
    kind='deploy', wait=states.DEPLOYWAIT,
    interface_steps=lambda iface, task: iface.get_deploy_steps(task),
    execute=lambda iface, task, step: iface.execute_deploy_step(task, step),
    finish=finish_deploy, fail=fail_deploy)
