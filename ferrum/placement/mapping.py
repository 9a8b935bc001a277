# SPDX-License-Identifier: Apache-2.0
"""What a node looks like in Placement: nova-compatible, so that a cloud can
move from nova's Ironic driver to ferrum and keep its providers' meaning.

- The provider's uuid and name are the node's UUID (a rename changes
  nothing in Placement).
- Its inventory is one unit of ``CUSTOM_<normalised resource class>``
  (total, min_unit, max_unit and step_size 1, ratio 1.0); a node without
  a resource class has no inventory.
- ``reserved`` is 1 whenever the node cannot be allocated (see
  :func:`reserved`), so nothing in Placement claims it; a freed node is
  offered again only once it is ``available``, that is after cleaning
  (nova's bug 1974070 happened because it was offered while cleaning).
- Its traits are the node's traits plus :data:`MANAGED`, the marker that
  says ferrum manages the provider.
- While a lease holds the node (from its start to the node's return), it
  also has one unit of the lease's class ``CUSTOM_RESERVATION_<UUID>``
  (see :mod:`ferrum.placement.reservations`), reserved by the same rule,
  and always reserved once the lease is ending: only consumers that know
  the lease claim it, and nobody new after its end.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ferrum.common import states
from ferrum.objects import placement_queue

#: The trait on every provider ferrum manages, and only on those.
MANAGED = 'CUSTOM_FERRUM_MANAGED'
#: Traits that mark a provider as another service's (nova sets OWNER_NOVA).
OWNER_PREFIX = 'OWNER_'
#: Node columns the provider depends on: a change to any of them is queued.
COLUMNS = placement_queue.COLUMNS

_NOT_ALNUM = re.compile('[^A-Z0-9]+')


def resource_class_name(resource_class: str) -> str:
    """``CUSTOM_`` plus the class upper-cased, non-alphanumeric runs as ``_``
    (nova's ``normalize_rc_name``: "baremetal.gold" is CUSTOM_BAREMETAL_GOLD).
    """
    return 'CUSTOM_' + _NOT_ALNUM.sub('_', resource_class.upper())


def reserved(node: Mapping[str, Any], claims: bool = False) -> bool:
    """Whether nothing may claim the node now.

    True when it is not ``available``, in maintenance, its power state is
    unknown or an error, an instance or an allocation holds it, or it is
    retired.

    With ``claims`` (``[allocation] backend = placement``) a node an
    allocation holds is not reserved while it is ``available``: the
    allocation's consumer already holds the node's only unit, so nothing
    else can claim it, and leaving the inventory alone spares a PUT (and
    a provider generation bump that fails concurrent claimers) per
    allocation. Once it leaves ``available`` (deploying, active,
    cleaning...) it is reserved as without ``claims``: one PUT per
    deployment, and a node in use whose consumer is missing (an
    allocation made with the database backend, a crash between a
    backfill's two writes) is still fenced. When the allocation goes, its
    release pushes the provider first (:mod:`ferrum.placement.releases`),
    so a node still cleaning is reserved before its unit is free.
    """
    if (claims and node['allocation_id'] is not None
            and node['provision_state'] == states.AVAILABLE):
        return False
    return (node['provision_state'] != states.AVAILABLE
            or bool(node['maintenance'])
            or node['power_state'] in (None, states.POWER_ERROR)
            or node['instance_uuid'] is not None
            or node['allocation_id'] is not None
            or bool(node['retired']))


def _unit(reserved: int) -> dict[str, Any]:
    return {'total': 1, 'reserved': reserved, 'min_unit': 1, 'max_unit': 1,
            'step_size': 1, 'allocation_ratio': 1.0}


@dataclasses.dataclass(frozen=True)
class Provider:
    """The provider a node should have.

    :ivar reservation: the class of the lease holding the node
        (``CUSTOM_RESERVATION_<UUID>``), if any.
    """

    uuid: str
    resource_class: str | None
    reserved: int
    traits: frozenset[str]
    reservation: str | None = None
    reservation_reserved: int = 1

    @property
    def inventories(self) -> dict[str, dict[str, Any]]:
        if self.resource_class is None:
            return {}
        found = {self.resource_class: _unit(self.reserved)}
        if self.reservation is not None:
            found[self.reservation] = _unit(self.reservation_reserved)
        return found

    def unreserved(self) -> Provider:
        """This provider with nothing reserved."""
        return dataclasses.replace(self, reserved=0, reservation_reserved=0)


@dataclasses.dataclass(frozen=True)
class Holder:
    """The lease holding a node in Placement."""

    reservation: str
    ending: bool


def provider_of(node: Mapping[str, Any], traits: Iterable[str],
                claims: bool = False, holder: Holder | None = None
                ) -> Provider:
    """The provider of ``node`` (a row with :data:`COLUMNS`); ``claims``
    as for :func:`reserved`; ``holder`` the lease holding it, if any."""
    rc = node['resource_class']
    held = int(reserved(node, claims))
    return Provider(
        uuid=node['uuid'],
        resource_class=resource_class_name(rc) if rc else None,
        reserved=held, traits=frozenset(traits) | {MANAGED},
        reservation=holder.reservation if holder and rc else None,
        reservation_reserved=int(held or holder is None or holder.ending))


def same_inventories(current: Mapping[str, Mapping[str, Any]],
                     wanted: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether Placement's inventories already are ``wanted`` (comparing
    only the fields ferrum sets)."""
    if set(current) != set(wanted):
        return False
    return all(float(current[rc].get(key, -1)) == float(value)
               for rc, fields in wanted.items()
               for key, value in fields.items())


def foreign_owner(traits: Iterable[str]) -> str | None:
    """The owner trait another service set on a provider, if any."""
    return next((t for t in sorted(traits) if t.startswith(OWNER_PREFIX)),
                None)
