# SPDX-License-Identifier: Apache-2.0
"""A node as the API shows it at a given microversion."""

from typing import Any

import flask

from ferrum.objects import node as node_obj

#: The fields a node list shows without /detail, as at API 1.1.
LIST_FIELDS: tuple[str, ...] = ('instance_uuid', 'uuid', 'power_state',
                                'provision_state', 'maintenance')
#: Fields shown by GET of one node and /detail at API 1.1.
DETAIL_FIELDS: tuple[str, ...] = LIST_FIELDS + (
    'driver', 'driver_info', 'driver_internal_info', 'extra',
    'instance_info', 'properties', 'target_power_state',
    'target_provision_state', 'provision_updated_at', 'last_error',
    'maintenance_reason', 'reservation', 'created_at', 'updated_at')
SECRET_MASK = '******'


def mask_secrets(info: dict[str, Any]) -> dict[str, Any]:
    """``driver_info`` with every value whose key names a password hidden."""
    return {key: SECRET_MASK if 'password' in key.lower() else value
            for key, value in info.items()}


def _links(uuid: str) -> list[dict[str, str]]:
    base = flask.request.host_url
    return [{'href': '%sv1/nodes/%s' % (base, uuid), 'rel': 'self'},
            {'href': '%snodes/%s' % (base, uuid), 'rel': 'bookmark'}]


def render(node: node_obj.Node, detail: bool) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for name in DETAIL_FIELDS if detail else LIST_FIELDS:
        value = getattr(node, name)
        if name == 'driver_info':
            value = mask_secrets(value)
        elif name.endswith('_at') and value is not None:
            value = value.isoformat() + '+00:00'
        body[name] = value
    body['links'] = _links(node.uuid)
    return body
