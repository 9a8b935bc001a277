# SPDX-License-Identifier: Apache-2.0
"""Allocations of dead conductors: taken over by compare-and-set, finished.

Every conductor runs :meth:`AllocationTakeover.check_orphaned_allocations`
every ``[conductor]check_allocations_interval`` seconds (0 disables it). A
conductor is dead when its heartbeat is older than
``[conductor]heartbeat_timeout`` or it stopped. For each ``allocating`` row
stamped with a dead conductor's id, the task tries
:meth:`~ferrum.objects.allocation.Allocation.take_over`; of several live
conductors trying at once exactly one wins, and it runs the allocation
process to ``active`` or ``error``. At start-up a conductor resumes its own
``allocating`` rows the same way (:func:`resume_own`).
"""

import logging
from collections.abc import Collection

from ferrum.allocation import allocator
from ferrum.common import exception
from ferrum.common import plural
from ferrum.conductor import context as context_mod
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import conductor as conductor_obj
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)


class AllocationTakeover:
    """The periodic task that adopts orphaned allocations."""

    @decorators.periodic(
        spacing=lambda conf: conf.conductor.check_allocations_interval)
    def check_orphaned_allocations(
            self, ctx: context_mod.ConductorContext) -> None:
        dead = conductor_obj.list_dead(
            ctx.db, ctx.conf.conductor.heartbeat_timeout)
        for other in dead:
            if other.id == ctx.conductor_id:
                continue
            for allocation_id in allocation_obj.Allocation.ids_allocating(
                    ctx.db, other.id):
                if not allocation_obj.Allocation.take_over(
                        ctx.db, allocation_id, other.id, ctx.conductor_id):
                    continue  # another live conductor won it
                LOG.warning('Took over allocation %(alloc)d of dead '
                            'conductor %(host)s',
                            {'alloc': allocation_id, 'host': other.hostname})
                allocator.resume(ctx, allocation_id)


def resume_own(ctx: context_mod.ConductorContext,
               skip: Collection[int] = ()) -> int:
    """Restart the allocations this conductor left ``allocating``.

    Called at start-up, and after a database outage with ``skip`` = the
    allocations a worker still processes; each goes to a worker, or is
    failed with a clear message when none is free. Returns how many were
    resumed.
    """
    ids = [allocation_id for allocation_id in
           allocation_obj.Allocation.ids_allocating(ctx.db, ctx.conductor_id)
           if allocation_id not in skip]
    for allocation_id in ids:
        try:
            ctx.workers.submit(allocator.resume, ctx, allocation_id)
        except exception.TemporaryFailure as exc:
            with ctx.db.writer():
                allocation_obj.Allocation.fail(
                    ctx.db, allocation_id, ctx.conductor_id,
                    'Could not resume this allocation after a conductor '
                    'restart (%s); delete it and try again.' % exc)
                # A claim the previous run made may be in Placement.
                ctx.allocations.queue_release(ctx, [allocation_id])
    if ids:
        LOG.info('Resumed %s left allocating',
                 plural.count(len(ids), 'allocation'))
    return len(ids)
