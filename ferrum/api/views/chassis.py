# SPDX-License-Identifier: Apache-2.0
"""A chassis as the API shows it (every field is there from 1.1).

``nodes`` is what Ironic sends: a list holding the list of the self and
bookmark links of ``/v1/chassis/{uuid}/nodes`` (one level deeper than
``links``; Ironic's response schema documents it so, and clients read it
so).
"""

from collections.abc import Collection
from typing import Any

from ferrum.api import listing
from ferrum.objects import chassis as chassis_obj

FIELDS: tuple[str, ...] = ('uuid', 'description', 'extra', 'created_at',
                           'updated_at', 'links', 'nodes')
#: The fields a list without detail shows.
LIST_FIELDS: tuple[str, ...] = ('uuid', 'description', 'links')


def _value(chassis: chassis_obj.Chassis, name: str) -> Any:
    if name == 'links':
        return listing.resource_links('chassis', chassis.uuid)
    if name == 'nodes':
        return [listing.resource_links('chassis', chassis.uuid + '/nodes')]
    value = getattr(chassis, name)
    if name in ('created_at', 'updated_at') and value is not None:
        return value.isoformat() + '+00:00'
    return value


def render(chassis: chassis_obj.Chassis,
           fields: Collection[str]) -> dict[str, Any]:
    """``chassis`` as a dict of ``fields``; ``links`` always, as Ironic."""
    shown = list(fields) if 'links' in fields else [*fields, 'links']
    return {name: _value(chassis, name) for name in shown}
