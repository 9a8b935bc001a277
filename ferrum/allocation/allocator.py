# SPDX-License-Identifier: Apache-2.0
"""The allocation process: find a node for an allocation and take it.

:func:`create`, in one transaction, inserts the allocation
(``allocating``, stamped with this conductor's id), samples candidates
(:mod:`ferrum.allocation.candidates`) and tries to claim the first few. Most
allocations end there, ``active``, after one write. Otherwise the row is
committed ``allocating`` and :func:`do_allocate` runs on a worker; if no
worker takes it, the allocation is marked ``error`` at once with a message
saying so. With ``[conductor]allocation_wait_timeout = 0`` there are no
first tries: the row is committed ``allocating``, the answer says so and
the whole process runs on a worker, as in Ironic. If the process dies in
between, the row is still ``allocating`` under this conductor's id, so this
conductor resumes it at start-up or another one takes it over
(:mod:`ferrum.allocation.takeover`).
An allocation is therefore never stranded in ``allocating``.

:func:`do_allocate` never raises. One pass samples candidates in the
database, tries a node whose name is the allocation's first, then the
others in random order, and takes the first one whose claim succeeds. A
pass that lost every candidate to other allocations starts again with a
fresh sample (the pool shrank, so this ends); a pass that only met locked
nodes waits ``[conductor]node_locked_retry_interval`` and counts towards
``node_locked_retry_attempts``. Both settings are read at each call.
"""

import logging
import random
import threading
from typing import Any

from oslo_db import exception as db_exc

from ferrum.allocation import candidates as candidates_mod
from ferrum.common import exception
from ferrum.common import plural
from ferrum.conductor import context as context_mod
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj

LOG = logging.getLogger(__name__)

#: Nodes fetched per pass. Enough that concurrent allocations, starting at
#: random places, rarely exhaust each other's samples; small enough that a
#: pass costs the same with any number of nodes.
SAMPLE_SIZE = 32
#: Candidates tried in the transaction that creates the allocation.
_FIRST_TRIES = 3
#: Passes after losing candidates to other allocations. Each such pass
#: means other allocations took nodes, so this only bounds pathological
#: contention.
_MAX_PASSES = 50


def create(ctx: context_mod.ConductorContext, values: dict[str, Any],
           traits: list[str]) -> allocation_obj.Allocation:
    """Insert an allocation and allocate it.

    The first candidates are tried in the transaction that inserts the
    allocation, so a quick allocation costs one write and no thread
    hand-off. If none of them can be taken, the allocation is committed
    ``allocating`` and the full process runs on a worker; this waits up to
    ``[conductor]allocation_wait_timeout`` for its result. A timeout of 0
    asks for Ironic's answer: the committed ``allocating`` row, every try
    on the worker (clients written against Ironic check for it).

    :raises AllocationAlreadyExists: duplicate UUID or name.
    """
    values = dict(values, conductor_affinity=ctx.conductor_id)
    # Read once: the option is mutable, and the answer must match the path.
    wait = ctx.conf.conductor.allocation_wait_timeout
    if not wait:
        return _hand_to_worker(
            ctx, allocation_obj.Allocation.create(ctx.db, values, traits),
            wait)
    requirements = candidates_mod.requirements(
        values.get('resource_class'), traits, values.get('candidate_nodes'),
        values.get('owner'), ctx.conf.lease.guard_time, ctx.clock)
    if ctx.allocations.in_placement:
        # No HTTP inside a write transaction: the row is committed first.
        allocation = allocation_obj.Allocation.create(ctx.db, values, traits)
        if _first_tries_in_placement(ctx, allocation, requirements):
            return allocation
        return _hand_to_worker(ctx, allocation, wait)

    def first_tries(allocation: allocation_obj.Allocation) -> None:
        with ctx.db.writer() as conn:  # the creating transaction
            found = candidates_mod.ordered(conn, requirements,
                                           values.get('name'), _FIRST_TRIES)
        for candidate in found:
            if _claim(ctx, allocation, requirements, candidate):
                return

    try:
        allocation = allocation_obj.Allocation.create(
            ctx.db, values, traits, then=first_tries)
    except db_exc.DBError as exc:
        if isinstance(exc, db_exc.DBDuplicateEntry):
            raise
        # A failed claim statement can abort the whole transaction on
        # PostgreSQL; the allocation then goes the slow way.
        LOG.warning('Allocation: the first claim failed (%s); retrying on '
                    'a worker', exc)
        allocation = allocation_obj.Allocation.create(ctx.db, values, traits)
    if allocation.state == allocation_obj.ACTIVE:
        _log_success(allocation)
        return allocation
    return _hand_to_worker(ctx, allocation, wait)


def _hand_to_worker(ctx: context_mod.ConductorContext,
                    allocation: allocation_obj.Allocation, wait: float
                    ) -> allocation_obj.Allocation:
    """Run :func:`do_allocate` on a worker; the answer is the worker's
    result if it comes within ``allocation_wait_timeout``, else the row as
    it is then (0: as committed, without waiting or reading it again)."""
    # The worker writes to its own copy: the answer may be rendered while
    # the worker still runs.
    working = allocation_obj.Allocation(ctx.db, allocation.snapshot(),
                                        allocation.traits)
    done = threading.Event()
    try:
        ctx.workers.submit(_run, ctx, working, done)
    except exception.TemporaryFailure as exc:
        LOG.warning('Allocation %(alloc)s: no worker to run it: %(error)s',
                    {'alloc': allocation.uuid, 'error': exc})
        allocation.mark_failed(
            ctx.conductor_id,
            'No conductor worker was free to run this allocation (%s); '
            'delete it and try again.' % exc)
        return allocation
    if not wait:
        return allocation
    if done.wait(wait):
        return working  # the worker updated it and is done with it
    return allocation_obj.Allocation.get(ctx.db, allocation.id)


def _first_tries_in_placement(ctx: context_mod.ConductorContext,
                              allocation: allocation_obj.Allocation,
                              requirements: candidates_mod.Requirements
                              ) -> bool:
    """The placement backend's first tries, on the caller's thread;
    True when the allocation is finished (``active``, or ``error`` for an
    outage)."""
    ctx.inflight.allocation_started(allocation.id)
    try:
        with ctx.db.reader() as conn:
            found = candidates_mod.ordered(conn, requirements,
                                           allocation.name, _FIRST_TRIES)
        for candidate in found:
            if _claim(ctx, allocation, requirements, candidate):
                _log_success(allocation)
                return True
    except exception.AllocationGone:
        return True
    except exception.AllocationFailed as exc:
        _fail(ctx, allocation, exc)
        return True
    except Exception as exc:
        # The worker's run handles every failure (and a database outage).
        LOG.warning('Allocation %(alloc)s: the first tries failed '
                    '(%(error)s); retrying on a worker',
                    {'alloc': allocation.uuid, 'error': exc})
    finally:
        ctx.inflight.allocation_ended(allocation.id)
    return False


def _claim(ctx: context_mod.ConductorContext,
           allocation: allocation_obj.Allocation,
           requirements: candidates_mod.Requirements,
           candidate: candidates_mod.Candidate,
           refused: set[int] | None = None) -> bool:
    """Take ``candidate`` through the allocation backend (a node its
    fence refuses is added to ``refused``)."""
    def reserve() -> bool:
        return allocation.claim(
            ctx.conductor_id, candidate.id, candidate.uuid,
            requirements.statements.claim,
            candidates_mod.claim_params(requirements, candidate, allocation))

    outcome = ctx.allocations.claim(ctx, allocation, candidate.uuid, reserve)
    if outcome == context_mod.Claim.REFUSED and refused is not None:
        refused.add(candidate.id)
    return outcome == context_mod.Claim.CLAIMED


def _log_success(allocation: allocation_obj.Allocation) -> None:
    LOG.info('Allocation %(alloc)s took node %(node)s',
             {'alloc': allocation.uuid, 'node': allocation.node_uuid})


def _run(ctx: context_mod.ConductorContext,
         allocation: allocation_obj.Allocation, done: threading.Event) -> None:
    try:
        do_allocate(ctx, allocation)
    finally:
        done.set()


def resume(ctx: context_mod.ConductorContext, allocation_id: int) -> None:
    """Run the process again for an ``allocating`` row we are stamped on."""
    try:
        allocation = allocation_obj.Allocation.get(ctx.db, allocation_id)
    except exception.AllocationNotFound:
        return
    if allocation.state != allocation_obj.ALLOCATING:
        return
    try:
        ctx.allocations.forget_unrecorded(ctx, allocation)
    except exception.AllocationFailed as exc:
        _fail(ctx, allocation, exc)
        return
    do_allocate(ctx, allocation)


def do_allocate(ctx: context_mod.ConductorContext,
                allocation: allocation_obj.Allocation) -> None:
    """Find and take a node for ``allocation``; on failure mark it error.

    While the database is unreachable the allocation can be neither taken
    nor failed: it stays ``allocating`` and is resumed once the database
    is back (:func:`ferrum.conductor.outage.recover`).
    """
    ctx.inflight.allocation_started(allocation.id)
    try:
        _do_allocate(ctx, allocation)
    except exception.DatabaseUnavailable as exc:
        LOG.warning('Allocation %(alloc)s: paused until the database is '
                    'back: %(error)s', {'alloc': allocation.uuid,
                                        'error': exc})
    finally:
        ctx.inflight.allocation_ended(allocation.id)


def _do_allocate(ctx: context_mod.ConductorContext,
                 allocation: allocation_obj.Allocation) -> None:
    try:
        error = _allocate(ctx, allocation)
    except exception.AllocationGone:
        LOG.info('Allocation %s was deleted or taken over while being '
                 'processed', allocation.uuid)
        return
    except exception.DatabaseUnavailable:
        raise
    except exception.AllocationFailed as exc:
        _fail(ctx, allocation, exc)
        return
    except Exception as exc:
        LOG.exception('Allocation %s failed unexpectedly', allocation.uuid)
        error = 'Unexpected error during allocation: %s' % exc
    if error is None:
        _log_success(allocation)
        return
    LOG.error('Allocation %(alloc)s failed: %(error)s',
              {'alloc': allocation.uuid, 'error': error})
    allocation.mark_failed(ctx.conductor_id, error)


def _fail(ctx: context_mod.ConductorContext,
          allocation: allocation_obj.Allocation,
          exc: exception.AllocationFailed) -> None:
    """Fail ``allocation`` for what its backend raised; a claim that may
    have been made is queued for release in the same transaction."""
    error = str(exc.kwargs.get('reason', exc))
    LOG.error('Allocation %(alloc)s failed: %(error)s',
              {'alloc': allocation.uuid, 'error': error})
    with ctx.db.writer():
        allocation.mark_failed(ctx.conductor_id, error)
        if isinstance(exc, exception.ClaimUncertain):
            ctx.allocations.queue_release(ctx, [allocation.id])


def _allocate(ctx: context_mod.ConductorContext,
              allocation: allocation_obj.Allocation) -> str | None:
    """Run the passes; returns None on success, else the error message."""
    conf = ctx.conf.conductor
    attempts = conf.node_locked_retry_attempts
    requirements = candidates_mod.requirements_for(
        allocation, ctx.conf.lease.guard_time, ctx.clock)
    rng = random.Random()
    locked_passes = 0
    #: Nodes Placement refused (placement backend): not tried again.
    refused: set[int] = set()
    for _pass in range(_MAX_PASSES):
        with ctx.db.reader() as conn:
            sampled = candidates_mod.ordered(conn, requirements,
                                             allocation.name, SAMPLE_SIZE,
                                             rng)
            found = [c for c in sampled if c.id not in refused]
            # A short sample is every matching node: all refused, or none.
            if not found and len(sampled) < SAMPLE_SIZE:
                return 'No node matches this allocation: %s%s.' % (
                    candidates_mod.explain(conn, requirements),
                    ctx.allocations.refused_note(len(refused)))
        locked = 0
        for candidate in found:
            if _claim(ctx, allocation, requirements, candidate, refused):
                return None
            locked += _is_locked(ctx, candidate.id)
        if found and locked == len(found):
            locked_passes += 1
            if locked_passes >= attempts:
                return ('Could not reserve a node (%s found): other '
                        'operations held their locks through %s; try '
                        'again later%s.' % (
                            plural.count(len(found), 'suitable node'),
                            plural.count(attempts, 'attempt'),
                            ctx.allocations.refused_note(len(refused))))
            ctx.sleep(conf.node_locked_retry_interval)
    return ('Could not reserve a node: other allocations took every '
            'suitable node found in %d passes; try again%s.' % (
                _MAX_PASSES, ctx.allocations.refused_note(len(refused))))


def _is_locked(ctx: context_mod.ConductorContext, node_id: int) -> int:
    """1 when a task holds the node's lock (a retry may then succeed)."""
    try:
        node = node_obj.Node.get(ctx.db, node_id)
    except exception.NodeNotFound:
        return 0
    return int(node.reservation is not None)
