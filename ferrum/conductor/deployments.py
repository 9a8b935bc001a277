# SPDX-License-Identifier: Apache-2.0
"""The deploy flow: prepare, deploy, then active (or wait call-back).

Every function here runs in a worker thread with the node's exclusive lock,
handed over by ``Task.spawn_after``; none of them raises: a failure moves
the node to ``deploy failed`` with ``last_error``.
"""

import logging

from ferrum.allocation import release
from ferrum.common import states
from ferrum.conductor import task_manager

LOG = logging.getLogger(__name__)


def do_deploy(task: task_manager.Task) -> None:
    """Run prepare and deploy; the node is in ``deploying``."""
    assert task.driver is not None
    try:
        task.driver.deploy.prepare(task)
        result = task.driver.deploy.deploy(task)
    except Exception as exc:
        fail_deploy(task, 'Deploy failed in the %s interface: %s' % (
            task.driver.deploy.__class__.__name__, exc))
        return
    if result == states.DEPLOYWAIT:
        task.process_event('wait')
        return
    finish_deploy(task)


def finish_deploy(task: task_manager.Task) -> None:
    task.node.power_state = states.POWER_ON
    # Which conductor set the workload up: when the hash ring gives the
    # node to another one, that one takes it over (conductor/takeover.py).
    task.node.conductor_affinity = task.ctx.conductor_id
    task.node.deploy_step = None
    task.process_event('done')


def continue_deploy(task: task_manager.Task) -> None:
    """The driver reported its asynchronous deploy done; node resumed."""
    finish_deploy(task)


def fail_deploy(task: task_manager.Task, error: str) -> None:
    task.node.deploy_step = None
    task.process_event('fail', last_error=error)


def do_tear_down(task: task_manager.Task) -> None:
    """Tear the workload down, then hand over to automated cleaning."""
    assert task.driver is not None
    from ferrum.conductor import cleaning
    try:
        task.driver.deploy.tear_down(task)
        task.driver.deploy.clean_up(task)
    except Exception as exc:
        task.process_event('fail', last_error=(
            'Tear-down failed: %s. Fix the cause, then retry with the '
            '"deleted" action.' % exc))
        return
    task.node.power_state = states.POWER_OFF
    task.node.instance_info = {}
    task.node.instance_uuid = None
    release.detach(task)
    task.process_event('clean')
    cleaning.do_node_clean(task)


def do_adopt(task: task_manager.Task) -> None:
    """Take over a node that already runs a workload; node in ``adopting``."""
    assert task.driver is not None
    try:
        task.driver.power.validate(task)
        task.driver.deploy.validate(task)
        task.driver.deploy.take_over(task)
    except Exception as exc:
        task.process_event('fail', last_error='Adoption failed: %s' % exc)
        return
    task.node.power_state = states.POWER_ON
    task.node.conductor_affinity = task.ctx.conductor_id
    task.process_event('done')
