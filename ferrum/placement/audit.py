# SPDX-License-Identifier: Apache-2.0
"""Comparing ferrum's nodes with Placement's providers, node by node.

Two depths. The reconcile's shallow look costs one or two listings of
providers whatever the number of nodes: a provider whose generation is the
one ferrum recorded after its last write, for a node whose wanted provider
is the one recorded, cannot have drifted (every write to a provider bumps
its generation). The audit command's deep look reads every provider's
inventories and traits and names each difference, like ``nova-manage
placement audit``.

A managed provider without a node is an orphan only when the node is
*confirmed* gone: looked up by UUID in the database, not merely missing
from a listing (nova deleted live providers when a listing came back
short, bug 1853009).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from ferrum.db import api as db_api
from ferrum.objects import node as node_obj
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import mapping
from ferrum.placement import records
from ferrum.placement import sync
from ferrum.placement.resources import providers as providers_res


class Drift(NamedTuple):
    """One difference between ferrum and Placement, whichever audit found
    it: a node's provider (here), an allocation's consumer
    (:mod:`~ferrum.placement.consumer_audit`, ``consumer`` set) or a
    lease's consumer or class (:mod:`~ferrum.placement.lease_audit`,
    ``lease_uuid`` set)."""

    #: The node it concerns (None for a lease's class).
    node_uuid: str | None
    kind: str
    detail: str
    #: Whether ``--heal`` repairs it (a clash needs an operator).
    repairable: bool = True
    consumer: str | None = None
    lease_uuid: str | None = None

    def line(self) -> str:
        """How ``ferrum-placement audit`` prints it."""
        if self.lease_uuid is not None:
            return 'lease %s %s: %s' % (self.lease_uuid, self.kind,
                                        self.detail)
        return '%s %s: %s' % (self.node_uuid, self.kind, self.detail)


def _confirmed_gone(db: db_api.Database, uuid: str) -> bool:
    return not node_obj.Node.list_columns(db, ['id'], {'uuid_in': [uuid]})


def drift(pusher: sync.Pusher, deep: bool = True) -> list[Drift]:
    """Every difference between ferrum and Placement (see the docstring),
    as ``pusher`` wants the providers (its ``claims_allocations``).

    :raises PlacementUnavailable: when Placement cannot be read.
    """
    db, client = pusher.db, pusher.client
    wanted = pusher.desired_many(None)
    providers = providers_res.listing(client)
    try:
        managed = providers_res.listing(client, required=mapping.MANAGED)
    except errors.PlacementRefused:
        # 400 "no such trait": nothing was ever marked, nothing is managed.
        managed = {}
    found: list[Drift] = []
    if deep:
        for uuid in sorted(wanted):
            found.extend(_deep(client, db, wanted[uuid],
                               present=uuid in providers))
    else:
        known = records.all_records(db)
        for uuid, provider in sorted(wanted.items()):
            record = known.get(uuid)
            if uuid not in providers:
                found.append(Drift(uuid, 'missing', 'no resource provider'))
            elif record is None or not record.matches(provider) or (
                    record.generation != providers[uuid]):
                found.append(Drift(uuid, 'changed',
                                   'provider or node changed since the last '
                                   'push'))
    for uuid in sorted(set(managed) - set(wanted)):
        if _confirmed_gone(db, uuid):
            found.append(Drift(uuid, 'orphan', 'managed provider of a node '
                               'that no longer exists'))
    return found


def _deep(client: client_mod.PlacementClient, db: db_api.Database,
          provider: mapping.Provider, present: bool) -> Iterator[Drift]:
    uuid = provider.uuid
    current = providers_res.read(client, uuid) if present else None
    if current is None:
        yield Drift(uuid, 'missing', 'no resource provider')
        return
    _generation, inventories, traits = current
    try:
        sync.check_ours(uuid, traits, inventories)
    except errors.Clash as exc:
        yield Drift(uuid, 'clash', str(exc), repairable=False)
        return
    if not mapping.same_inventories(inventories, provider.inventories):
        yield Drift(uuid, 'inventory', 'Placement has %s; ferrum wants %s' % (
            _describe(inventories), _describe(provider.inventories)))
    record = records.get(db, uuid)
    owned = record.traits if record is not None else frozenset()
    lacking = provider.traits - traits
    extra = (owned - provider.traits) & traits
    if lacking or extra:
        yield Drift(uuid, 'traits', 'missing %s; stale %s' % (
            ','.join(sorted(lacking)) or '-', ','.join(sorted(extra)) or '-'))
    if record is not None and record.state != records.SYNCED:
        yield Drift(uuid, record.state, record.last_error or '')


def _describe(inventories: dict[str, Any]) -> str:
    if not inventories:
        return 'no inventory'
    return ', '.join('%s reserved %s' % (rc, int(fields.get('reserved', 0)))
                     for rc, fields in sorted(inventories.items()))


def heal(pusher: sync.Pusher, found: list[Drift]) -> dict[str, str]:
    """Push every node with repairable drift; node UUID -> outcome."""
    outcomes: dict[str, str] = {}
    for item in found:
        if (item.repairable and item.node_uuid is not None
                and item.node_uuid not in outcomes):
            outcomes[item.node_uuid] = pusher.push(item.node_uuid,
                                                   verify=True)
    return outcomes
