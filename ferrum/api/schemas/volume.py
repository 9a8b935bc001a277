# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of volume connector and volume target bodies (Ironic's).

Like Ironic, the API does not check a connector's ``type`` (iqn, ip,
mac, wwnn, wwpn, port, portgroup) or a target's ``volume_type``: the
storage interface that boots from them would, and ferrum's only one is
``noop``. The lengths are the columns' (Ironic's), so an over-long value
is a 400 rather than a database error.
"""

from typing import Any

#: UUIDs are checked in code, for a clearer message than a pattern's.
_NODE_UUID = {'type': 'string'}
_EXTRA = {'type': ['object', 'null']}

_CONNECTOR: dict[str, Any] = {
    'type': {'type': 'string', 'minLength': 1, 'maxLength': 32},
    'connector_id': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'node_uuid': _NODE_UUID,
    'extra': _EXTRA,
}
_TARGET: dict[str, Any] = {
    'volume_type': {'type': 'string', 'minLength': 1, 'maxLength': 64},
    'volume_id': {'type': 'string', 'minLength': 1, 'maxLength': 36},
    'boot_index': {'type': 'integer', 'minimum': 0,
                   'maximum': 2 ** 31 - 1},
    'properties': {'type': ['object', 'null']},
    'node_uuid': _NODE_UUID,
    'extra': _EXTRA,
}


def _create(fields: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {'type': 'object',
            'properties': {**fields, 'uuid': {'type': ['string', 'null']}},
            'required': required, 'additionalProperties': False}


def _update(fields: dict[str, Any]) -> dict[str, Any]:
    return {'type': 'object', 'properties': fields,
            'additionalProperties': False}


CONNECTOR_CREATE = _create(_CONNECTOR, ['connector_id', 'node_uuid', 'type'])
CONNECTOR_UPDATE = _update(_CONNECTOR)
TARGET_CREATE = _create(_TARGET, ['boot_index', 'node_uuid', 'volume_id',
                                  'volume_type'])
TARGET_UPDATE = _update(_TARGET)
#: Fields that may be changed by PATCH.
CONNECTOR_UPDATABLE = frozenset(_CONNECTOR)
TARGET_UPDATABLE = frozenset(_TARGET)
