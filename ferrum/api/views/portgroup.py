# SPDX-License-Identifier: Apache-2.0
"""A port group as the API shows it at a given microversion.

``FIELD_VERSIONS`` is Ironic's history of port group fields: the resource
came with 1.23, ``mode`` and ``properties`` with 1.26,
``physical_network`` with 1.102, ``category`` with 1.103 and
``dynamic_portgroup`` with 1.111. ``ports`` links to the group's ports.
"""

from collections.abc import Collection
from typing import Any

from ferrum.api import listing
from ferrum.api import microversion
from ferrum.objects import portgroup as portgroup_obj

#: field -> the minor version that introduced it.
FIELD_VERSIONS: dict[str, int] = {
    'uuid': 23, 'name': 23, 'address': 23, 'node_uuid': 23,
    'standalone_ports_supported': 23, 'internal_info': 23, 'extra': 23,
    'created_at': 23, 'updated_at': 23, 'links': 23, 'ports': 23,
    'mode': 26, 'properties': 26, 'physical_network': 102, 'category': 103,
    'dynamic_portgroup': 111,
}
#: The fields a list without detail shows (Ironic's).
LIST_FIELDS: tuple[str, ...] = ('uuid', 'address', 'name', 'links')
_TIMESTAMPS = frozenset({'created_at', 'updated_at'})

_FIELDS = microversion.FieldVersions(FIELD_VERSIONS)


def available_fields() -> list[str]:
    """Every field the current request's version may see."""
    return _FIELDS.available()


def _value(group: portgroup_obj.Portgroup, name: str) -> Any:
    if name == 'links':
        return listing.resource_links('portgroups', group.uuid)
    if name == 'ports':
        return listing.resource_links('portgroups', group.uuid + '/ports')
    value = getattr(group, name)
    if name in _TIMESTAMPS and value is not None:
        return value.isoformat() + '+00:00'
    if name == 'dynamic_portgroup':
        return bool(value)
    return value


def render(group: portgroup_obj.Portgroup,
           fields: Collection[str]) -> dict[str, Any]:
    """``group`` as a dict of ``fields`` (already checked for the version)."""
    return {name: _value(group, name) for name in fields}
