# SPDX-License-Identifier: Apache-2.0
"""Running a node's steps in order: the one loop of cleaning and deploying.

A flow's steps are computed when it starts and kept in the node's
``driver_internal_info`` (``<kind>_steps``, with the index of the step
running in ``<kind>_step_index``), so a wait outlives the conductor: after
``task.resume()`` whichever conductor handles the node goes on with the
next step. The step running shows in the node's ``clean_step`` or
``deploy_step``, and each step started is an entry of the node's history.

Functions here run in a worker with the node's exclusive lock and never
raise: a step that raises ends the flow through its ``fail``.
"""

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from ferrum.conductor import driver_errors
from ferrum.conductor import task_manager
from ferrum.drivers import base
from ferrum.objects import node_history
from ferrum.objects.lease import ends as lease_ends

LOG = logging.getLogger(__name__)
#: The history entry type of a step started.
STEP_EVENT = 'step'


@dataclasses.dataclass(frozen=True)
class Flow:
    """One kind of step flow.

    :ivar kind: ``clean`` or ``deploy``: names the keys and the node field
        (``clean_step``, ``deploy_step``) that shows the running step.
    :ivar wait: the state event ``wait`` leads to, which a step returns to
        go on asynchronously.
    :ivar interface_steps: an interface's steps of this kind.
    :ivar execute: runs one step on its interface.
    :ivar finish: called when the last step is done.
    :ivar fail: called with the error when a step raises.
    """

    kind: str
    wait: str
    interface_steps: Callable[[base.BaseInterface, task_manager.Task],
                              list[dict[str, Any]]]
    execute: Callable[[base.BaseInterface, task_manager.Task,
                       dict[str, Any]], str | None]
    finish: Callable[[task_manager.Task], None]
    fail: Callable[[task_manager.Task, str], None]

    @property
    def steps_key(self) -> str:
        return '%s_steps' % self.kind

    @property
    def index_key(self) -> str:
        return '%s_step_index' % self.kind

    @property
    def field(self) -> str:
        return '%s_step' % self.kind


def by_priority(flow: Flow, task: task_manager.Task) -> list[dict[str, Any]]:
    """Steps with priority > 0 from every interface, highest first."""
    found = [dict(step, args=step.get('args') or {})
             for _kind, iface in task.driver.interfaces()
             for step in flow.interface_steps(iface, task)
             if step['priority'] > 0]
    # Stable: equal priorities keep the interface order of the driver.
    return sorted(found, key=lambda s: -s['priority'])


def start(flow: Flow, task: task_manager.Task,
          steps: list[dict[str, Any]]) -> None:
    """Record ``steps`` as the node's flow, none run yet."""
    info = task.node.driver_internal_info
    info[flow.steps_key] = steps
    info[flow.index_key] = None


def steps_of(flow: Flow, task: task_manager.Task) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (
        task.node.driver_internal_info.get(flow.steps_key) or [])
    return found


def resume(flow: Flow, task: task_manager.Task) -> None:
    """Go on after the step that made the node wait."""
    index = task.node.driver_internal_info.get(flow.index_key)
    run(flow, task, 0 if index is None else index + 1)


def run(flow: Flow, task: task_manager.Task, first: int) -> None:
    """Run the steps from index ``first`` until one waits or all are done."""
    info = task.node.driver_internal_info
    steps = steps_of(flow, task)
    # Once a run, not once a step: no step changes whose lease it is.
    lease: dict[str, str] | None = None
    for index in range(first, len(steps)):
        step = steps[index]
        info[flow.index_key] = index
        setattr(task.node, flow.field, step)
        name = '%s.%s' % (step['interface'], step['step'])
        text = '%s step %s started' % (flow.kind.capitalize(), name)
        with task.ctx.db.writer():
            if lease is None:
                # Read in the step's write transaction: one transaction,
                # not a read of its own besides.
                lease = _lease_of(flow, task)
            task.node.note(node_history.note(STEP_EVENT, text, **lease))
            task.node.save()
        LOG.info('Node %(node)s: %(kind)s step %(step)s started',
                 {'node': task.node.uuid, 'kind': flow.kind, 'step': name})
        iface = getattr(task.driver, step['interface'])
        try:
            result = flow.execute(iface, task, step)
        except Exception as exc:
            flow.fail(task, driver_errors.describe(
                task, '%s step %s failed' % (flow.kind.capitalize(), name),
                exc))
            return
        if result == flow.wait:
            task.process_event('wait')
            return
    flow.finish(task)


def _lease_of(flow: Flow, task: task_manager.Task) -> dict[str, str]:
    """The entry's lease, when a lease's end cleans the node: the feed
    shows which erase steps ran for which lease, to its project too."""
    if flow.kind != 'clean':
        return {}
    found = lease_ends.cleaning_for(task.ctx.db, task.node.id)
    return {} if found is None else {'lease_uuid': found[0],
                                     'lessee': found[1]}


def forget(flow: Flow, task: task_manager.Task) -> None:
    """Drop the flow's record from the node (it ended, or failed)."""
    setattr(task.node, flow.field, None)
    for key in (flow.steps_key, flow.index_key):
        task.node.driver_internal_info.pop(key, None)
