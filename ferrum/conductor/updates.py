# SPDX-License-Identifier: Apache-2.0
"""Updating a node's fields on request (the API's PATCH), under its lock.

The API has already checked types and which fields may change. What needs
the conductor is checked here: a driver or interface change only in a state
where the node is not being worked on (or in maintenance), and the new
driver must accept the node's ``driver_info`` before anything is saved.
``protected`` and ``retired`` follow Ironic: set only where they make sense,
and clearing one clears its reason.
"""

from typing import Any

from ferrum.allocation import release
from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager
from ferrum.conf import default as default_conf
from ferrum.objects import node as node_obj

_INTERFACE_FIELDS = tuple('%s_interface' % kind
                          for kind in default_conf.INTERFACE_KINDS)


def update_node(ctx: context_mod.ConductorContext, node_id: int | str,
                changes: dict[str, Any], reset_interfaces: bool = False
                ) -> node_obj.Node:
    """Apply ``changes`` to a node and return it as saved.

    When the driver changes, interfaces not named in ``changes`` keep their
    value if the new driver supports it and otherwise fall back to its
    default; ``reset_interfaces`` resets all of them to the defaults.

    :raises NodeLocked: another task holds the node.
    :raises InvalidState: a driver or interface change while the node is
        being worked on and not in maintenance.
    :raises DriverNotSupported, InterfaceNotSupported: not usable here.
    :raises InvalidParameterValue: the new driver rejects driver_info.
    :raises InvalidState: removing the ``instance_uuid`` of an allocated
        node that is in use (the allocation goes with it otherwise).
    """
    with task_manager.acquire(ctx, node_id, purpose='node update',
                              load_driver=False) as task:
        node = task.node
        driver_change = 'driver' in changes or any(
            name in changes for name in _INTERFACE_FIELDS)
        if (driver_change and not node.maintenance
                and node.provision_state not in states.UPDATE_ALLOWED_STATES):
            raise exception.InvalidState(reason=(
                'The driver or interfaces of node %s cannot change in state '
                '"%s"; wait for a stable state or set maintenance first.'
                % (node.uuid, node.provision_state)))
        drops_allocation = _drops_allocation(node, changes)
        for name, value in changes.items():
            setattr(node, name, value)
        _check_flag(node, changes, 'protected',
                    node.provision_state == states.ACTIVE,
                    'only in provision state "active"')
        _check_flag(node, changes, 'retired',
                    node.provision_state != states.AVAILABLE,
                    'in any provision state but "available"; move it to '
                    '"manageable" first')
        if driver_change:
            _resolve_interfaces(ctx, node, changes, reset_interfaces)
            task.rebuild_driver()
            _validate_driver_info(task)
        if drops_allocation:
            release.detach(task)
        node.save()
        return node


def _drops_allocation(node: node_obj.Node, changes: dict[str, Any]) -> bool:
    """Whether ``changes`` remove an allocated node's instance_uuid.

    That deletes the allocation (the allocation spec), but not while the
    node is in use; any other change of that instance_uuid is refused.
    """
    if node.allocation_id is None or 'instance_uuid' not in changes:
        return False
    if changes['instance_uuid'] == node.instance_uuid:
        return False
    if changes['instance_uuid'] is not None:
        raise exception.InvalidState(reason=(
            'Node %s holds allocation %s through its instance_uuid; delete '
            'the allocation instead of changing instance_uuid.'
            % (node.uuid, node.instance_uuid)))
    release.check_releasable({'uuid': node.uuid,
                              'maintenance': node.maintenance,
                              'provision_state': node.provision_state})
    return True


def _check_flag(node: node_obj.Node, changes: dict[str, Any], flag: str,
                may_set: bool, where: str) -> None:
    """Ironic's rules for ``protected`` and ``retired`` and their reasons.

    Clearing the flag clears its reason; a reason needs the flag; the flag
    may only be set where ``may_set`` says (``where`` tells the client).
    """
    reason = '%s_reason' % flag
    if flag in changes:
        if not getattr(node, flag):
            setattr(node, reason, None)
        elif not may_set:
            raise exception.InvalidState(reason=(
                'Node %s can be made %s %s; it is in "%s".'
                % (node.uuid, flag, where, node.provision_state)))
    if reason in changes and getattr(node, reason) and not getattr(node,
                                                                   flag):
        raise exception.InvalidParameterValue(
            reason='The %s field can only be set when %s is true.'
                   % (reason, flag))


def _resolve_interfaces(ctx: context_mod.ConductorContext,
                        node: node_obj.Node, changes: dict[str, Any],
                        reset: bool) -> None:
    values: dict[str, Any] = {}
    for kind in default_conf.INTERFACE_KINDS:
        field = '%s_interface' % kind
        current = getattr(node, field)
        if field in changes:
            values[field] = current
        elif not reset and current in ctx.drivers.usable(node.driver, kind):
            values[field] = current
    for field, name in ctx.drivers.check_node_interfaces(
            node.driver, values).items():
        setattr(node, field, name)


def _validate_driver_info(task: task_manager.Task) -> None:
    for kind in ('power', 'management'):
        try:
            getattr(task.driver, kind).validate(task)
        except exception.FerrumException as exc:
            raise exception.InvalidParameterValue(reason=(
                'driver_info of node %s does not suit its %s interface "%s": '
                '%s' % (task.node.uuid, kind,
                        getattr(task.node, '%s_interface' % kind),
                        exc))) from exc
