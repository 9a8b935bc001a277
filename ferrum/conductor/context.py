# SPDX-License-Identifier: Apache-2.0
"""What every conductor-side operation needs, bundled once per conductor."""

import dataclasses
import datetime
import enum
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Protocol

from oslo_config import cfg

from ferrum.conductor import inflight as inflight_mod
from ferrum.conductor import workers
from ferrum.db import api as db_api
from ferrum.drivers import loader
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.placement import service


class Runner(Protocol):
    """The node work a context offers to tasks and drivers.

    Implemented by :class:`ferrum.conductor.runner.Runner`. The context
    holds it (rather than importing it) because the flows behind it import
    the task manager, which imports this module.
    """

    def start(self, task: Any, verb: str,
              args: Mapping[str, Any] | None) -> None:
        """Start a provision verb on a locked node."""

    def resume(self, task: Any) -> None:
        """End the locked node's wait and continue its flow."""

    def fail(self, task: Any, error: str) -> None:
        """Fail the locked node's wait as the callback timeout does."""

    def each_node(self, ctx: 'ConductorContext', purpose: str,
                  func: Callable[[Any], None], *, columns: Iterable[str],
                  filters: Mapping[str, Any] | None,
                  predicate: Callable[[Any], bool] | None,
                  limit: int | None, shared: bool, workers: int) -> int:
        """Visit this conductor's nodes (see ``ConductorContext``)."""


class Claim(enum.Enum):
    """What claiming one candidate node came to
    (:meth:`AllocationBackend.claim`)."""

    #: The node is the allocation's.
    CLAIMED = 'claimed'
    #: Placement refused the node (another consumer holds it, it is
    #: reserved there, or not synced yet): not tried again for this
    #: allocation, and counted in its ``last_error``.
    REFUSED = 'refused'
    #: ferrum's database did not give it (another allocation or a task
    #: took or locked the node meanwhile); anything claimed elsewhere was
    #: removed.
    TAKEN = 'taken'


class AllocationBackend(Protocol):
    """Where an allocation's claim lives, ``[allocation] backend``.

    Chosen once, when the conductor starts
    (:func:`ferrum.allocation.backends.choose`); every allocation flow
    asks it instead of asking which backend is on. Implemented by
    :class:`ferrum.allocation.backends.DatabaseBackend` (ferrum's database
    is the only claim) and :class:`~ferrum.allocation.backends.
    PlacementBackend` (each allocation is also a Placement consumer,
    claimed there first). The context holds it rather than importing it,
    as it holds the runner: the Placement side imports this module.

    Every method runs on the conductor, outside any database transaction
    unless it says it joins the caller's; all are thread-safe.
    """

    #: Whether each allocation is also a consumer in Placement holding
    #: its node. A claim then calls Placement, so it never runs inside a
    #: database write transaction (no network wait holding the write
    #: lock): the allocation row is committed before the first try. And a
    #: lease's consumer leaves such a node to the allocation's.
    in_placement: bool

    def claim(self, ctx: 'ConductorContext',
              allocation: allocation_obj.Allocation, node_uuid: str,
              reserve: Callable[[], bool]) -> Claim:
        """Claim ``node_uuid`` for ``allocation``; ``reserve()`` is
        ferrum's database claim (the conditional UPDATE), which this calls
        once, and whose False means :attr:`Claim.TAKEN`.

        :raises AllocationGone: as ``reserve`` does.
        :raises ClaimUncertain: the remote fence is away; a claim may have
            been made (the caller fails the allocation and queues its
            release in the same transaction).
        :raises AllocationFailed: the allocation cannot be claimed at all
            (its uuid is taken in the fence); the caller fails it.
        """

    def forget_unrecorded(self, ctx: 'ConductorContext',
                          allocation: allocation_obj.Allocation) -> None:
        """Before an ``allocating`` row is run again (a restart, a take
        over): remove a claim a previous run made but never recorded in
        the database.

        :raises ClaimUncertain: that could not be done; the caller fails
            the allocation as for a claim.
        """

    def claim_active(self, ctx: 'ConductorContext',
                     allocation: allocation_obj.Allocation,
                     node_uuid: str) -> None:
        """Claim the active node of a backfilled allocation (API 1.58),
        just written ``active`` under the node's lock.

        :raises AllocationFailed: the claim failed; the caller deletes
            the allocation.
        """

    def queue_release(self, ctx: 'ConductorContext',
                      allocation_ids: Collection[int]) -> None:
        """Record that these allocations' claims are to be released;
        joins the caller's transaction (the one failing or deleting
        them)."""

    def claims_of(self, ctx: 'ConductorContext', *,
                  allocation_ids: Collection[int] = (),
                  node_id: int | None = None) -> list[str]:
        """The claims to hand to :meth:`released` once the allocations
        ``allocation_ids``, or the one of node ``node_id``, are deleted;
        read before the deletion, which leaves nothing to read them from
        ([] from a backend with no claims elsewhere, which reads
        nothing)."""

    def released(self, ctx: 'ConductorContext',
                 allocation_uuids: Collection[str]) -> None:
        """Release the claims of allocations just deleted (as
        :meth:`claims_of` named them), once their transaction committed;
        what cannot be released now stays queued and is released
        later."""

    def refused_note(self, refused: int) -> str:
        """What to add to a failed allocation's ``last_error`` about the
        ``refused`` nodes :meth:`claim` answered :attr:`Claim.REFUSED` for
        ('' for none)."""


@dataclasses.dataclass(frozen=True)
class ConductorContext:
    """The conductor's shared resources. Built once, after registration.

    :ivar conf: the conductor's configuration (read options at call time).
    :ivar db: the database of this process.
    :ivar host: the conductor's name, written into node reservations.
    :ivar conductor_id: the conductors-table id of this conductor.
    :ivar drivers: the loaded hardware types and interfaces.
    :ivar workers: the bounded pool node operations run on.
    :ivar runner: starts, resumes and iterates node work.
    :ivar allocations: where allocations are claimed.
    :ivar clock: returns "now" as naive UTC; tests inject their own.
    :ivar sleep: waits so many seconds; tests inject their own.
    :ivar inflight: the locks and allocations live threads work on.
    :ivar placement: the Placement handle; without ``[placement]``, its
        null object (:class:`ferrum.placement.service.Off`).
    """

    conf: cfg.ConfigOpts
    db: db_api.Database
    host: str
    conductor_id: int
    drivers: loader.DriverRegistry
    workers: workers.WorkerPool
    runner: Runner
    allocations: AllocationBackend
    clock: Callable[[], datetime.datetime] = base.utcnow
    sleep: Callable[[float], None] = time.sleep
    inflight: inflight_mod.InFlight = dataclasses.field(
        default_factory=inflight_mod.InFlight)
    placement: service.Handle = dataclasses.field(
        default_factory=service.Off)

    def each_node(self, purpose: str, func: Callable[[Any], None], *,
                  columns: Iterable[str] = (),
                  filters: Mapping[str, Any] | None = None,
                  predicate: Callable[[Any], bool] | None = None,
                  limit: int | None = None, shared: bool = True,
                  workers: int = 1) -> int:
        """See :meth:`ferrum.periodic.decorators.Conductor.each_node`."""
        return self.runner.each_node(
            self, purpose, func, columns=columns, filters=filters,
            predicate=predicate, limit=limit, shared=shared, workers=workers)
