# SPDX-License-Identifier: Apache-2.0
"""A lease's start: give it every node it booked, or fail it.

Each node gets ``lessee`` = the lease's project, if it is free
(available, unallocated, unlocked, not in maintenance, without lessee)
and still matches the lease (:func:`ferrum.leases.selection.misfits`).
A node still held by someone else, no longer matching, or gone, is
handled by ``[lease] busy_node_policy``: replaced by a free matching node
(``substitute``) or the start fails (``fail``, or no substitute). The
lease's steps in Placement then claim its nodes there, for a lease with a
class (``ctx.placement.leases_for``, :mod:`ferrum.placement.leases`).

All or nothing: the lease goes ``active`` only in the UPDATE that finds it
holding every node it booked (:data:`ferrum.objects.lease.holds.HOLDS_ALL`).
Every step is idempotent, so a start cut short is run again.
"""

import logging
from collections.abc import Iterator, Mapping, Sequence

from ferrum.common import exception
from ferrum.common import plural
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.leases import selection
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects.lease import holds as lease_holds
from ferrum.objects.lease import nodes as lease_nodes

LOG = logging.getLogger(__name__)
#: Substitutes tried per busy node.
_SUBSTITUTES = 3


def start(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
          rows: Sequence[lease_nodes.LeaseNodeRow] | None = None) -> None:
    """Give the lease its nodes (see the module docstring); idempotent.

    A node that no longer matches the lease (in maintenance, retired,
    another resource class, owner or traits), or is gone, is busy too:
    the lease never goes active with fewer nodes than it booked
    (:data:`ferrum.objects.lease.holds.HOLDS_ALL`).

    :param rows: the lease's holding rows, if already read.
    """
    if rows is None:
        rows = lease.node_rows()
    with ctx.db.reader() as conn:
        misfits = selection.misfits(
            conn, selection.Ask.of(lease, ctx.clock(), False),
            [row.node_id for row in rows])
    unfit = [row for row in rows if row.node_id in misfits]
    # Rows go with their node: a node deleted behind the deletion's check
    # leaves the lease short, with nothing to name.
    vacant = [
        lease_holds.vacancy(lease)
        for _ in range(max(0, lease.count - len(rows)))]
    activated: list[bool] = []

    def then() -> None:
        activated.append(activate(ctx, lease, rows))
    steps = ctx.placement.leases_for(lease)
    whole = not (steps.claims or unfit or vacant)
    busy: Sequence[lease_nodes.LeaseNodeRow | lease_nodes.Vacancy]
    busy = lease_holds.hold_nodes(
        ctx.db, lease.id,
        [row for row in rows if row.node_id not in misfits],
        lease.project, then=then if whole else None)
    for row in unfit:
        # A start run before may have given it to the lessee.
        lease_holds.unhold_node(ctx.db, row, lease.project)
    busy = [*busy, *unfit, *vacant]
    policy = ctx.conf.lease.busy_node_policy
    if busy and policy == 'substitute':
        busy = [row for row in busy if not _substitute(ctx, lease, row)]
    if not busy:
        claimed = steps.claim(_SUBSTITUTES + 1, policy == 'substitute',
                              lambda row: _substitute(ctx, lease, row))
        if claimed.waits is not None:
            lease.record_error('Starting: waiting for Placement, which '
                               'holds the nodes for the lease: %s'
                               % claimed.waits)
            LOG.warning('Lease %(lease)s: start waits for Placement: '
                        '%(error)s',
                        {'lease': lease.uuid, 'error': claimed.waits})
            return
        if claimed.failure is not None:
            _fail(ctx, lease, [], policy, error=claimed.failure)
            return
        busy = claimed.busy
    if busy:
        _fail(ctx, lease, busy, policy, misfits)
        return
    if activated[0] if activated else activate(ctx, lease):
        LOG.info('Lease %(lease)s: active, project %(project)s holds '
                 '%(nodes)s until %(end)s',
                 {'lease': lease.uuid, 'project': lease.project,
                  'nodes': plural.count(lease.count, 'node'),
                  'end': lease.end_at})


def activate(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
              rows: Sequence[lease_nodes.LeaseNodeRow] | None = None
              ) -> bool:
    """Make the lease active, if it holds every node it booked."""
    with ctx.db.writer():
        done = lease.transition('done', None, fence=True,
                                where=[lease_holds.HOLDS_ALL],
                                last_error=None)
        if done:
            ctx.placement.leases_for(lease).push(_node_uuids(lease, rows))
    if not done:
        held = lease_holds.held_count(ctx.db, lease.id)
        if held < lease.count:
            # A node lost after the start's checks: the next run finds
            # it and applies the busy-node policy.
            message = ('Starting: the lease holds %d of its %s; the next '
                       'run replaces the others or fails the lease '
                       '([lease] busy_node_policy).'
                       % (held, plural.count(lease.count, 'node')))
            lease.record_error(message)
            LOG.warning('Lease %(lease)s: %(error)s',
                        {'lease': lease.uuid, 'error': message})
    return done


def _node_uuids(lease: lease_obj.Lease,
                rows: Sequence[lease_nodes.LeaseNodeRow] | None
                ) -> Iterator[str]:
    """The uuids of the lease's nodes, read only when iterated: steps with
    nothing to push never read them."""
    for row in rows or lease.node_rows():
        yield row.node_uuid


def _fail(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
          busy: Sequence[lease_nodes.LeaseNodeRow | lease_nodes.Vacancy],
          policy: str,
          misfits: Mapping[int, Sequence[str]] | None = None,
          error: str | None = None) -> None:
    """Fail the start: ``error``, else ``busy`` nodes under ``policy``
    (``misfits``: why those that no longer match the lease do not)."""
    reasons = '; '.join(_why_busy(ctx, row, lease.project, misfits or {})
                        for row in busy)
    steps = ctx.placement.leases_for(lease)
    waits = steps.release_start()
    if waits is not None:
        lease.record_error('Starting: failed, waiting for Placement to '
                           'release the lease\'s claim: %s' % waits)
        return
    rows = lease.node_rows()
    for row in rows:
        lease_holds.unhold_node(ctx.db, row, lease.project)
    error = error or (
        'The lease could not start: %d of its %s cannot go to it (%s), '
        'and [lease] busy_node_policy is "%s"%s. Delete the lease, or free '
        'or repair the nodes and book again.'
        % (len(busy), plural.count(lease.count, 'node'), reasons, policy,
           ', but no free matching node could replace %s'
           % ('it' if len(busy) == 1 else 'them')
           if policy == 'substitute' else ''))
    with ctx.db.writer():
        failed = lease.transition('fail', None, fence=True,
                                  last_error=error)
        if failed:
            steps.push(row.node_uuid for row in rows)
    if failed:
        LOG.error('Lease %(lease)s: %(error)s',
                  {'lease': lease.uuid, 'error': error})


def _substitute(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
                row: lease_nodes.LeaseNodeRow | lease_nodes.Vacancy
                ) -> bool:
    now = ctx.clock()
    tried = [r.node_id for r in lease.node_rows(holding_only=False)]
    busy = (row.node_uuid if isinstance(row, lease_nodes.LeaseNodeRow)
            else '(deleted)')
    for _pick in range(_SUBSTITUTES):
        with ctx.db.reader() as conn:
            found = selection.pick(conn, selection.Ask.of(lease, now, True),
                                   _SUBSTITUTES, exclude=tried)
        # A node free in ferrum's database may be another consumer's in
        # Placement: it would only cost the start a claim round.
        for node_id, node_uuid in ctx.placement.leases_for(lease).unheld(
                found):
            if lease_holds.substitute(ctx.db, row, node_id, lease.project,
                                     now):
                LOG.warning('Lease %(lease)s: node %(busy)s was busy at '
                            'the start; node %(node)s replaces it',
                            {'lease': lease.uuid,
                             'busy': busy,
                             'node': node_uuid})
                return True
        tried += [node_id for node_id, _uuid in found]
        if len(found) < _SUBSTITUTES:
            break
    return False


def _why_busy(ctx: context_mod.ConductorContext,
              row: lease_nodes.LeaseNodeRow | lease_nodes.Vacancy,
              project: str, misfits: Mapping[int, Sequence[str]]) -> str:
    """Why the node of ``row`` cannot go to the lease, in words."""
    if isinstance(row, lease_nodes.Vacancy):
        return 'a node was deleted after the lease was booked'
    try:
        node = node_obj.Node.get(ctx.db, row.node_id)
    except exception.NodeNotFound:
        return 'node %s was deleted' % row.node_uuid
    free = not (node.maintenance or node.reservation or node.instance_uuid
                or node.allocation_id)
    unfit = misfits.get(node.id)
    if node.maintenance:
        why = 'in maintenance'
    elif node.retired:
        why = 'retired'
    elif unfit:
        why = 'no longer a match for the lease (%s)' % ', '.join(unfit)
    elif (free and node.lessee in (None, project)
            and node.provision_state == states.AVAILABLE):
        why = ('reserved in Placement (power state %s)' % node.power_state
               if node.power_state in (None, states.POWER_ERROR) else
               'held by another consumer in Placement, or reserved there')
    elif node.reservation:
        why = 'locked by %s' % node.reservation
    elif node.lessee:
        why = 'leased to %s' % node.lessee
    elif node.instance_uuid or node.allocation_id:
        why = 'in use by instance %s' % node.instance_uuid
    else:
        why = 'in provision state "%s"' % node.provision_state
    return 'node %s is %s' % (node.uuid, why)
