# SPDX-License-Identifier: Apache-2.0
"""An allocation as the API shows it at a given microversion.

Allocations appeared in 1.52 with every field but ``owner`` (1.60). Lists
show every field, as Ironic's do; ``fields`` narrows them.
"""

from collections.abc import Collection
from typing import Any

from ferrum.api import listing
from ferrum.api import microversion
from ferrum.objects import allocation as allocation_obj

#: field -> the minor version that introduced it.
FIELD_VERSIONS: dict[str, int] = {
    'uuid': 52, 'name': 52, 'node_uuid': 52, 'state': 52, 'last_error': 52,
    'resource_class': 52, 'traits': 52, 'candidate_nodes': 52, 'extra': 52,
    'created_at': 52, 'updated_at': 52, 'links': 52, 'owner': 60,
}
_TIMESTAMPS = frozenset({'created_at', 'updated_at'})


_FIELDS = microversion.FieldVersions(FIELD_VERSIONS)


def available_fields() -> list[str]:
    """Every field the current request's version may see."""
    return _FIELDS.available()


def _value(allocation: allocation_obj.Allocation, name: str) -> Any:
    if name == 'links':
        return listing.resource_links('allocations', allocation.uuid)
    value = getattr(allocation, name)
    if name in _TIMESTAMPS and value is not None:
        return value.isoformat() + '+00:00'
    if name == 'candidate_nodes':
        return list(value or [])
    if name == 'extra':
        return dict(value or {})
    return value


def render(allocation: allocation_obj.Allocation,
           fields: Collection[str]) -> dict[str, Any]:
    """``allocation`` as a dict of ``fields`` (checked for the version)."""
    return {name: _value(allocation, name) for name in fields}
