# SPDX-License-Identifier: Apache-2.0
"""Custom resource classes (``/resource_classes``) and traits
(``/traits``): created idempotently (``PUT``, 1.7 and 1.6), listed,
deleted."""

from __future__ import annotations

from ferrum.placement import client as client_mod
from ferrum.placement import errors


def ensure(client: client_mod.PlacementClient, name: str) -> None:
    """Create custom resource class ``name`` (idempotent)."""
    client.put('/resource_classes/%s' % name)


def exists(client: client_mod.PlacementClient, name: str) -> bool:
    """Whether resource class ``name`` exists (one authenticated GET:
    the sync worker's probe of an outage)."""
    return client.get('/resource_classes/%s' % name,
                      not_found_ok=True) is not None


def delete(client: client_mod.PlacementClient, name: str) -> bool:
    """Delete custom resource class ``name``; False while an inventory
    still uses it."""
    try:
        client.delete('/resource_classes/%s' % name)
    except errors.PlacementRefused as exc:
        if exc.status in (400, 409):
            return False
        raise
    return True


def names(client: client_mod.PlacementClient, prefix: str = '') -> set[str]:
    """The names of Placement's resource classes starting with
    ``prefix``."""
    body = client.get('/resource_classes')
    return {rc['name'] for rc in body['resource_classes']
            if rc['name'].startswith(prefix)}


def ensure_trait(client: client_mod.PlacementClient, name: str) -> None:
    """Create custom trait ``name`` (idempotent)."""
    client.put('/traits/%s' % name)
