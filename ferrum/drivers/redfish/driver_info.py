# SPDX-License-Identifier: Apache-2.0
"""The ``driver_info`` of Redfish nodes, with Ironic's names, checked
without I/O.

:func:`parse` turns a node's ``driver_info`` into :class:`RedfishParams` or
raises an error naming the field; it never contacts the BMC (``validate``
calls it, and must not). Importing this module needs no sushy.
"""

import dataclasses
import os
import urllib.parse
from collections.abc import Mapping
from typing import Any

from oslo_utils import strutils

from ferrum.common import exception
from ferrum.drivers import fields

AUTH_TYPES = ('basic', 'session', 'auto')

PROPERTIES = {
    'redfish_address': 'Required. URL of the BMC\'s Redfish service, e.g. '
                       'https://10.0.0.5 or 10.0.0.5:8443 (https:// when no '
                       'scheme is given).',
    'redfish_system_id': 'Optional. The System to manage: its path '
                         '(/redfish/v1/Systems/1) or its Id. Needed when the '
                         'BMC has more than one System.',
    'redfish_username': 'Optional. The BMC user name.',
    'redfish_password': 'Optional. The BMC password. Never shown by the API.',
    'redfish_verify_ca': 'Optional. Whether the BMC\'s TLS certificate is '
                         'checked: true (default, against the system\'s CA '
                         'store), false, or the path of a CA bundle file or '
                         'directory on the conductor.',
    'redfish_auth_type': 'Optional. basic, session, or auto (default: a '
                         'Redfish session when the BMC has a SessionService, '
                         'else HTTP Basic).',
}

#: The root of the Redfish service; a system id without "/" is under it.
ROOT = '/redfish/v1/'


@dataclasses.dataclass(frozen=True)
class RedfishParams:
    """Everything needed to address one System. ``repr`` masks the
    password."""

    address: str
    system_id: str = ''
    username: str = ''
    password: str = dataclasses.field(default='', repr=False)
    verify_ca: bool | str = True
    auth_type: str = 'auto'

    @property
    def system_path(self) -> str:
        """The System's path, or '' when the BMC is to say (one System)."""
        if not self.system_id or self.system_id.startswith('/'):
            return self.system_id
        return '%sSystems/%s' % (ROOT, urllib.parse.quote(self.system_id,
                                                          safe=''))


def _address(info: Mapping[str, Any]) -> str:
    value = fields.string(info, 'redfish_address').strip()
    if not value:
        raise exception.MissingParameterValue(
            reason='driver_info redfish_address is required: set it to the '
                   'URL of the BMC\'s Redfish service, e.g. '
                   'https://10.0.0.5.')
    if '://' not in value:
        value = 'https://' + value
    url = fields.http_url(value, 'redfish_address', 'set redfish_username '
                          'and redfish_password instead')
    return '%s://%s%s' % (url.scheme, url.netloc, url.path.rstrip('/'))


def _system_id(info: Mapping[str, Any]) -> str:
    value = fields.string(info, 'redfish_system_id').strip()
    if value.startswith('/') and not value.startswith(ROOT):
        raise fields.fail('redfish_system_id', 'must be a path under %s or a '
                          'System Id, not "%s"' % (ROOT, value[:100]))
    return value.rstrip('/')


def _verify_ca(info: Mapping[str, Any]) -> bool | str:
    value = info.get('redfish_verify_ca')
    if value is None or value == '':
        return True
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise fields.fail('redfish_verify_ca', 'must be true, false or the '
                          'path of a CA bundle, not %r' % (value,))
    choice = strutils.bool_from_string(value, default=None)
    if choice is not None:
        return bool(choice)
    if not os.path.exists(value):
        raise fields.fail('redfish_verify_ca', 'is neither true nor false '
                          'nor the path of an existing CA bundle file or '
                          'directory on the conductor: "%s"' % value[:200])
    return value


def parse(info: Mapping[str, Any]) -> RedfishParams:
    """Check ``info`` and return the System's parameters.

    :raises MissingParameterValue: redfish_address is missing.
    :raises InvalidParameterValue: a field has a wrong value; the message
        names it (never the password's value).
    """
    return RedfishParams(
        address=_address(info), system_id=_system_id(info),
        username=fields.string(info, 'redfish_username'),
        password=fields.string(info, 'redfish_password'),
        verify_ca=_verify_ca(info), auth_type=fields.choice(
            info, 'redfish_auth_type', AUTH_TYPES, 'auto'))
