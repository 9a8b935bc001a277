# SPDX-License-Identifier: Apache-2.0
"""Deleting a node, under its lock, by Ironic's rules.

A node may be deleted in enroll, manageable or adopt failed, in available
when ``[conductor] allow_deleting_available_nodes`` says so (the default),
and in any state while in maintenance, which is how an operator removes a
node whose BMC is beyond repair. Never while it is protected, and never
while it has an instance unless it is in maintenance. The failure states
are refused because a node that failed mid-deploy may still hold the
previous tenant's data: it goes through tear-down or cleaning first.

Nor while a lease that has not ended booked it (pending, starting or
active, see :data:`ferrum.objects.lease.holds.BOOKING`), maintenance or
not: the lease would go active short of the nodes it booked, breaking its
all-or-nothing promise. Blazar refuses to delete a host with
reservations for the same reason.

The node's ports, traits and every allocation that names it are deleted
with it, in one transaction (see ``Node.destroy``), which also checks the
leases.
"""

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager
from ferrum.objects import node as node_obj
from ferrum.objects.lease import holds as lease_holds

LOG = logging.getLogger(__name__)


def allowed_states(ctx: context_mod.ConductorContext) -> list[str]:
    """The provision states a node out of maintenance may be deleted in."""
    allowed = set(states.DELETE_ALLOWED_STATES)
    if ctx.conf.conductor.allow_deleting_available_nodes:
        allowed.add(states.AVAILABLE)
    return sorted(allowed)


def check_deletable(ctx: context_mod.ConductorContext,
                    node: node_obj.Node) -> None:
    """Refuse (409) to delete ``node``, saying what would allow it."""
    if node.protected:
        raise exception.InvalidState(reason=(
            'Node %s is protected and cannot be deleted; unset "protected" '
            'first.' % node.uuid))
    if node.maintenance:
        return
    if node.instance_uuid is not None:
        raise exception.InvalidState(reason=(
            'Node %s is associated with instance %s; undeploy it, remove '
            'its instance_uuid or set maintenance before deleting it.'
            % (node.uuid, node.instance_uuid)))
    allowed = allowed_states(ctx)
    if node.provision_state not in allowed:
        raise exception.InvalidState(reason=(
            'Node %s cannot be deleted in provision state "%s". Delete it '
            'in one of the states %s, or set maintenance first.'
            % (node.uuid, node.provision_state,
               ', '.join('"%s"' % state for state in allowed))))


#: Leases a refusal names at most (a node is rarely booked by more).
_NAMED_LEASES = 5


def _refuse_booked(ctx: context_mod.ConductorContext, node: node_obj.Node,
                   leases: Sequence[Mapping[str, Any]]) -> None:
    """Refuse (409) to delete a node that ``leases`` booked, saying what
    to do under the configured ``[lease] busy_node_policy``."""
    if not leases:
        return
    shown = leases[:_NAMED_LEASES]
    more = ('' if len(leases) <= _NAMED_LEASES else
            ' and %d more (GET /v1/leases?node=%s)'
            % (len(leases) - _NAMED_LEASES, node.uuid))
    named = '; '.join(
        'lease %s (%s, %s to %s UTC)' % (
            lease['uuid'], lease['status'], lease['start_at'],
            lease['end_at']) for lease in shown) + more
    deletes = ', '.join('DELETE /v1/leases/%s' % lease['uuid']
                        for lease in shown)
    if ctx.conf.lease.busy_node_policy == 'substitute':
        pending = ('For a lease still pending, put the node in maintenance '
                   'or retire it instead: the lease\'s start replaces it by '
                   'a free matching node ([lease] busy_node_policy = '
                   'substitute), and the node may be deleted after that.')
    else:
        pending = ('Putting the node in maintenance or retiring it would '
                   'make a pending lease\'s start fail ([lease] '
                   'busy_node_policy = fail); with busy_node_policy = '
                   'substitute the start would replace it by a free '
                   'matching node instead.')
    raise exception.InvalidState(reason=(
        'Node %s is booked by %s, and deleting it would leave %s short of '
        'the nodes %s. Delete %s first (%s: a pending lease is cancelled, a '
        'running one ends and gives the node back). %s'
        % (node.uuid, named,
           'the lease' if len(leases) == 1 else 'those leases',
           'it booked' if len(leases) == 1 else 'they booked',
           'the lease' if len(leases) == 1 else 'them', deletes, pending)))


def destroy_node(ctx: context_mod.ConductorContext,
                 node_id: int | str) -> None:
    """Delete a node that may be deleted (see :func:`check_deletable`).

    :raises NodeLocked: another task holds the node.
    :raises InvalidState: the node may not be deleted now.
    """
    with task_manager.acquire(ctx, node_id, purpose='node deletion',
                              load_driver=False) as task:
        node = task.node
        check_deletable(ctx, node)
        claims = ctx.allocations.claims_of(ctx, node_id=node.id)
        with ctx.db.writer() as conn:
            # In the deleting transaction: a lease created meanwhile is
            # either seen here or finds the node gone.
            _refuse_booked(ctx, node, lease_holds.booked_by(conn, node.id))
            allocations = node.destroy()
        task.forget()
    LOG.info('Node %(node)s deleted, with %(count)d allocation(s)',
             {'node': node.uuid, 'count': allocations})
    ctx.allocations.released(ctx, claims)
