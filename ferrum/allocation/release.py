# SPDX-License-Identifier: Apache-2.0
"""Giving a node back: deleting an allocation, explicitly or implicitly.

An allocation is deleted by ``DELETE /v1/allocations/<id>`` (and
``/v1/nodes/<node>/allocation``), and implicitly when its node is torn
down, when its node's ``instance_uuid`` is PATCHed away, and when its node
is deleted in maintenance. Each way takes the node's exclusive lock, checks
that the node may lose its allocation, and deletes the allocation in the
same transaction that clears the node's ``allocation_id`` and
``instance_uuid``.
"""

import logging

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj

LOG = logging.getLogger(__name__)


def check_releasable(node: node_obj.Node) -> None:
    """Refuse (409) to take the allocation of a node that is in use.

    As the allocation spec says: not while the node is active or in a
    state where its fields may not change, unless it is in maintenance.
    """
    if node.maintenance or node.provision_state in (
            states.UPDATE_ALLOWED_STATES):
        return
    raise exception.InvalidState(reason=(
        'The allocation of node %s cannot be removed while the node is in '
        'state "%s"; undeploy the node first, or set maintenance.'
        % (node.uuid, node.provision_state)))


def destroy(ctx: context_mod.ConductorContext,
            allocation: allocation_obj.Allocation) -> None:
    """Delete an allocation and release its node.

    :raises InvalidState: the node is in use (see check_releasable).
    :raises NodeLocked: another task held the node through every retry.
    :raises AllocationNotFound: it was deleted meanwhile.
    """
    if allocation.node_id is None:
        allocation.destroy()
        LOG.info('Allocation %s deleted', allocation.uuid)
        return
    with task_manager.acquire(ctx, allocation.node_id, load_driver=False,
                              purpose='allocation deletion') as task:
        check_releasable(task.node)
        allocation.destroy(allocation_obj.released_node_values(
            task.node.instance_info))
    LOG.info('Allocation %(alloc)s deleted; node %(node)s released',
             {'alloc': allocation.uuid, 'node': task.node.uuid})


def detach(task: task_manager.Task) -> None:
    """Delete the allocation of the locked node ``task.node``, if it has one.

    The caller has decided the node may lose it. The node's pending changes
    are written with the deletion, in one transaction.
    """
    node = task.node
    if node.allocation_id is None:
        return
    allocation_id = node.allocation_id
    values = allocation_obj.released_node_values(node.instance_info)
    values.pop('updated_at')
    for name, value in values.items():
        setattr(node, name, value)
    with task.ctx.db.writer():
        try:
            allocation_obj.Allocation.get(task.ctx.db, allocation_id).destroy()
        except exception.AllocationNotFound:
            pass  # deleted meanwhile: the node still needs its fields reset
        node.save()
    LOG.info('Node %(node)s: its allocation %(alloc)d was deleted '
             '(%(purpose)s)', {'node': node.uuid, 'alloc': allocation_id,
                               'purpose': task.purpose})
