# SPDX-License-Identifier: Apache-2.0
"""Giving a node back: deleting an allocation, explicitly or implicitly.

An allocation is deleted by ``DELETE /v1/allocations/<id>`` (and
``/v1/nodes/<node>/allocation``), and implicitly when its node is torn
down, when its node's ``instance_uuid`` is PATCHed away, and when its node
is deleted in maintenance. Each way makes sure no other task works on the
node, checks that the node may lose its allocation, and deletes the
allocation in the same transaction that clears the node's
``allocation_id`` and ``instance_uuid``. The implicit ways already hold
the node's lock; an explicit delete does not take it (three write
transactions) but locks the node's row for one transaction and refuses
while anyone holds the node's lock. The allocation backend releases the
claim once the deletion committed (``ctx.allocations.released``; with
the placement backend the deletion itself queued the consumer's
release).
"""

import logging
from collections.abc import Mapping
from typing import Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager
from ferrum.objects.allocation import releases as allocation_releases

LOG = logging.getLogger(__name__)


def check_releasable(node: Mapping[str, Any]) -> None:
    """Refuse (409) to take the allocation of a node that is in use.

    As the allocation spec says: not while the node is active or in a
    state where its fields may not change, unless it is in maintenance.

    :param node: the node's ``uuid``, ``maintenance`` and
        ``provision_state``.
    """
    if node['maintenance'] or node['provision_state'] in (
            states.UPDATE_ALLOWED_STATES):
        return
    raise exception.InvalidState(reason=(
        'The allocation of node %s cannot be removed while the node is in '
        'state "%s"; undeploy the node first, or set maintenance.'
        % (node['uuid'], node['provision_state'])))


def destroy(ctx: context_mod.ConductorContext, ident: int | str) -> None:
    """Delete an allocation and release its node.

    One transaction (see ``allocation_releases.destroy_releasing_node``);
    while a task holds the node's lock it is retried as
    ``[conductor]node_locked_retry_*`` say, read at each call.

    :raises InvalidState: the node is in use (see check_releasable).
    :raises NodeLocked: another task held the node through every retry.
    :raises AllocationNotFound: no such allocation.
    """
    conf = ctx.conf.conductor
    for attempt in range(conf.node_locked_retry_attempts):
        released = allocation_releases.destroy_releasing_node(
            ctx.db, ident, check_releasable)
        if released.locked_by is None:
            LOG.info('Allocation %(alloc)s deleted; node %(node)s released',
                     {'alloc': released.allocation_uuid,
                      'node': released.node_uuid})
            ctx.allocations.released(ctx, [released.allocation_uuid])
            return
        if attempt + 1 < conf.node_locked_retry_attempts:
            ctx.sleep(conf.node_locked_retry_interval)
    raise exception.NodeLocked(node=released.node_uuid,
                               host=released.locked_by)


def detach(task: task_manager.Task) -> None:
    """Delete the allocation of the locked node ``task.node``, if it has one.

    The caller holds the node's lock and has decided the node may lose its
    allocation. The node's pending changes are written with the deletion,
    in one transaction.
    """
    node = task.node
    if node.allocation_id is None:
        return
    allocation_id = node.allocation_id
    claims = task.ctx.allocations.claims_of(task.ctx,
                                            allocation_ids=[allocation_id])
    node.instance_info = allocation_releases.released_node_values(
        node.instance_info)['instance_info']
    node.allocation_id = None
    node.instance_uuid = None
    with task.ctx.db.writer():
        # Already gone or not, the node still needs its fields reset.
        allocation_releases.delete(task.ctx.db, allocation_id, node.uuid)
        node.save()
    LOG.info('Node %(node)s: its allocation %(alloc)d was deleted '
             '(%(purpose)s)', {'node': node.uuid, 'alloc': allocation_id,
                               'purpose': task.purpose})
    task.ctx.allocations.released(task.ctx, claims)
