# SPDX-License-Identifier: Apache-2.0
"""A lease in Placement: its reservation class and its claims.

The mapping (see ``doc/placement.md`` for the diagram):

- **Class.** Each lease has the custom class ``CUSTOM_RESERVATION_<UUID>``
  (:func:`class_name`, as in Blazar), created with the lease and deleted
  after its end.
- **Inventory.** While the lease holds a node, the node's provider offers
  one unit of that class (:mod:`ferrum.placement.mapping`): what a nova
  flavor with ``resources:CUSTOM_RESERVATION_<UUID>=1`` asks for.
- **The lease's consumer** (uuid = the lease's) holds the one unit of
  ``CUSTOM_<RC>`` of every leased node nobody uses under the lease, so
  that no consumer that ignores the lease can claim them. The lease's
  start claims them all in one request (:func:`claim_lease`): all or
  nothing.
- **A ferrum allocation under the lease** takes a node from the lease's
  consumer in one ``POST /allocations`` (:func:`take`): its consumer gets
  the node's ``CUSTOM_<RC>`` unit and its ``CUSTOM_RESERVATION`` unit, the
  lease's consumer loses the node, in one transaction. The reservation
  unit (total 1) is what makes ferrum and a consumer claiming through the
  reservation class exclude each other. Deleting the allocation gives the
  node back to the lease's consumer the same way (:func:`give_back`).
- **The end** empties the lease's consumer and its allocations' consumers
  in one request (:func:`release_all`); the inventory goes as each node
  goes back, then the class (:func:`delete_class`): Placement refuses any
  other order (Blazar bug 1813252).

Consumers are ferrum's when their user is ``[allocation] default_user``;
a consumer of another user is never changed. Every write carries the
consumer generations just read (1.28): a concurrent change is read again
and the write tried again, a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ferrum.objects import base
from ferrum.placement import client as client_mod

PREFIX = 'CUSTOM_RESERVATION_'
#: Tries of a write whose consumer generations moved meanwhile.
ATTEMPTS = 5
_UUID = re.compile('[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                   '[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')


def class_name(lease_uuid: str) -> str:
    """``CUSTOM_RESERVATION_`` + the uuid in upper case, ``-`` as ``_``."""
    return PREFIX + lease_uuid.upper().replace('-', '_')


def lease_of(resource_class: str) -> str | None:
    """The lease uuid of a reservation class; None for any other class."""
    if not resource_class.startswith(PREFIX):
        return None
    text = resource_class[len(PREFIX):].replace('_', '-').lower()
    return text if _UUID.fullmatch(text) else None


class Busy(Exception):
    """Placement refused a claim: another consumer holds these nodes (or
    they are reserved, or not synced there yet)."""

    def __init__(self, providers: set[str], detail: str) -> None:
        super().__init__(detail)
        self.providers = providers


class ConsumerTaken(Exception):
    """The uuid is already a consumer of another user."""


def _entry(allocations: Mapping[str, Any], generation: int | None,
           project: str, user: str) -> dict[str, Any]:
    return {'allocations': {
        provider: {'resources': dict(found['resources'])}
        for provider, found in allocations.items()},
        'consumer_generation': generation, 'project_id': project,
        'user_id': user}


def next_generation(current: Mapping[str, Any],
                    sent: int | None) -> int | None:
    """The consumer generation to send again after Placement said the
    one ``sent`` is stale (``current`` is the consumer, read since).

    Placement shows no generation for a consumer without allocations,
    yet one exists at generation 0 after a write it refused with a 400
    (a provider missing: it creates the consumer before it looks the
    providers up) and refuses None for it ever after ("expected 0 but
    got None"). Sending 0 once None was refused claims it.
    """
    generation = current.get('consumer_generation')
    if generation is None and not current.get('allocations'):
        return 0 if sent is None else None
    return generation


def _read_lease(client: client_mod.PlacementClient, lease_uuid: str,
                user: str, sent: int | None, retry: bool
                ) -> tuple[dict[str, Any], int | None]:
    """The lease's consumer and the generation to write it with: as read
    on a first try, by :func:`next_generation` on a retry (``sent`` was
    refused).

    :raises ConsumerTaken: the lease's uuid is another user's consumer.
    """
    current = client.consumer(lease_uuid)
    if current.get('allocations') and current.get('user_id') != user:
        raise ConsumerTaken(lease_uuid)
    if retry:
        return current, next_generation(current, sent)
    return current, current.get('consumer_generation')


def _post(client: client_mod.PlacementClient, body: dict[str, Any],
          before: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """``POST /allocations``; then tell the client which providers it
    moved the generation of: those of each consumer's new allocations,
    or of its previous ones (``before``) when it is emptied."""
    since = base.utcnow()
    client.post('/allocations', body)
    touched: set[str] = set()
    for consumer, entry in body.items():
        touched.update(entry['allocations']
                       or (before or {}).get(consumer) or {})
    client.allocations_written(touched, since)


def _busy(exc: client_mod.PlacementRefused,
          providers: Iterable[str]) -> Busy:
    """Which of ``providers`` Placement named in its refusal."""
    wanted = set(providers)
    named = {m.lower() for m in _UUID.findall(exc.kwargs.get('detail', ''))}
    return Busy(named & wanted, str(exc))


def ensure_class(client: client_mod.PlacementClient, lease_uuid: str) -> None:
    """Create the lease's class (idempotent)."""
    client.put('/resource_classes/%s' % class_name(lease_uuid))


def delete_class(client: client_mod.PlacementClient,
                 lease_uuid: str) -> bool:
    """Delete the lease's class; False while an inventory still uses it."""
    try:
        client.delete('/resource_classes/%s' % class_name(lease_uuid))
    except client_mod.PlacementRefused as exc:
        if exc.status in (400, 409):
            return False
        raise
    return True


def claim_lease(client: client_mod.PlacementClient, lease_uuid: str,
                project: str, user: str, nodes: Mapping[str, str]) -> None:
    """Make the lease's consumer hold the ``CUSTOM_<RC>`` unit of each of
    ``nodes`` (provider uuid -> class), and nothing else: one request, all
    or nothing. Run again (a start taken over), it replaces what the
    consumer held, keeping what its allocations took.

    :raises Busy: Placement refused; ``providers`` are the nodes it named
        (empty when it named none of them).
    :raises ConsumerTaken: the lease's uuid is another user's consumer.
    :raises PlacementConflict: the consumer kept changing.
    """
    wanted = {provider: {'resources': {rc: 1}}
              for provider, rc in nodes.items()}
    generation: int | None = None
    for attempt in range(ATTEMPTS):
        try:
            _post(client, {lease_uuid: _entry(wanted, generation, project,
                                              user)})
            return
        except client_mod.PlacementConflict as exc:
            if exc.error_code != client_mod.CONCURRENT_UPDATE:
                raise _busy(exc, nodes) from exc
            if attempt == ATTEMPTS - 1:
                raise
        _current, generation = _read_lease(client, lease_uuid, user,
                                           generation, retry=True)
    raise AssertionError('unreachable')  # pragma: no cover


def add_nodes(client: client_mod.PlacementClient, lease_uuid: str,
              project: str, user: str, nodes: Mapping[str, str]) -> None:
    """Make the lease's consumer hold ``nodes`` (provider uuid -> class)
    too, keeping what it holds: one request.

    :raises Busy: Placement refused (someone else holds one of them).
    :raises ConsumerTaken: the lease's uuid is another user's consumer.
    :raises PlacementConflict: the consumer kept changing.
    """
    sent: int | None = None
    for attempt in range(ATTEMPTS):
        current, sent = _read_lease(client, lease_uuid, user, sent,
                                    retry=attempt > 0)
        held = dict(current.get('allocations') or {})
        held.update((provider, {'resources': {rc: 1}})
                    for provider, rc in nodes.items())
        try:
            _post(client, {lease_uuid: _entry(
                held, sent, current.get('project_id') or project, user)})
            return
        except client_mod.PlacementConflict as exc:
            if exc.error_code != client_mod.CONCURRENT_UPDATE:
                raise _busy(exc, nodes) from exc
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError('unreachable')  # pragma: no cover


def take(client: client_mod.PlacementClient, lease_uuid: str,
         consumer: str, provider: str, resource_class: str, project: str,
         user: str) -> None:
    """Move ``provider`` from the lease's consumer to new consumer
    ``consumer`` (an allocation under the lease), with the lease's
    reservation unit: one request.

    :raises Busy: Placement refused the node (someone holds its
        reservation unit, or its class unit outside the lease).
    :raises ConsumerTaken: ``consumer`` exists already.
    :raises PlacementConflict: the lease's consumer kept changing.
    """
    mine = {provider: {'resources': {resource_class: 1,
                                     class_name(lease_uuid): 1}}}
    fresh: int | None = None  # the new consumer's generation
    for attempt in range(ATTEMPTS):
        lease = client.consumer(lease_uuid)
        body = {consumer: _entry(mine, fresh, project, user)}
        held = dict(lease.get('allocations') or {})
        if held.pop(provider, None) is not None:
            if lease.get('user_id') != user:
                raise ConsumerTaken(lease_uuid)
            body[lease_uuid] = _entry(held, lease['consumer_generation'],
                                      lease['project_id'], user)
        try:
            _post(client, body, {lease_uuid: lease.get('allocations')
                                 or {}})
            return
        except client_mod.PlacementConflict as exc:
            if exc.error_code != client_mod.CONCURRENT_UPDATE:
                raise _busy(exc, [provider]) from exc
            existing = client.consumer(consumer)
            if existing.get('allocations'):
                raise ConsumerTaken(consumer) from exc
            if attempt == ATTEMPTS - 1:
                raise
        if lease_uuid not in body or client.consumer(lease_uuid).get(
                'consumer_generation') == lease['consumer_generation']:
            # Not the lease's consumer that moved: the new one's.
            fresh = next_generation(existing, fresh)
    raise AssertionError('unreachable')  # pragma: no cover


def give_back(client: client_mod.PlacementClient, consumer: str,
              current: Mapping[str, Any], lease_uuid: str, project: str,
              user: str) -> None:
    """Empty ferrum's consumer ``consumer`` (``current`` is what it holds,
    as just read) and give the lease's consumer the class units it held
    under the lease: one request.

    :raises ConsumerTaken: the lease's uuid is another user's consumer
        (nothing written; the caller releases ``consumer`` alone).
    :raises PlacementConflict: the consumers kept changing.
    """
    reservation = class_name(lease_uuid)
    sent: int | None = None
    for attempt in range(ATTEMPTS):
        lease, sent = _read_lease(client, lease_uuid, user, sent,
                                  retry=attempt > 0)
        held = dict(lease.get('allocations') or {})
        for provider, found in (current.get('allocations') or {}).items():
            resources = {rc: amount for rc, amount
                         in found['resources'].items() if rc != reservation}
            if reservation in found['resources'] and resources:
                held[provider] = {'resources': resources}
        body = {consumer: _entry({}, current.get('consumer_generation'),
                                 current['project_id'], user)}
        if held:
            body[lease_uuid] = _entry(held, sent,
                                      lease.get('project_id') or project,
                                      user)
        try:
            _post(client, body, {consumer: current.get('allocations')
                                 or {}})
            return
        except client_mod.PlacementConflict as exc:
            if (exc.error_code != client_mod.CONCURRENT_UPDATE
                    or attempt == ATTEMPTS - 1):
                raise
        current = client.consumer(consumer)
        if not current.get('allocations'):
            return
    raise AssertionError('unreachable')  # pragma: no cover


def release_all(client: client_mod.PlacementClient, user: str,
                consumers: Iterable[str]) -> int:
    """Empty ``consumers`` (the lease's and its allocations') in one
    request, those of ``user`` only; how many held anything.

    :raises PlacementConflict: they kept changing.
    """
    uuids = list(dict.fromkeys(consumers))
    for attempt in range(ATTEMPTS):
        body = {}
        before = {}
        for uuid in uuids:
            current = client.consumer(uuid)
            if current.get('allocations') and current.get('user_id') == user:
                body[uuid] = _entry({}, current.get('consumer_generation'),
                                    current['project_id'], user)
                before[uuid] = current['allocations']
        if not body:
            return 0
        try:
            _post(client, body, before)
            return len(body)
        except client_mod.PlacementConflict as exc:
            if (exc.error_code != client_mod.CONCURRENT_UPDATE
                    or attempt == ATTEMPTS - 1):
                raise
    raise AssertionError('unreachable')  # pragma: no cover
