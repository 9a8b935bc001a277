# SPDX-License-Identifier: Apache-2.0
"""The lease engine: a periodic task on every conductor.

Each run, in this order:

1. adopts the ``starting``/``ending`` leases of conductors whose heartbeat
   stopped (compare-and-set on ``conductor_affinity``; one live conductor
   wins each), so a transition cut short by a crash is finished;
2. claims leases due to end (``active`` or ``error``, end reached) and
   moves them to ``ending``; ends come before starts, as in Blazar;
3. claims leases due to start (``pending``, start reached) and starts
   them;
4. carries on its own ``starting`` and ``ending`` leases;
5. fires due ``before_end`` events (once each, whoever tries).

Claims are conditional UPDATEs on the status, one per batch of leases:
of several conductors running at once, exactly one moves each lease, and
it works on it alone. Batches also read the nodes of many leases at once
and give back every free node of their ending leases in one transaction.
Every step of a transition is idempotent, so the conductor that adopts it
simply runs it again.

**Start** (:mod:`ferrum.leases.start`). Each node gets ``lessee`` = the
lease's project; from then on allocations whose ``owner`` is that project
may take it (Ironic's owner/lessee rule); others may not
(:func:`ferrum.allocation.candidates.lease_filter`). A node still held by
someone else, no longer matching the lease, or gone, is handled by
``[lease] busy_node_policy``; the lease goes active only holding every
node it booked.

**End**, per node: first the project loses its rights, in the claim's
transaction (the node's lessee is cleared,
:func:`ferrum.objects.lease.ends.revoke_in`: a lessee that keeps
the node from coming back, by protecting it, putting it in maintenance or
redeploying it, keeps no rights meanwhile), then the lease's allocations
are released and deployed nodes undeployed (so they are cleaned), the
others cleaned as well (:mod:`ferrum.leases.wipe`: what the lessee wrote
is erased before anyone else has the node), and once the node is
``available`` what the lessee left in ``instance_info`` and ``extra`` is
cleared and the lease stops holding it. The lease is ``ended`` when every
node is back; until then ``last_error`` says what it waits for.
"""

import datetime
import functools
import logging
import random
from collections.abc import Iterator, Sequence
from typing import Any

from ferrum.allocation import release
from ferrum.common import exception
from ferrum.common import lease_statuses as statuses
from ferrum.common import metrics
from ferrum.common import plural
from ferrum.common import state_machine
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import provisioning
from ferrum.leases import start
from ferrum.leases import wipe
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import lease as lease_obj
from ferrum.objects.lease import ends as lease_ends
from ferrum.objects.lease import nodes as lease_nodes
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)
_TABLE = lease_obj.TABLE
#: Leases claimed, read and ended together, and the most nodes they may
#: have: a batch costs a few statements, where one lease at a time cost
#: 7 round trips a lease (1,000 leases ending at once: 4.7 s on
#: PostgreSQL).
_BATCH = 100
_BATCH_NODES = 2000


class LeaseEngine:
    """The periodic task; see the module docstring."""

    @decorators.periodic(spacing=lambda conf: conf.lease.check_interval,
                         run_immediately=True)
    def run_leases(self, ctx: context_mod.ConductorContext) -> None:
        with metrics.LEASE_ENGINE_SECONDS.time():
            run(ctx)


def run(ctx: context_mod.ConductorContext) -> None:
    """One run of the engine (see the module docstring)."""
    me = ctx.conductor_id
    _adopt_orphans(ctx)
    now = ctx.clock()
    for batch in _claim(ctx, [_TABLE.c.end_at <= now], 'end',
                        functools.partial(lease_ends.revoke_in, now=now,
                                          db=ctx.db)):
        for lease in batch:
            LOG.info('Lease %(lease)s: ending (its end %(end)s is reached)',
                     {'lease': lease.uuid, 'end': lease.end_at})
    started: set[int] = set()
    for batch in _claim(ctx, [_TABLE.c.start_at <= now], 'start'):
        _start_all(ctx, batch)
        started.update(lease.id for lease in batch)
    # Those still starting wait for the next run (Placement away).
    _start_all(ctx, [lease for lease in lease_obj.Lease.matching(ctx.db, [
        _TABLE.c.status == statuses.STARTING,
        _TABLE.c.conductor_affinity == me]) if lease.id not in started])
    for batch in _batches(lease_obj.Lease.matching(ctx.db, [
            _TABLE.c.status == statuses.ENDING,
            _TABLE.c.conductor_affinity == me])):
        end_all(ctx, batch)
    _before_end(ctx, now)
    ctx.placement.create_classes()
    ctx.placement.delete_classes()


def _batches(leases: Sequence[lease_obj.Lease]
             ) -> Iterator[list[lease_obj.Lease]]:
    """``leases`` in runs of at most :data:`_BATCH` leases and
    :data:`_BATCH_NODES` nodes (one run is one claim, one read of the
    rows, one give-back)."""
    batch: list[lease_obj.Lease] = []
    nodes = 0
    for lease in leases:
        if batch and (len(batch) >= _BATCH
                      or nodes + lease.count > _BATCH_NODES):
            yield batch
            batch, nodes = [], 0
        batch.append(lease)
        nodes += lease.count
    if batch:
        yield batch


def _claim(ctx: context_mod.ConductorContext, where: list[Any],
           event: str, then: lease_obj.ClaimHook | None = None
           ) -> Iterator[list[lease_obj.Lease]]:
    """Fire ``event`` on the due leases, a batch at a time, yielding each
    batch this conductor wins before claiming the next: conductors
    running at once share the leases instead of one claiming them all.

    :param then: run in each claim's transaction, on the leases it won.
    """
    sources = sorted(statuses.sources(event))
    leases = lease_obj.Lease.matching(
        ctx.db, [_TABLE.c.status.in_(sources), *where])
    # Conductors running at once start from different places.
    random.shuffle(leases)
    for batch in _batches(leases):
        # The statuses may be stale by now: the conditional UPDATE decides.
        won = lease_obj.Lease.claim(ctx.db, [lease.id for lease in batch],
                                    event, ctx.conductor_id, where, then)
        if won:
            yield won


def _adopt_orphans(ctx: context_mod.ConductorContext) -> None:
    silent = {c.id for c in conductor_obj.list_silent(
        ctx.db, ctx.conf.conductor.heartbeat_timeout)} - {ctx.conductor_id}
    if not silent:
        return
    for lease in lease_obj.Lease.matching(ctx.db, [
            _TABLE.c.status.in_(sorted(statuses.TRANSITIONAL)),
            _TABLE.c.conductor_affinity.in_(sorted(silent))]):
        dead = lease.conductor_affinity
        if lease.take_over(dead, ctx.conductor_id):
            LOG.warning('Lease %(lease)s: took over "%(status)s" from dead '
                        'conductor %(dead)s',
                        {'lease': lease.uuid, 'status': lease.status,
                         'dead': dead})


# ---- start ------------------------------------------------------------------

def _start_all(ctx: context_mod.ConductorContext,
               leases: Sequence[lease_obj.Lease]) -> None:
    for batch in _batches(leases):
        rows = lease_nodes.node_rows_of(ctx.db,
                                          [lease.id for lease in batch])
        for lease in batch:
            start.start(ctx, lease, rows[lease.id])


# ---- end --------------------------------------------------------------------

def end_all(ctx: context_mod.ConductorContext,
            leases: Sequence[lease_obj.Lease]) -> None:
    """Advance the end of ``leases`` (``ending``, carried by this
    conductor), node by node; idempotent.

    The free nodes of all of them go back in one transaction, which also
    ends the leases that had nothing else to wait for.
    """
    # The claim took the rights away; again, in case a failed start of
    # the project's next lease gave them back.
    lease_ends.revoke(ctx.db, [lease.id for lease in leases], ctx.clock())
    rows = lease_nodes.node_rows_of(ctx.db, [lease.id for lease in leases])
    steps = {lease.id: ctx.placement.leases_for(lease) for lease in leases}
    waiting: dict[int, list[str]] = {}
    ready: list[lease_nodes.LeaseNodeRow] = []
    # Free but not cleaned yet: they pass on to the project's next lease
    # as they are, or are cleaned.
    unwiped: list[lease_nodes.LeaseNodeRow] = []
    never_given = []
    for lease in leases:
        waits = waiting[lease.id] = []
        released = steps[lease.id].end_waits_for(rows[lease.id])
        if released is not None:
            # Nothing goes back before Placement let go of it.
            waits.append(released)
            continue
        for row in rows[lease.id]:
            if not _was_given(row, lease.project):
                # Never given to the lessee (its start failed): nothing to
                # undo.
                never_given.append(row.id)
            elif _is_free(row):
                (unwiped if wipe.needed(ctx.conf, row) else ready
                 ).append(row)
            else:
                try:
                    waits.append(_end_node(ctx, lease, row))
                except exception.FerrumException as exc:
                    waits.append('node %s: %s' % (row.node_uuid, exc))
    with ctx.db.writer():
        lease_ends.drop_rows(ctx.db, never_given)
        back = lease_ends.give_back_all(ctx.db, ready, ctx.clock(), unwiped)
        for row in ready:
            if row.id not in back:
                waiting[row.lease_id].append(
                    'node %s, which changed meanwhile' % row.node_uuid)
        to_wipe = [row for row in unwiped if row.id not in back]
        gone = [row for row in ready + unwiped if row.id in back]
        for lease in leases:
            # Their reservation inventory goes with them.
            steps[lease.id].push(
                row.node_uuid for row in gone if row.lease_id == lease.id)
        wiping = {row.lease_id for row in to_wipe}
        done = lease_obj.Lease.finish(
            ctx.db, [lease for lease in leases if not waiting[lease.id]
                     and lease.id not in wiping], 'done', ctx.conductor_id)
    ctx.placement.hand_over(leases, gone)
    # After the commit: a cleaning takes the node's lock and a worker.
    for row, wait in wipe.start_all(
            ctx, {lease.id: lease for lease in leases}, to_wipe):
        waiting[row.lease_id].append(wait)
    for lease in leases:
        if lease.id in done:
            LOG.info('Lease %(lease)s: ended, its %(nodes)s back', {
                'lease': lease.uuid, 'nodes': plural.count(
                    len(rows[lease.id]), 'node is', 'nodes are')})
        elif waiting[lease.id]:
            lease.record_error('Ending: waiting for %s.'
                               % '; '.join(waiting[lease.id]))


def _was_given(row: lease_nodes.LeaseNodeRow, project: str) -> bool:
    """The lease's start gave the node to ``project``: it is still its
    lessee (the project's next lease has it too), or the end took it away
    (:func:`lease_ends.revoke`) and nobody set another lessee since."""
    return bool(row.lessee == project
                or (row.given and row.lessee is None))


def _is_free(row: lease_nodes.LeaseNodeRow) -> bool:
    """Available and unused: the node can go back at once."""
    return (row.provision_state == states.AVAILABLE
            and not row.maintenance and row.reservation is None
            and row.allocation_id is None and row.instance_uuid is None)


def _end_node(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
              row: lease_nodes.LeaseNodeRow) -> str:
    """One step towards giving the node back; what the lease waits for."""
    uuid, state = row.node_uuid, row.provision_state
    if row.reservation:
        return 'node %s, locked by %s' % (uuid, row.reservation)
    if row.allocation_id is not None and (
            row.maintenance or state in states.UPDATE_ALLOWED_STATES):
        LOG.info('Lease %(lease)s: releasing the allocation of node %(node)s',
                 {'lease': lease.uuid, 'node': uuid})
        release.destroy(ctx, row.allocation_id)
        return 'node %s, its allocation released' % uuid
    if row.maintenance:
        return 'node %s, in maintenance' % uuid
    if state_machine.is_allowed(state, 'delete'):
        LOG.info('Lease %(lease)s: undeploying node %(node)s (%(state)s) so '
                 'that it is cleaned', {'lease': lease.uuid,
                                        'node': uuid, 'state': state})
        provisioning.do_provisioning_action(ctx, row.node_id, 'undeploy',
                                            wait=False)
        # Its tear-down cleans it: no other cleaning once it is back.
        lease_ends.mark_wiped(ctx.db, [row.id])
        return 'node %s, being undeployed and cleaned' % uuid
    if state == states.MANAGEABLE:
        provisioning.do_provisioning_action(ctx, row.node_id, 'provide',
                                            wait=False)
        lease_ends.mark_wiped(ctx.db, [row.id])
        return 'node %s, being cleaned' % uuid
    return 'node %s, in provision state "%s"' % (uuid, state)


# ---- before_end -------------------------------------------------------------

def _before_end(ctx: context_mod.ConductorContext,
                now: datetime.datetime) -> None:
    for lease in lease_obj.Lease.matching(ctx.db, [
            _TABLE.c.status == statuses.ACTIVE,
            _TABLE.c.before_end_fired_at.is_(None),
            _TABLE.c.before_end_at <= now]):
        if lease.fire_before_end(now):
            LOG.warning('Lease %(lease)s of project %(project)s ends at '
                        '%(end)s (before_end event)',
                        {'lease': lease.uuid, 'project': lease.project,
                         'end': lease.end_at})
