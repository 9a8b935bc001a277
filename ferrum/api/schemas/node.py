# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of node request bodies, and the rules no schema can state."""

from typing import Any

from ferrum.conf import default as default_conf

_STRING_OR_NULL = {'type': ['string', 'null'], 'maxLength': 255}
_DICT = {'type': 'object'}
#: Ironic takes booleans as JSON or as strings ("True", "false", "yes"...):
#: the baremetal CLI sends ``node set --retired`` as "True".
_BOOL_OR_NULL = {'type': ['boolean', 'string', 'null'], 'maxLength': 5}
_BOOL = {'type': ['boolean', 'string'], 'maxLength': 5}
#: Fields converted to real booleans once the schema has passed them.
BOOLEANS = ('automated_clean', 'protected', 'retired', 'disable_power_off')
_UUID = {'type': 'string', 'format': 'uuid', 'pattern':
         '^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$'}
#: RFC 3986 unreserved characters (API 1.10), as Ironic allows in names.
NAME = {'type': ['string', 'null'], 'pattern': '^[a-zA-Z0-9._~-]+$',
        'minLength': 1, 'maxLength': 255}

#: Fields a client may set, with their JSON types.
_WRITABLE: dict[str, Any] = {
    'name': NAME,
    'description': {'type': ['string', 'null'], 'maxLength': 4096},
    'driver': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'driver_info': _DICT, 'properties': _DICT, 'instance_info': _DICT,
    'extra': _DICT,
    'instance_uuid': {'anyOf': [_UUID, {'type': 'null'}]},
    'resource_class': {'type': ['string', 'null'], 'maxLength': 80},
    'conductor_group': {'type': ['string', 'null'], 'maxLength': 255,
                        'pattern': '^[a-zA-Z0-9_.:-]*$'},
    'owner': _STRING_OR_NULL, 'lessee': _STRING_OR_NULL,
    'automated_clean': _BOOL_OR_NULL,
    'protected': _BOOL,
    'protected_reason': {'type': ['string', 'null'], 'maxLength': 4096},
    'retired': _BOOL,
    'retired_reason': {'type': ['string', 'null'], 'maxLength': 4096},
    **{'%s_interface' % kind: _STRING_OR_NULL
       for kind in default_conf.INTERFACE_KINDS},
    'shard': _STRING_OR_NULL,
    # A UUID or a name; stored as the parent's UUID.
    'parent_node': {'type': ['string', 'null'], 'maxLength': 36},
    'disable_power_off': _BOOL,
    'instance_name': {'type': ['string', 'null'], 'minLength': 1,
                      'maxLength': 255},
}
#: Set by the API, not stored as given (a UUID becomes chassis_id; only
#: the noop storage interface is served): see ferrum.api.handlers.node.
_TRANSLATED: dict[str, Any] = {
    'chassis_uuid': {'type': ['string', 'null']},
    'storage_interface': {'type': ['string', 'null']}}
#: Fields that may be set by PATCH.
UPDATABLE = frozenset(_WRITABLE) | frozenset(_TRANSLATED)

#: Fields only POST accepts (beyond the writable ones).
_CREATE_ONLY: dict[str, Any] = {'uuid': _UUID,
                                'network_data': {'type': ['object', 'null']}}

CREATE: dict[str, Any] = {
    'type': 'object',
    'properties': {**_WRITABLE, **_TRANSLATED, **_CREATE_ONLY},
    'required': ['driver'],
    'additionalProperties': False,
}

#: The values of updated fields, checked after the patch is applied.
UPDATE: dict[str, Any] = {
    'type': 'object',
    'properties': {**_WRITABLE, **_TRANSLATED},
    'additionalProperties': False,
}

PROVISION: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'target': {'type': 'string'},
        'clean_steps': {'type': 'array', 'maxItems': 100, 'items': {
            'type': 'object',
            'properties': {'interface': {'type': 'string',
                                         'maxLength': 255},
                           'step': {'type': 'string', 'maxLength': 255},
                           'args': {'type': 'object'},
                           'priority': {'type': 'integer', 'minimum': 0,
                                        'maximum': 1000000}},
            'required': ['interface', 'step'],
            'additionalProperties': False}},
        'configdrive': {'type': ['string', 'object', 'null']},
        'disable_ramdisk': {'type': ['boolean', 'null']},
        'deploy_steps': {'type': ['array', 'null']},
    },
    'required': ['target'],
    'additionalProperties': False,
}

POWER: dict[str, Any] = {
    'type': 'object',
    'properties': {'target': {'type': 'string'},
                   # Ironic sets no maximum; a day is past any BMC.
                   'timeout': {'type': ['integer', 'null'], 'minimum': 1,
                               'maximum': 86400}},
    'required': ['target'],
    'additionalProperties': False,
}

MAINTENANCE: dict[str, Any] = {
    'type': ['object', 'null'],
    'properties': {'reason': {'type': ['string', 'null'],
                              'maxLength': 4096}},
    'additionalProperties': False,
}

BOOT_DEVICE: dict[str, Any] = {
    'type': 'object',
    'properties': {'boot_device': {'type': 'string', 'minLength': 1},
                   'persistent': {'type': 'boolean'}},
    'required': ['boot_device'],
    'additionalProperties': False,
}
