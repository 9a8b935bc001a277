# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of port request bodies, and the rules no schema can state.

The rules are Ironic's: a MAC address is six pairs of hexadecimal digits
separated by colons (the only form Ironic accepts; stored in lower case),
and a non-empty ``local_link_connection`` names a switch port
(``switch_id`` and ``port_id``), a Smart NIC (``port_id`` and
``hostname``), or, from 1.64, an unmanaged network (``network_type``).
"""

import re
from typing import Any

from oslo_utils import strutils

from ferrum.common import exception
from ferrum.objects import port as port_obj

#: An OpenFlow datapath ID: 64 bits, the low 48 of which are a MAC.
_DATAPATH_ID = re.compile('^[0-9a-f]{16}$')
#: python-ironicclient sends booleans as strings ("--pxe-enabled false",
#: "port set --pxe-disabled"), which Ironic accepts; see to_bool.
_BOOL = {'type': ['boolean', 'string']}
_BOOL_FIELDS = ('pxe_enabled', 'is_smartnic',
                'available_for_dynamic_portgroup')

#: local_link_connection keys -> the minor version that accepts them.
LOCAL_LINK_KEYS: dict[str, int] = {
    'switch_id': 19, 'port_id': 19, 'switch_info': 19, 'hostname': 19,
    'network_type': 64,
    # OVN VTEP switches (1.90), refused again from 1.105 as Ironic removed
    # them (see VTEP_UNTIL).
    'vtep-logical-switch': 90, 'vtep-physical-switch': 90}
#: The keys of API 1.90 that 1.105 took away again.
VTEP_UNTIL = 105
_LINK_REQUIRED = ({'switch_id', 'port_id'}, {'port_id', 'hostname'})
_NETWORK_TYPES = ('managed', 'unmanaged')

#: Fields a client may set, with their JSON types.
_WRITABLE: dict[str, Any] = {
    'address': {'type': 'string'},
    # UUIDs are checked in code, for a clearer message than a pattern's.
    'node_uuid': {'type': 'string'},
    'extra': {'type': 'object'},
    'local_link_connection': {
        'type': 'object',
        'additionalProperties': {'type': 'string', 'maxLength': 255}},
    'pxe_enabled': _BOOL,
    'physical_network': {'type': ['string', 'null'], 'maxLength': 64},
    'is_smartnic': _BOOL,
    # A UUID or a name; checked in code.
    'portgroup_uuid': {'type': ['string', 'null']},
    'name': {'type': ['string', 'null']},
    'description': {'type': ['string', 'null'], 'maxLength': 255},
    'vendor': {'type': ['string', 'null'], 'maxLength': 32},
    'category': {'type': ['string', 'null'], 'maxLength': 80},
    'available_for_dynamic_portgroup': _BOOL,
}
#: Fields that may be changed by PATCH.
UPDATABLE = frozenset(_WRITABLE)

CREATE: dict[str, Any] = {
    'type': 'object',
    # node_uuid, or node_ident from 1.94: required in code.
    'properties': {**_WRITABLE, 'uuid': {'type': 'string'},
                   'node_ident': {'type': 'string'}},
    'required': ['address'],
    'additionalProperties': False,
}

#: The values of changed fields, checked after a patch is applied.
UPDATE: dict[str, Any] = {
    'type': 'object',
    'properties': _WRITABLE,
    'additionalProperties': False,
}


def to_bool(values: dict[str, Any]) -> None:
    """Turn the boolean fields of ``values`` given as strings into booleans.

    :raises InvalidParameterValue: a string that is not a boolean.
    """
    for name in _BOOL_FIELDS:
        value = values.get(name)
        if isinstance(value, str):
            try:
                values[name] = strutils.bool_from_string(value, strict=True)
            except ValueError:
                raise exception.InvalidParameterValue(
                    reason='%s must be true or false, not "%s".'
                           % (name, value[:100])) from None


def check_local_link_connection(link: dict[str, Any],
                                is_smartnic: bool) -> dict[str, Any]:
    """``link`` with ``switch_id`` normalized, if its keys make sense.

    The versions of the keys are checked by the caller, which knows the
    request's version.

    :raises InvalidParameterValue: unknown keys, missing keys, a bad
        switch_id or network_type, or a Smart NIC port without
        ``port_id`` and ``hostname``.
    """
    keys = set(link)
    unknown = keys - set(LOCAL_LINK_KEYS)
    if unknown:
        raise exception.InvalidParameterValue(
            reason='Invalid local_link_connection key(s): %s. Valid keys '
                   'are %s.' % (', '.join(sorted(unknown)),
                                ', '.join(sorted(LOCAL_LINK_KEYS))))
    if is_smartnic and not {'port_id', 'hostname'} <= keys:
        raise exception.InvalidParameterValue(
            reason='A Smart NIC port needs port_id and hostname in its '
                   'local_link_connection.')
    network_type = link.get('network_type', 'managed')
    if network_type not in _NETWORK_TYPES:
        raise exception.InvalidParameterValue(
            reason='local_link_connection network_type must be one of %s, '
                   'not "%s".' % (', '.join(_NETWORK_TYPES),
                                  network_type[:100]))
    # An unmanaged network has no switch for anything to configure.
    if (keys and network_type == 'managed'
            and not any(need <= keys for need in _LINK_REQUIRED)):
        raise exception.InvalidParameterValue(
            reason='local_link_connection needs switch_id and port_id, or '
                   'for a Smart NIC port_id and hostname; it has %s.'
                   % ', '.join(sorted(keys)))
    if 'switch_id' in link:
        return dict(link, switch_id=_switch_id(link['switch_id']))
    return link


def _switch_id(value: str) -> str:
    normalized = value.lower()
    if port_obj.MAC.match(normalized) or _DATAPATH_ID.match(normalized):
        return normalized
    raise exception.InvalidParameterValue(
        reason='local_link_connection switch_id "%s" is neither a MAC '
               'address nor an OpenFlow datapath ID (16 hexadecimal digits).'
               % value[:100])
