# SPDX-License-Identifier: Apache-2.0
"""A lease as the API shows it (ferrum's extension, at every microversion)."""

from collections.abc import Collection
from typing import Any

from ferrum.api import listing
from ferrum.leases import windows
from ferrum.objects import lease as lease_obj
from ferrum.placement import reservations

#: API field -> the lease attribute it shows.
_ATTRIBUTES: dict[str, str] = {
    'uuid': 'uuid', 'name': 'name', 'project': 'project', 'owner': 'owner',
    'status': 'status', 'resource_class': 'resource_class',
    'traits': 'traits', 'candidate_nodes': 'candidate_nodes',
    'count': 'count', 'nodes': 'nodes', 'start': 'start_at', 'end': 'end_at',
    'cleaning_margin': 'cleaning_margin', 'before_end': 'before_end_at',
    'before_end_fired_at': 'before_end_fired_at',
    'last_error': 'last_error', 'extra': 'extra', 'created_at': 'created_at',
    'updated_at': 'updated_at', 'reservation_class': 'placement_class',
}
FIELDS: list[str] = list(_ATTRIBUTES) + ['links']


def _value(lease: lease_obj.Lease, name: str) -> Any:
    if name == 'links':
        return listing.resource_links('leases', lease.uuid)
    value = getattr(lease, _ATTRIBUTES[name])
    if name == 'reservation_class':
        # What a nova flavor asks for to land on the lease's nodes: shown
        # only while the class exists in Placement (not before ferrum
        # could create it, when Placement was away at the booking), so a
        # client can rely on it.
        return (reservations.class_name(lease.uuid)
                if value and lease.class_created else None)
    if name in ('start', 'end', 'before_end', 'before_end_fired_at',
                'created_at', 'updated_at'):
        return windows.render(value)
    if name in ('traits', 'nodes'):
        return list(value or [])
    if name == 'extra':
        return dict(value or {})
    return value


def render(lease: lease_obj.Lease, fields: Collection[str]) -> dict[str, Any]:
    """``lease`` as a dict of ``fields``."""
    return {name: _value(lease, name) for name in fields}
