# SPDX-License-Identifier: Apache-2.0
"""The placement allocation backend: every allocation is also a consumer in
OpenStack Placement, so that nova, Blazar or another ferrum sharing the
nodes never hand out a node ferrum gave away, nor ferrum theirs.

On with ``[allocation] backend = placement``: :class:`PlacementBackend`,
the :class:`ferrum.conductor.context.AllocationBackend` that
:func:`ferrum.allocation.backends.choose` picks for it. Its failures reach
the allocator as the interface's exceptions only: an outage as
:class:`~ferrum.common.exception.ClaimUncertain` (the allocation fails
and its consumer's release is queued with the failure), a uuid another
consumer has as :class:`~ferrum.common.exception.AllocationFailed`.

The claim. The allocation process picks candidates with ferrum's own
filters (:mod:`ferrum.allocation.candidates`: fast, and they explain a
miss), then for each one claims in Placement first, because Placement is
the fence every other service honours: a new consumer named after the
allocation (one ``POST /allocations`` through the one consumer writer,
:class:`ferrum.placement.resources.consumers.Writer`) with one unit of
the node's ``CUSTOM_<RC>`` class and ``consumer_generation: null`` (only
a new consumer). Then it reserves the
node in ferrum's database (the same conditional UPDATE as the database
backend); if that fails, the claim is removed before the next candidate
is tried. A node Placement refuses (someone else holds its unit, or it is
reserved there) is skipped and counted in ``last_error``.

Projects and users. The consumer's project is the allocation's owner, or
``[allocation] default_project``; its user is always ``[allocation]
default_user``, which marks ferrum's consumers for the audit. The
microversion stays 1.28 (the lowest ferrum needs): consumer types came at
1.38 and are not needed for anything ferrum does.

Outages. Placement unreachable during a claim fails the allocation at once
(``error``, with a ``last_error`` saying so) and queues its consumer's
release, in case the claim reached Placement before the answer was lost.
Releases are queued in the transaction that deletes an allocation and
done at once when Placement answers, later by the sync worker
(:mod:`ferrum.placement.releases`). While the sync worker knows
Placement is away, claims fail and releases are queued without a call
(no timeout waited for on the API's path).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

from ferrum.common import exception
from ferrum.conductor import context as context_mod
from ferrum.objects import allocation as allocation_obj
from ferrum.placement import claims
from ferrum.placement import errors
from ferrum.placement import releases
from ferrum.placement import service

LOG = logging.getLogger(__name__)
Claim = context_mod.Claim
Context = context_mod.ConductorContext


def _placement(ctx: context_mod.ConductorContext) -> service.PlacementService:
    # choose() picks this backend only with [placement] configured.
    if not isinstance(ctx.placement, service.PlacementService):
        raise RuntimeError(  # pragma: no cover - choose() checks
            'the placement allocation backend needs [placement]')
    return ctx.placement



def _refused(node_uuid: str, consumer: str, exc: Exception) -> bool:
    LOG.debug('Node %(node)s: Placement refused consumer %(alloc)s: '
              '%(error)s', {'node': node_uuid, 'alloc': consumer,
                            'error': exc})
    return False


def place(ctx: context_mod.ConductorContext, consumer: str, node_uuid: str,
          resource_class: str | None, owner: str | None) -> bool:
    """Claim ``node_uuid``'s unit for new consumer ``consumer`` (taken
    from a running lease's consumer when one holds the node: see
    :func:`claims.claim`); False when Placement refused the node.

    A lost answer is never retried (it fails the allocation), so a
    consumer of that uuid that exists already is not ours to take:
    another service's, or a user-chosen uuid that collides.

    :raises ConsumerExists: see above.
    :raises PlacementUnavailable: Placement is away.
    """
    placement = _placement(ctx)
    placement.check_up()
    try:
        claims.claim(placement.pusher, consumer, node_uuid,
                        resource_class, owner)
    except errors.ConsumerTaken as exc:
        # The user named is the consumer's, not the lease consumer's.
        raise errors.ConsumerExists(
            consumer, exc.user if exc.uuid == consumer else None) from exc
    except (errors.Busy, errors.PlacementRefused) as exc:
        # Someone else holds the node's unit, or it is reserved; no
        # provider or no such class on it yet (the sync is behind); or
        # the consumers kept changing.
        return _refused(node_uuid, consumer, exc)
    return True


def _claim(ctx: context_mod.ConductorContext,
           allocation: allocation_obj.Allocation, node_uuid: str,
           reserve: Callable[[], bool]) -> Claim:
    """Placement first, then ``reserve()`` (ferrum's database claim).

    :raises PlacementUnavailable: Placement is away.
    :raises ConsumerExists: see :func:`place`.
    :raises AllocationGone: as ``reserve`` does; the claim was removed,
        unless another conductor took the allocation over meanwhile.
    """
    if not place(ctx, allocation.uuid, node_uuid, allocation.resource_class,
                 allocation.owner):
        return Claim.REFUSED
    try:
        if reserve():
            return Claim.CLAIMED
    except exception.AllocationGone:
        if not _taken_over(ctx, allocation.id):
            _forget_or_queue(ctx, allocation.uuid)
        raise
    except BaseException:
        _forget_or_queue(ctx, allocation.uuid)
        raise
    forget(ctx, allocation.uuid)
    return Claim.TAKEN


def _forget_or_queue(ctx: context_mod.ConductorContext,
                     consumer: str) -> None:
    try:
        forget(ctx, consumer)
    except errors.PlacementUnavailable:
        releases.record(ctx.db, [consumer])


def _taken_over(ctx: context_mod.ConductorContext,
                allocation_id: int) -> bool:
    """Whether another conductor runs the allocation now.

    This conductor was declared dead while its claim was in flight: the
    consumer of that uuid may already be the new owner's claim (the new
    owner removed ours when it resumed the row), so it is left to the new
    owner. If our claim survived instead, the new owner's claim is
    refused (errors.ConsumerExists) and the allocation fails; its deletion, or
    the audit (consumer-orphan), removes the claim.
    """
    try:
        current = allocation_obj.Allocation.get(ctx.db, allocation_id)
    except exception.AllocationNotFound:
        return False
    return (current.state in (allocation_obj.ALLOCATING,
                              allocation_obj.ACTIVE)
            and current.conductor_affinity != ctx.conductor_id)


def forget(ctx: context_mod.ConductorContext, consumer: str) -> None:
    """Remove the claim of an allocation that holds no node (if it is
    ferrum's: see :func:`claims.release`).

    :raises PlacementUnavailable: Placement is away.
    """
    placement = _placement(ctx)
    placement.check_up()
    claims.release(placement.pusher, consumer)


def outage_error(exc: Exception) -> str:
    return ('Placement could not be reached, so no node was claimed '
            '([allocation] backend = placement): %s. Create the allocation '
            'again once Placement answers.' % exc)


def _uncertain(ctx: context_mod.ConductorContext,
               exc: Exception) -> exception.ClaimUncertain:
    """An outage during a claim, as the interface's exception (and told to
    the sync thread, so that later claims fail at once)."""
    _placement(ctx).failed(exc)
    return exception.ClaimUncertain(reason=outage_error(exc))


def backfill_claim(ctx: context_mod.ConductorContext,
                   allocation: allocation_obj.Allocation,
                   node_uuid: str) -> None:
    """Claim an already active node for a backfilled allocation (1.58).

    The node is in use, so its provider is reserved and nobody can claim
    it: it is unreserved for the claim and reserved again at once
    (:func:`claims.claim_in_use`). The allocation was written first,
    under the node's lock, so a crash anywhere leaves an active node
    with an allocation: reserved by the sync thread's push or the
    reconcile, its consumer reported missing by the audit.

    :raises AllocationFailed: Placement refused the claim or is away, or
        anything else went wrong; the caller deletes the allocation.
    """
    placement = _placement(ctx)

    def claim_once() -> bool:
        return place(ctx, allocation.uuid, node_uuid,
                     allocation.resource_class, allocation.owner)

    try:
        placement.check_up()
        if claims.claim_in_use(placement.pusher, node_uuid, claim_once):
            return
        reason = ('Placement refused to give node %s to its consumer '
                  '(another consumer holds it)' % node_uuid)
    except errors.PlacementUnavailable as exc:
        placement.failed(exc)
        reason = outage_error(exc)
    except errors.ConsumerExists as exc:
        reason = str(exc)
    except Exception as exc:
        LOG.exception('Node %(node)s: the Placement claim of backfilled '
                      'allocation %(alloc)s failed unexpectedly',
                      {'node': node_uuid, 'alloc': allocation.uuid})
        reason = ('the claim of node %s in Placement failed unexpectedly: '
                  '%s' % (node_uuid, exc))
    raise exception.AllocationFailed(reason=reason)


class PlacementBackend(context_mod.AllocationBackend):
    """``[allocation] backend = placement``: Placement first, then the
    database (see the module docstring)."""

    in_placement = True

    def claim(self, ctx: Context, allocation: allocation_obj.Allocation,
              node_uuid: str, reserve: Callable[[], bool]) -> Claim:
        try:
            return _claim(ctx, allocation, node_uuid, reserve)
        except errors.PlacementUnavailable as exc:
            raise _uncertain(ctx, exc) from exc
        except errors.ConsumerExists as exc:
            raise exception.AllocationFailed(reason=str(exc)) from exc

    def forget_unrecorded(self, ctx: Context,
                          allocation: allocation_obj.Allocation) -> None:
        try:
            forget(ctx, allocation.uuid)
        except errors.PlacementUnavailable as exc:
            raise _uncertain(ctx, exc) from exc

    def claim_active(self, ctx: Context,
                     allocation: allocation_obj.Allocation,
                     node_uuid: str) -> None:
        backfill_claim(ctx, allocation, node_uuid)

    def queue_release(self, ctx: Context,
                      allocation_ids: Collection[int]) -> None:
        releases.record(ctx.db, allocation_obj.uuids_by_id(
            ctx.db, list(allocation_ids)).values())

    def claims_of(self, ctx: Context, *,
                  allocation_ids: Collection[int] = (),
                  node_id: int | None = None) -> list[str]:
        # An allocation's consumer is named by its uuid.
        uuids = list(allocation_obj.uuids_by_id(
            ctx.db, list(allocation_ids)).values())
        if node_id is not None:
            held = allocation_obj.Allocation.get_by_node(ctx.db, node_id)
            uuids += [] if held is None else [held.uuid]
        return uuids

    def released(self, ctx: Context,
                 allocation_uuids: Collection[str]) -> None:
        # Their release rows were written with the deletion; Placement
        # away leaves them to the sync worker.
        _placement(ctx).release_now(list(allocation_uuids))

    def refused_note(self, refused: int) -> str:
        if not refused:
            return ''
        one = refused == 1
        return ('; Placement refused %d node%s (another consumer holds %s, '
                '%s reserved there, or %s not synced there yet)' % (
                    refused, '' if one else 's', 'it' if one else 'them',
                    'it is' if one else 'they are',
                    'it is' if one else 'they are'))
