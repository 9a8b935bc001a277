# SPDX-License-Identifier: Apache-2.0
"""The cleaning flow: prepare_cleaning, clean steps by priority, tear down.

Automated cleaning (``provide`` and tear-down) runs every step whose
priority is above 0, highest first, and ends in ``available``. Manual
cleaning runs the steps the operator listed, in that order, and ends in
``manageable``. A step, or ``prepare_cleaning``, may finish asynchronously:
the node then waits in ``clean wait`` until the driver calls
``task.resume()`` (see drivers/base.py), or the callback timeout.

Functions here run in a worker with the node's exclusive lock and never
raise: on failure the node goes to ``clean failed`` with ``last_error``,
in maintenance with the fault "clean failure", and ``tear_down_cleaning``
still runs.
"""

import logging
from typing import Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import driver_errors
from ferrum.conductor import firmware
from ferrum.conductor import step_flow
from ferrum.conductor import task_manager
from ferrum.drivers import base
from ferrum.drivers.agent import session

LOG = logging.getLogger(__name__)

_MANUAL = 'clean_manual'


def automated_steps(task: task_manager.Task) -> list[dict[str, Any]]:
    """Steps with priority > 0 from every interface, highest priority first.

    Out-of-band steps and the agent's in-band ones (the deploy interface's
    ``get_clean_steps`` lists those) merge into one order.
    """
    return step_flow.by_priority(FLOW, task)


def check_manual_steps(task: task_manager.Task,
                       requested: list[dict[str, Any]]
                       ) -> list[dict[str, Any]]:
    """Match operator-given steps against the driver's; raise if unknown.

    :raises InvalidCleanSteps: a step does not exist or lacks an argument.
    """
    known = {(s['interface'], s['step']): s
             for _kind, iface in task.driver.interfaces()
             for s in iface.get_clean_steps(task)}
    result = []
    for wanted in requested:
        key = (wanted.get('interface'), wanted.get('step'))
        if key not in known:
            raise exception.InvalidCleanSteps(
                node=task.node.uuid,
                reason='no step %s in the %s interface; available: %s' % (
                    key[1], key[0], sorted('%s.%s' % k for k in known)))
        args = wanted.get('args') or {}
        argsinfo = known[key].get('argsinfo') or {}
        missing = [name for name, info in argsinfo.items()
                   if info.get('required') and name not in args]
        unknown = sorted(set(args) - set(argsinfo))
        if missing or unknown:
            raise exception.InvalidCleanSteps(
                node=task.node.uuid,
                reason='step %s.%s: missing arguments %s, unknown %s' % (
                    key[0], key[1], missing, unknown))
        result.append(dict(known[key], args=args))
    return result


def do_node_clean(task: task_manager.Task,
                  manual_steps: list[dict[str, Any]] | None = None) -> None:
    """Start cleaning; the node is in ``cleaning``. Its firmware list is
    refreshed first, as Ironic does (:mod:`ferrum.conductor.firmware`)."""
    manual = manual_steps is not None
    if not manual and not base.automated_clean_enabled(task):
        LOG.info('Node %(node)s: automated cleaning is disabled, skipping',
                 {'node': task.node.uuid})
        task.process_event('manage' if task.node.retired else 'done')
        return
    firmware.cache_components(task)
    try:
        task.driver.power.validate(task)
        task.driver.deploy.validate_cleaning(task)
        steps = (manual_steps if manual_steps is not None
                 else automated_steps(task))
        step_flow.start(FLOW, task, steps)
        task.node.driver_internal_info[_MANUAL] = manual
        if task.driver.deploy.prepare_cleaning(task) == states.CLEANWAIT:
            task.process_event('wait')
            return
    except Exception as exc:
        fail_cleaning(task, driver_errors.describe(
            task, 'Preparing cleaning failed', exc))
        return
    step_flow.run(FLOW, task, 0)


def continue_cleaning(task: task_manager.Task) -> None:
    """Resume after an asynchronous step or preparation finished."""
    info = task.node.driver_internal_info
    if info.get(FLOW.index_key) is None and not info.get(_MANUAL):
        # The preparation booted what has steps of its own (the agent
        # reports its in-band steps once it runs): order them all anew.
        try:
            step_flow.start(FLOW, task, automated_steps(task))
        except Exception as exc:
            fail_cleaning(task, driver_errors.describe(
                task, 'Listing the clean steps failed', exc))
            return
    step_flow.resume(FLOW, task)


def finish_cleaning(task: task_manager.Task) -> None:
    manual = task.node.driver_internal_info.get(_MANUAL)
    try:
        task.driver.deploy.tear_down_cleaning(task)
    except Exception as exc:
        fail_cleaning(task, driver_errors.describe(
            task, 'Tearing down cleaning failed', exc), tear_down=False)
        return
    _forget_steps(task)
    # A retired node is not handed out again: it ends in manageable.
    task.process_event('manage' if manual or task.node.retired else 'done')


def fail_cleaning(task: task_manager.Task, error: str,
                  tear_down: bool = True) -> None:
    """Move the node to ``clean failed``, running tear_down_cleaning first."""
    if tear_down:
        try:
            task.driver.deploy.tear_down_cleaning(task)
        except Exception as exc:
            error = '%s; %s' % (error, driver_errors.describe(
                task, 'tearing down cleaning also failed', exc))
    _forget_steps(task)
    task.node.maintenance = True
    task.node.fault = states.FAULT_CLEAN_FAILURE
    task.node.maintenance_reason = error
    task.process_event('fail', last_error=error)


def tear_down_aborted(task: task_manager.Task, error: str) -> None:
    """After ``abort`` in clean wait (node already in clean failed)."""
    try:
        task.driver.deploy.tear_down_cleaning(task)
    except Exception as exc:
        task.node.last_error = '%s %s' % (error, driver_errors.describe(
            task, 'Tearing down cleaning failed', exc))
    _forget_steps(task)


def _forget_steps(task: task_manager.Task) -> None:
    step_flow.forget(FLOW, task)
    task.node.driver_internal_info.pop(_MANUAL, None)
    # Cleaning's agent, if any, is done: its token and URL go (Ironic).
    session.forget(task)


FLOW = step_flow.Flow(
    kind='clean', wait=states.CLEANWAIT,
    interface_steps=lambda iface, task: iface.get_clean_steps(task),
    execute=lambda iface, task, step: iface.execute_clean_step(task, step),
    finish=finish_cleaning, fail=fail_cleaning)
