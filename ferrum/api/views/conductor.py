# SPDX-License-Identifier: Apache-2.0
"""A conductor as the API shows it (``/v1/conductors``, API 1.49 and later).

``alive`` is computed when rendering, from the last heartbeat and
``[conductor]heartbeat_timeout``. ``updated_at`` is the last heartbeat: in
Ironic every heartbeat touches the row's ``updated_at``, and operators read
the field that way.
"""

import dataclasses
import datetime
from collections.abc import Collection, Mapping
from typing import Any

from ferrum.api import listing
from ferrum.objects import conductor as conductor_obj

#: Every field, in Ironic's order.
FIELDS: tuple[str, ...] = ('hostname', 'conductor_group', 'alive', 'drivers',
                           'created_at', 'updated_at', 'links')
#: The fields a list without detail shows.
LIST_FIELDS: tuple[str, ...] = ('hostname', 'conductor_group', 'alive',
                                'links')
#: sort_key -> the column it sorts by.
SORT_COLUMNS: dict[str, str] = {
    'id': 'id', 'hostname': 'hostname', 'conductor_group': 'conductor_group',
    'created_at': 'created_at', 'updated_at': 'heartbeat_at'}


@dataclasses.dataclass
class Context:
    """What rendering needs beyond the conductor rows, loaded per request."""

    heartbeat_timeout: int
    #: conductor id -> hardware types (only loaded when drivers are shown).
    drivers: Mapping[int, list[str]]


def _timestamp(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.isoformat() + '+00:00'


def render(conductor: conductor_obj.Conductor, fields: Collection[str],
           ctx: Context) -> dict[str, Any]:
    """``conductor`` as a dict of ``fields``, and always its links.

    Ironic adds the links to any choice of ``fields``.
    """
    values: dict[str, Any] = {
        'hostname': conductor.hostname,
        'conductor_group': conductor.conductor_group,
        'alive': conductor_obj.is_alive(conductor, ctx.heartbeat_timeout),
        'drivers': ctx.drivers.get(conductor.id, []),
        'created_at': _timestamp(conductor.created_at),
        'updated_at': _timestamp(conductor.heartbeat_at),
        'links': listing.resource_links('conductors', conductor.hostname),
    }
    return {name: value for name, value in values.items()
            if name in fields or name == 'links'}
