# SPDX-License-Identifier: Apache-2.0
"""A port as the API shows it at a given microversion.

``FIELD_VERSIONS`` is Ironic's history of port fields: a field is shown only
to requests at or after the version that introduced it. ``internal_info``
holds what ferrum records on the port (an attached VIF, as
``tenant_vif_port_id``); ``portgroup_uuid`` names the port's group (1.24).
"""

from collections.abc import Collection
from typing import Any

from ferrum.api import listing
from ferrum.api import microversion
from ferrum.objects import port as port_obj

#: field -> the minor version that introduced it.
FIELD_VERSIONS: dict[str, int] = {
    'uuid': 1, 'address': 1, 'node_uuid': 1, 'extra': 1, 'created_at': 1,
    'updated_at': 1, 'links': 1, 'internal_info': 18,
    'local_link_connection': 19, 'pxe_enabled': 19, 'portgroup_uuid': 24,
    'physical_network': 34, 'is_smartnic': 53, 'name': 88,
    'description': 97, 'vendor': 100, 'category': 101,
    'available_for_dynamic_portgroup': 111,
}
#: The fields a list without detail shows.
LIST_FIELDS: tuple[str, ...] = ('uuid', 'address', 'links')
_TIMESTAMPS = frozenset({'created_at', 'updated_at'})


_FIELDS = microversion.FieldVersions(FIELD_VERSIONS)


def available_fields() -> list[str]:
    """Every field the current request's version may see."""
    return _FIELDS.available()


def _value(port: port_obj.Port, name: str) -> Any:
    if name == 'links':
        return listing.resource_links('ports', port.uuid)
    value = getattr(port, name)
    if name in _TIMESTAMPS and value is not None:
        return value.isoformat() + '+00:00'
    return value


def render(port: port_obj.Port, fields: Collection[str]) -> dict[str, Any]:
    """``port`` as a dict of ``fields`` (already checked for the version)."""
    return {name: _value(port, name) for name in fields}
