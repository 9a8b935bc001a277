# SPDX-License-Identifier: Apache-2.0
"""The ``driver_info`` of IPMI nodes: what it may hold, checked without I/O.

:func:`parse` turns a node's ``driver_info`` into :class:`IpmiParams` or
raises an error naming the field. It never contacts the BMC, so it is cheap
enough for every ``validate`` call, as Ironic's comment on fragile BMCs asks.
"""

import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from ferrum.common import exception
from ferrum.drivers import fields

PRIV_LEVELS = ('ADMINISTRATOR', 'CALLBACK', 'OPERATOR', 'USER')
PROTOCOL_VERSIONS = ('1.5', '2.0')
BRIDGING = ('no', 'single', 'dual')

PROPERTIES = {
    'ipmi_address': 'Required. IP address or host name of the BMC.',
    'ipmi_port': 'Optional. UDP port of the BMC. Default 623.',
    'ipmi_username': 'Optional. BMC user name; empty means the anonymous '
                     'user.',
    'ipmi_password': 'Optional. BMC password; empty means none. Never shown '
                     'by the API.',
    'ipmi_cipher_suite': 'Optional. IPMI 2.0 cipher suite, e.g. 17 or 3. '
                         'Default: the best one the BMC offers.',
    'ipmi_priv_level': 'Optional. Privilege level: ADMINISTRATOR (default), '
                       'OPERATOR, USER or CALLBACK.',
    'ipmi_protocol_version': 'Optional. "2.0" (default, lanplus) or "1.5" '
                             '(lan).',
    'ipmi_bridging': 'Optional. "no" (default), "single" or "dual".',
    'ipmi_target_channel': 'Bridging. Destination channel; required for '
                           'single and dual bridging.',
    'ipmi_target_address': 'Bridging. Destination address; required for '
                           'single and dual bridging.',
    'ipmi_transit_channel': 'Bridging. Transit channel; required for dual '
                            'bridging.',
    'ipmi_transit_address': 'Bridging. Transit address; required for dual '
                            'bridging.',
    'ipmi_local_address': 'Bridging. Local IPMB address; optional.',
    'ipmi_disable_boot_timeout': 'Optional. Whether to stop the BMC from '
                                 'forgetting the boot device after 60 s. '
                                 'Default: [ipmi] disable_boot_timeout.',
}

#: A host name ipmitool gets as an argument: no leading "-", which it would
#: read as an option, and nothing a resolver would not accept.
_HOSTNAME = re.compile(
    r'^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9])?$')


@dataclasses.dataclass(frozen=True)
class IpmiParams:
    """Everything needed to address one BMC. ``repr`` masks the password."""

    address: str
    port: int = 623
    username: str = ''
    password: str = dataclasses.field(default='', repr=False)
    cipher_suite: int | None = None
    priv_level: str = 'ADMINISTRATOR'
    protocol_version: str = '2.0'
    bridging: str = 'no'
    target_channel: str | None = None
    target_address: str | None = None
    transit_channel: str | None = None
    transit_address: str | None = None
    local_address: str | None = None
    disable_boot_timeout: bool | None = None

    @property
    def bmc(self) -> str:
        """How messages name the BMC: address and port, never credentials."""
        return '%s:%d' % (self.address, self.port)


def _address(info: Mapping[str, Any]) -> str:
    value = info.get('ipmi_address')
    if value is None or value == '':
        raise exception.MissingParameterValue(
            reason='driver_info ipmi_address is required: set it to the '
                   'IP address or host name of the BMC.')
    if not isinstance(value, str):
        raise fields.fail('ipmi_address',
                          'must be a string, not %r' % (value,))
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        pass
    if not _HOSTNAME.match(value):
        raise fields.fail('ipmi_address', 'must be an IP address or a host '
                          'name, not "%s"' % value[:100])
    return value


def _integer(info: Mapping[str, Any], field: str, low: int, high: int
             ) -> int | None:
    """An integer field, given as a number or a decimal or 0x string."""
    value = info.get(field)
    if value is None or value == '':
        return None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value, 0)
        except ValueError:
            number = None
    else:
        number = None
    if number is None or not low <= number <= high:
        raise fields.fail(field, 'must be an integer from %d to %d, not %r'
                          % (low, high, value))
    return number


def _boolean(info: Mapping[str, Any], field: str) -> bool | None:
    value = info.get(field)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ('true', '1', 'yes', 'on'):
        return True
    if text in ('false', '0', 'no', 'off'):
        return False
    raise fields.fail(field, 'must be true or false, not %r' % (value,))


def _hex_byte(number: int | None) -> str | None:
    return None if number is None else '0x%02x' % number


def _bridging(info: Mapping[str, Any]) -> dict[str, Any]:
    mode = fields.choice(info, 'ipmi_bridging', BRIDGING, 'no')
    numbers = {name: _integer(info, 'ipmi_%s' % name, 0, 255)
               for name in ('target_channel', 'target_address',
                            'transit_channel', 'transit_address',
                            'local_address')}
    needed = {'no': (), 'single': ('target_channel', 'target_address'),
              'dual': ('target_channel', 'target_address',
                       'transit_channel', 'transit_address')}[mode]
    for name in needed:
        if numbers[name] is None:
            raise exception.MissingParameterValue(
                reason='driver_info ipmi_%s is required with ipmi_bridging '
                       '"%s"' % (name, mode))
    values: dict[str, Any] = {'bridging': mode}
    if mode != 'no':
        values.update({name: _hex_byte(numbers[name]) for name in needed})
    values['local_address'] = _hex_byte(numbers['local_address'])
    return values


def parse(info: Mapping[str, Any]) -> IpmiParams:
    """Check ``info`` and return the BMC's parameters.

    :raises MissingParameterValue: ipmi_address, or a field the chosen
        bridging needs, is missing.
    :raises InvalidParameterValue: a field has a wrong value; the message
        names it (never the password's value).
    """
    protocol = fields.choice(info, 'ipmi_protocol_version',
                             PROTOCOL_VERSIONS, '2.0')
    suite = _integer(info, 'ipmi_cipher_suite', 0, 255)
    if suite is not None and protocol == '1.5':
        raise fields.fail('ipmi_cipher_suite', 'cannot be used with '
                          'ipmi_protocol_version 1.5; cipher suites are '
                          'IPMI 2.0')
    return IpmiParams(
        address=_address(info),
        port=_integer(info, 'ipmi_port', 1, 65535) or 623,
        username=fields.string(info, 'ipmi_username'),
        password=fields.string(info, 'ipmi_password'),
        cipher_suite=suite,
        priv_level=fields.choice(info, 'ipmi_priv_level', PRIV_LEVELS,
                                 'ADMINISTRATOR'),
        protocol_version=protocol,
        disable_boot_timeout=_boolean(info, 'ipmi_disable_boot_timeout'),
        **_bridging(info))
