# SPDX-License-Identifier: Apache-2.0
"""Virtual media through the node API (1.89, 1.93), as Ironic runs it.

Attaching and detaching take the node's lock, check the management
interface's fields and clear ``last_error``, then do the work on a
worker: the API answers 204 at once, and a failure (a driver without
virtual media included) is the node's ``last_error``. Listing is
synchronous, under a shared lock.
"""

from typing import Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import driver_errors
from ferrum.conductor import task_manager


def _start(ctx: context_mod.ConductorContext, node_id: int | str,
           purpose: str, failure: str, action: str, *args: Any) -> None:
    with task_manager.acquire(ctx, node_id, purpose=purpose) as task:
        task.driver.management.validate(task)
        if (task.node.maintenance
                and task.node.fault == states.FAULT_POWER_FAILURE):
            raise exception.TemporaryFailure(
                reason='Unable to %s for node %s due to power failure '
                       'state' % (purpose, task.node.uuid))
        task.node.last_error = None
        task.spawn_after(_run, task, failure, action, *args)
    task.wait_for_worker(ctx.conf.conductor.action_wait_timeout)


def _run(task: task_manager.Task, failure: str, action: str,
         *args: Any) -> None:
    try:
        getattr(task.driver.management, action)(task, *args)
    except Exception as exc:
        task.node.last_error = driver_errors.describe(task, failure, exc)


def attach(ctx: context_mod.ConductorContext, node_id: int | str,
           device_type: str, image_url: str) -> None:
    """Start inserting ``image_url`` into the virtual ``device_type``.

    :raises NodeLocked: another task holds the node.
    :raises InvalidParameterValue: the management fields are invalid.
    """
    _start(ctx, node_id, 'attaching virtual media',
           'Could not attach virtual media', 'attach_virtual_media',
           device_type, image_url)


def detach(ctx: context_mod.ConductorContext, node_id: int | str,
           device_types: list[str] | None) -> None:
    """Start ejecting ``device_types`` (every one when None)."""
    _start(ctx, node_id, 'detaching virtual media',
           'Could not detach virtual media', 'detach_virtual_media',
           device_types)


def listing(ctx: context_mod.ConductorContext,
            node_id: int | str) -> list[dict[str, Any]]:
    """The node's virtual media devices.

    :raises UnsupportedDriverExtension: its management interface has none.
    """
    with task_manager.acquire(ctx, node_id, shared=True,
                              purpose='reading virtual media') as task:
        task.driver.management.validate(task)
        return task.driver.management.get_virtual_media(task)
