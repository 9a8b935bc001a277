# SPDX-License-Identifier: Apache-2.0
"""The two allocation backends, and the one choice between them.

The interface, with the contract of each method, is
:class:`ferrum.conductor.context.AllocationBackend`; the conductor picks
an implementation once at start-up with :func:`choose`, from
``[allocation] backend``, and every flow calls it through
``ctx.allocations``:

- :class:`DatabaseBackend`: ferrum's database is the only claim, so there
  is nothing to claim, release or repair anywhere else.
- ``PlacementBackend``, in :mod:`ferrum.allocation.placement_backend`:
  each allocation is also a Placement consumer holding its node's unit,
  claimed there first (its module says how).
"""

from collections.abc import Callable, Collection

from oslo_config import cfg

from ferrum.allocation import placement_backend
from ferrum.conductor import context as context_mod
from ferrum.conf import allocation as allocation_conf
from ferrum.conf import placement as placement_conf
from ferrum.objects import allocation as allocation_obj
from ferrum.placement import errors

Claim = context_mod.Claim
Context = context_mod.ConductorContext


class DatabaseBackend(context_mod.AllocationBackend):
    """``[allocation] backend = database``: the conditional UPDATE of the
    node is the claim, and deleting the allocation releases it."""

    in_placement = False

    def claim(self, ctx: Context, allocation: allocation_obj.Allocation,
              node_uuid: str, reserve: Callable[[], bool]) -> Claim:
        return Claim.CLAIMED if reserve() else Claim.TAKEN

    def forget_unrecorded(self, ctx: Context,
                          allocation: allocation_obj.Allocation) -> None:
        pass  # a claim not in the database was never made

    def claim_active(self, ctx: Context,
                     allocation: allocation_obj.Allocation,
                     node_uuid: str) -> None:
        pass  # the active allocation's row is the claim

    def queue_release(self, ctx: Context,
                      allocation_ids: Collection[int]) -> None:
        pass

    def claims_of(self, ctx: Context, *,
                  allocation_ids: Collection[int] = (),
                  node_id: int | None = None) -> list[str]:
        return []

    def released(self, ctx: Context,
                 allocation_uuids: Collection[str]) -> None:
        pass

    def refused_note(self, refused: int) -> str:
        return ''  # nothing but the database refuses a node


def choose(conf: cfg.ConfigOpts) -> context_mod.AllocationBackend:
    """The backend ``[allocation] backend`` names: the conductor's one
    choice, at start-up.

    :raises ConfigInvalid: ``placement`` without ``[placement]``.
    """
    if not allocation_conf.through_placement(conf):
        return DatabaseBackend()
    if not placement_conf.enabled(conf):
        raise errors.ConfigInvalid(reason=(
            '[allocation] backend = placement claims every allocation in '
            'Placement, but [placement] auth_type is not set: configure '
            '[placement] (auth_type and its options), or set [allocation] '
            'backend = database.'))
    return placement_backend.PlacementBackend()
