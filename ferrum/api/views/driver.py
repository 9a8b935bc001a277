# SPDX-License-Identifier: Apache-2.0
"""A driver (hardware type) as the API shows it at a given microversion.

Ironic reports, per hardware type, the default and enabled implementation
of every interface kind it has. ferrum's kinds come from what the live
conductors registered; the kinds ferrum does not serve show their
"nothing" implementation (see :mod:`ferrum.api.views.unserved`).
"""

from collections.abc import Collection
from typing import Any

from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api.views import unserved
from ferrum.conf import default as default_conf
from ferrum.objects import conductor as conductor_obj

#: Ironic interface kind -> the minor version that shows it on drivers.
_KIND_VERSIONS: dict[str, int] = {
    **{kind: 30 for kind in default_conf.INTERFACE_KINDS},
    'console': 30, 'network': 30, 'raid': 30,
    'storage': 33, 'rescue': 38, 'bios': 40, 'firmware': 86,
}
#: field -> the minor version that introduced it.
FIELD_VERSIONS: dict[str, int] = {
    'name': 1, 'hosts': 1, 'links': 1, 'properties': 14, 'type': 30,
    **{'default_%s_interface' % kind: minor
       for kind, minor in _KIND_VERSIONS.items()},
    **{'enabled_%s_interfaces' % kind: minor
       for kind, minor in _KIND_VERSIONS.items()},
}
#: The fields a list without detail shows.
LIST_FIELDS: tuple[str, ...] = ('name', 'hosts', 'type', 'links',
                                'properties')


_FIELDS = microversion.FieldVersions(FIELD_VERSIONS)


def available_fields() -> list[str]:
    """Every field the current request's version may see."""
    return _FIELDS.available()


def _interfaces(hw_type: conductor_obj.ActiveHardwareType
                ) -> dict[str, Any]:
    """default_<kind>_interface and enabled_<kind>_interfaces, every kind."""
    values: dict[str, Any] = {}
    for kind in _KIND_VERSIONS:
        default: str | None
        if kind in unserved.INTERFACES:
            default = unserved.INTERFACES[kind]
            enabled = [unserved.INTERFACES[kind]]
        else:
            default = hw_type.defaults.get(kind)
            enabled = list(hw_type.enabled.get(kind, ()))
        values['default_%s_interface' % kind] = default
        values['enabled_%s_interfaces' % kind] = enabled
    return values


def render(hw_type: conductor_obj.ActiveHardwareType,
           fields: Collection[str]) -> dict[str, Any]:
    """``hw_type`` as a dict of ``fields``, and always its links.

    ``fields`` are already checked for the version. Ironic adds the links
    to any choice of ``fields``.
    """
    values: dict[str, Any] = {
        'name': hw_type.name,
        'hosts': list(hw_type.hosts),
        # Ironic dropped classic drivers: every hardware type is dynamic.
        'type': 'dynamic',
        'links': listing.resource_links('drivers', hw_type.name),
        'properties': listing.resource_links(
            'drivers', hw_type.name + '/properties'),
    }
    if any(name not in values for name in fields):
        values.update(_interfaces(hw_type))
    return {name: value for name, value in values.items()
            if name in fields or name == 'links'}
