# SPDX-License-Identifier: Apache-2.0
"""Resource providers (``/resource_providers``): one provider, its
inventories and traits, the consumers holding it; the listings, the
allocation candidates and the reshaper.

Every write carries the provider generation the caller read, and returns
the new one; a generation that moved meanwhile is a
:class:`~ferrum.placement.errors.PlacementConflict` the caller retries
(:mod:`ferrum.placement.resources.retry`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ferrum.placement import client as client_mod


def _url(uuid: str, what: str = '') -> str:
    return '/resource_providers/%s%s' % (uuid, what)


def read(client: client_mod.PlacementClient, uuid: str
         ) -> tuple[int, dict[str, Any], set[str]] | None:
    """A provider's generation, inventories and traits; None if absent.

    Two GETs; the generation is the later answer's (a write between them
    makes the next write with it fail with a conflict, which is retried).
    """
    inventories = client.get(_url(uuid, '/inventories'), not_found_ok=True)
    if inventories is None:
        return None
    traits = client.get(_url(uuid, '/traits'), not_found_ok=True)
    if traits is None:
        return None
    return (int(traits['resource_provider_generation']),
            dict(inventories['inventories']), set(traits['traits']))


def generation(client: client_mod.PlacementClient, uuid: str) -> int | None:
    """A provider's generation; None if absent."""
    body = client.get(_url(uuid), not_found_ok=True)
    return None if body is None else int(body['generation'])


def traits(client: client_mod.PlacementClient, uuid: str) -> set[str] | None:
    """A provider's traits; None if absent."""
    body = client.get(_url(uuid, '/traits'), not_found_ok=True)
    return None if body is None else set(body['traits'])


def create(client: client_mod.PlacementClient, uuid: str) -> int:
    """Create provider ``uuid`` (named after its uuid); its generation."""
    body = client.post('/resource_providers', {'uuid': uuid, 'name': uuid})
    return int(body['generation'])


def put_inventories(client: client_mod.PlacementClient, uuid: str,
                    inventories: Mapping[str, Any], generation: int) -> int:
    """Replace a provider's inventories; its new generation."""
    body = client.put(_url(uuid, '/inventories'), {
        'inventories': dict(inventories),
        'resource_provider_generation': generation})
    return int(body['resource_provider_generation'])


def put_traits(client: client_mod.PlacementClient, uuid: str,
               names: Iterable[str], generation: int) -> int:
    """Replace a provider's traits; its new generation."""
    body = client.put(_url(uuid, '/traits'), {
        'traits': sorted(names), 'resource_provider_generation': generation})
    return int(body['resource_provider_generation'])


def delete(client: client_mod.PlacementClient, uuid: str) -> None:
    """Delete a provider (a missing one is fine).

    :raises PlacementConflict: with :data:`~ferrum.placement.client.
        PROVIDER_IN_USE` while consumers hold it.
    """
    client.delete(_url(uuid))


def listing(client: client_mod.PlacementClient,
            required: str | None = None) -> dict[str, int]:
    """Every provider (with the trait ``required`` only, if given): uuid
    -> generation.

    :raises PlacementRefused: 400 when ``required`` names no trait.
    """
    query = '' if required is None else '?required=%s' % required
    body = client.get('/resource_providers' + query)
    return {p['uuid']: int(p['generation'])
            for p in body['resource_providers']}


def consumers_of(client: client_mod.PlacementClient,
                 uuid: str) -> dict[str, Any]:
    """The consumers holding provider ``uuid``: uuid -> their resources."""
    body = client.get(_url(uuid, '/allocations'), not_found_ok=True)
    return dict((body or {}).get('allocations') or {})


def allocation_candidates(client: client_mod.PlacementClient,
                          resource_class: str,
                          required: list[str] | None = None,
                          limit: int | None = None) -> list[str]:
    """Providers ``GET /allocation_candidates`` offers for one unit."""
    query = 'resources=%s:1' % resource_class
    if required:
        query += '&required=%s' % ','.join(sorted(required))
    if limit:
        query += '&limit=%d' % limit
    body = client.get('/allocation_candidates?' + query)
    return [uuid for request in body['allocation_requests']
            for uuid in request['allocations']]


def reshape(client: client_mod.PlacementClient,
            inventories: Mapping[str, tuple[Mapping[str, Any], int]]
            ) -> None:
    """Replace the inventories of several providers in one request
    (``POST /reshaper``; provider uuid -> (inventories, its generation)).
    All or nothing: a generation conflict on any provider fails all.
    Placement answers 204 without the new generations.

    :raises PlacementRefused: 403 when Placement's policy does not let
        ferrum reshape (a refusal of this call, not an outage).
    """
    client.post('/reshaper', {'inventories': {
        uuid: {'inventories': dict(found),
               'resource_provider_generation': generation}
        for uuid, (found, generation) in inventories.items()},
        'allocations': {}},
        version=client_mod.RESHAPER_VERSION, forbidden_is_refusal=True)
