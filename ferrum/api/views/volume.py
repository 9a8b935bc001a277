# SPDX-License-Identifier: Apache-2.0
"""Volume connectors and targets as the API shows them (from 1.32, every
field at once), and the ``/v1/volume`` link documents.

A target's ``properties`` have their passwords masked for every caller,
and are replaced whole by Ironic's redaction notice for a caller without
``baremetal:volume:view_target_properties``: iSCSI connection details
may be in them.
"""

import dataclasses
from collections.abc import Collection
from typing import Any

from oslo_utils import strutils

from ferrum.api import listing

SECRET_MASK = '******'
#: Ironic's notice, to the letter (clients and operators match on it).
REDACTED_PROPERTIES = {'redacted_contents': (
    '** Value redacted: Requires permission '
    'baremetal:volume:view_target_properties access. Permission denied. **')}


@dataclasses.dataclass(frozen=True)
class Shape:
    """What differs between connectors and targets."""

    #: The collection under /v1/volume/ and the key of a list.
    collection: str
    fields: tuple[str, ...]
    list_fields: tuple[str, ...]


CONNECTORS = Shape('connectors', (
    'uuid', 'type', 'connector_id', 'node_uuid', 'extra', 'created_at',
    'updated_at', 'links'), ('uuid', 'node_uuid', 'type', 'connector_id',
                             'links'))
TARGETS = Shape('targets', (
    'uuid', 'volume_type', 'properties', 'boot_index', 'volume_id',
    'node_uuid', 'extra', 'created_at', 'updated_at', 'links'),
    ('uuid', 'node_uuid', 'volume_type', 'boot_index', 'volume_id', 'links'))


def _value(row: Any, name: str, shape: Shape, see_properties: bool) -> Any:
    if name == 'links':
        return listing.resource_links('volume/' + shape.collection, row.uuid)
    if name == 'properties':
        if not see_properties:
            return dict(REDACTED_PROPERTIES)
        return strutils.mask_dict_password(row.properties, SECRET_MASK)
    value = getattr(row, name)
    if name in ('created_at', 'updated_at') and value is not None:
        return value.isoformat() + '+00:00'
    return value


def render(row: Any, fields: Collection[str], shape: Shape,
           see_properties: bool = True) -> dict[str, Any]:
    """``row`` as a dict of ``fields``; ``links`` always, as Ironic."""
    shown = list(fields) if 'links' in fields else [*fields, 'links']
    return {name: _value(row, name, shape, see_properties)
            for name in shown}


def links(node_uuid: str | None = None) -> dict[str, Any]:
    """``/v1/volume`` (or a node's): links to itself and its two lists."""
    base = listing.base_url()
    path = 'nodes/%s/volume/' % node_uuid if node_uuid else 'volume/'

    def pair(suffix: str) -> list[dict[str, str]]:
        return [{'href': '%sv1/%s%s' % (base, path, suffix), 'rel': 'self'},
                {'href': '%s%s%s' % (base, path, suffix),
                 'rel': 'bookmark'}]
    return {'links': pair(''), 'connectors': pair('connectors'),
            'targets': pair('targets')}
