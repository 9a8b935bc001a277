# SPDX-License-Identifier: Apache-2.0
"""Backfill (API 1.58): record an allocation for a node that is already active.

Used to adopt nodes deployed without an allocation (by Nova, or by hand).
Unlike a normal allocation it runs at once, under the node's lock, and
either creates the allocation ``active`` or refuses with every reason the
node does not match; nothing is created on a refusal. The allocation
backend then claims the node (with the placement backend, the
allocation's consumer is created for it), or the allocation is undone.
"""

import logging
from typing import Any

from ferrum.allocation import release
from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

LOG = logging.getLogger(__name__)


def backfill(ctx: context_mod.ConductorContext, node_ident: int | str,
             values: dict[str, Any], traits: list[str]
             ) -> allocation_obj.Allocation:
    """Create an ``active`` allocation holding the active node ``node_ident``.

    A missing ``resource_class`` is taken from the node; a missing ``uuid``
    is the node's ``instance_uuid`` when it has one.

    :raises AllocationFailed: the node does not match (all reasons named).
    :raises NodeAssociated: the node already has an allocation, or another
        instance than the requested UUID.
    :raises AllocationAlreadyExists: duplicate UUID or name.
    """
    with task_manager.acquire(ctx, node_ident, load_driver=False,
                              purpose='allocation backfill') as task:
        node = task.node
        _check_free(node, values.get('uuid'))
        values = dict(values, conductor_affinity=ctx.conductor_id)
        values['resource_class'] = (values.get('resource_class')
                                    or node.resource_class)
        if not values.get('uuid') and node.instance_uuid:
            values['uuid'] = node.instance_uuid
        problems = _mismatches(ctx, node, values, traits)
        if problems:
            raise exception.AllocationFailed(
                reason='node %s cannot be backfilled: %s.'
                       % (node.uuid, '; '.join(problems)))
        instance_uuid = node.instance_uuid
        allocation = allocation_obj.Allocation.create_active(
            ctx.db, values, traits, node)
        _claim_or_undo(task, allocation, instance_uuid)
    LOG.info('Allocation %(alloc)s backfilled for node %(node)s',
             {'alloc': allocation.uuid, 'node': node.uuid})
    return allocation


def _claim_or_undo(task: task_manager.Task,
                   allocation: allocation_obj.Allocation,
                   instance_uuid: str | None) -> None:
    """The backend's claim of the node, or no allocation.

    Unlike a normal allocation the database comes first: with the
    placement backend the node is in use and stays reserved in Placement,
    so a crash before the claim leaves an active allocation on a reserved
    node, which the audit reports (consumer-missing) and heals. Any
    failure of the claim comes as AllocationFailed (see
    placement_backend.backfill_claim).
    """
    try:
        task.ctx.allocations.claim_active(task.ctx, allocation,
                                          task.node.uuid)
    except exception.AllocationFailed:
        release.detach(task)
        if instance_uuid is not None:
            task.node.instance_uuid = instance_uuid
            task.node.save()
        raise


def _check_free(node: node_obj.Node, uuid: str | None) -> None:
    if node.allocation_id is not None:
        raise exception.NodeAssociated(
            node=node.uuid, what='allocation %s' % node.allocation_id)
    if uuid and node.instance_uuid and node.instance_uuid != uuid:
        raise exception.NodeAssociated(
            node=node.uuid, what='instance %s' % node.instance_uuid)


def _mismatches(ctx: context_mod.ConductorContext, node: node_obj.Node,
                values: dict[str, Any], traits: list[str]) -> list[str]:
    problems = []
    if node.provision_state != states.ACTIVE:
        problems.append('it is in state "%s", not "active"'
                        % node.provision_state)
    if node.resource_class != values['resource_class']:
        problems.append('its resource class is %s, not %s' % (
            node.resource_class, values['resource_class']))
    missing = sorted(set(traits) - set(trait_obj.get_for_node(ctx.db,
                                                              node.id)))
    if missing:
        problems.append('it lacks trait(s) %s' % ', '.join(missing))
    candidates = values.get('candidate_nodes')
    if candidates and node.uuid not in candidates:
        problems.append('it is not among the candidate nodes')
    owner = values.get('owner')
    if owner and owner not in (node.owner, node.lessee):
        problems.append('neither its owner nor its lessee is %s' % owner)
    return problems
