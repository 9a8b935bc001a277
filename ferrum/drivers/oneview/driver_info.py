# SPDX-License-Identifier: Apache-2.0
"""What a OneView node holds, checked without I/O, and who owns its hardware.

A node names its server hardware in ``driver_info`` and the template its
profiles are made from in ``properties/capabilities``, as the dynamic
allocation spec says::

    driver_info:  server_hardware_uri = /rest/server-hardware/<id>
    properties:   capabilities =
        "server_profile_template_uri:/rest/server-profile-templates/<id>"

``driver_info applied_server_profile_uri`` is written by the driver when it
applies a profile and removed when it deletes it: it is how ferrum tells
its own profile from one a OneView user applied (:func:`ownership`).

Every profile ferrum applies is named ``<label> [<node uuid>]``
(:func:`profile_name`). The URI is known only once OneView's task has
finished, so a conductor that dies while OneView applies the profile
leaves it unrecorded; its name still says whose it is
(:func:`named_for`), and recovery, take-over, tear-down and the periodic
tasks treat such a profile as ferrum's, never as a OneView user's.
"""

import dataclasses
from collections.abc import Mapping
from typing import Any

from ferrum.common import exception

HARDWARE_URI = 'server_hardware_uri'
APPLIED_PROFILE_URI = 'applied_server_profile_uri'
TEMPLATE_URI = 'server_profile_template_uri'
HARDWARE_TYPE_URI = 'server_hardware_type_uri'
ENCLOSURE_GROUP_URI = 'enclosure_group_uri'

HARDWARE_PREFIX = '/rest/server-hardware/'
TEMPLATE_PREFIX = '/rest/server-profile-templates/'
PROFILE_PREFIX = '/rest/server-profiles/'

PROPERTIES = {
    HARDWARE_URI: 'Required. URI of the node\'s server hardware in OneView, '
                  'e.g. /rest/server-hardware/<id>.',
    APPLIED_PROFILE_URI: 'Written by the driver. URI of the server profile '
                         'ferrum applied to the hardware; a profile with '
                         'another URI, not named "<label> [<node uuid>]", '
                         'means a OneView user has the hardware. Set it '
                         'only when migrating nodes (ferrum-oneview-migrate '
                         'does).',
}

#: driver_internal_info key: the name of the profile being applied, written
#: before the request goes to OneView and removed once the URI is recorded
#: (or no such profile exists): an interrupted apply leaves it behind.
APPLYING = 'oneview_applying'

#: Ownership of a node's server hardware (the spec's three rules).
FREE = 'free'
FERRUM = 'ferrum'
ONEVIEW = 'oneview'


@dataclasses.dataclass(frozen=True)
class OneViewNode:
    """The OneView fields of one node."""

    server_hardware_uri: str
    server_profile_template_uri: str
    applied_server_profile_uri: str | None = None
    server_hardware_type_uri: str | None = None
    enclosure_group_uri: str | None = None


def capabilities(properties: Mapping[str, Any]) -> dict[str, str]:
    """``properties/capabilities`` as a dict, from "k:v,k:v" or a dict."""
    raw = properties.get('capabilities') or ''
    if isinstance(raw, Mapping):
        return {str(k): str(v) for k, v in raw.items()}
    if not isinstance(raw, str):
        raise exception.InvalidParameterValue(
            reason='properties/capabilities must be a string of key:value '
                   'pairs separated by commas, not %r' % (raw,))
    result = {}
    for item in raw.split(','):
        if not item.strip():
            continue
        key, sep, value = item.partition(':')
        if not sep or not key.strip():
            raise exception.InvalidParameterValue(
                reason='properties/capabilities item "%s" is not key:value'
                % item.strip()[:100])
        result[key.strip()] = value.strip()
    return result


def _uri(value: Any, where: str, prefix: str, required: bool) -> str | None:
    if value is None or value == '':
        if required:
            raise exception.MissingParameterValue(
                reason='%s is required: set it to the OneView URI (%s<id>)'
                % (where, prefix))
        return None
    if (not isinstance(value, str) or not value.startswith(prefix)
            or len(value) == len(prefix) or any(c.isspace() for c in value)):
        raise exception.InvalidParameterValue(
            reason='%s must be a OneView URI starting with %s, not %r'
            % (where, prefix, str(value)[:150]))
    return value


def parse(driver_info: Mapping[str, Any],
          properties: Mapping[str, Any]) -> OneViewNode:
    """Check a node's OneView fields.

    :raises MissingParameterValue: server_hardware_uri or the template
        capability is missing.
    :raises InvalidParameterValue: a value is not a URI of the right kind.
    """
    caps = capabilities(properties)
    hardware = _uri(driver_info.get(HARDWARE_URI),
                    'driver_info %s' % HARDWARE_URI, HARDWARE_PREFIX, True)
    template = _uri(caps.get(TEMPLATE_URI),
                    'properties/capabilities %s' % TEMPLATE_URI,
                    TEMPLATE_PREFIX, True)
    assert hardware is not None and template is not None
    return OneViewNode(
        server_hardware_uri=hardware,
        server_profile_template_uri=template,
        applied_server_profile_uri=_uri(
            driver_info.get(APPLIED_PROFILE_URI),
            'driver_info %s' % APPLIED_PROFILE_URI, PROFILE_PREFIX, False),
        server_hardware_type_uri=caps.get(HARDWARE_TYPE_URI) or None,
        enclosure_group_uri=caps.get(ENCLOSURE_GROUP_URI) or None)


def ownership(hardware_profile_uri: str | None,
              applied_profile_uri: str | None) -> str:
    """Who has the hardware, from its profile and the node's record.

    No profile: :data:`FREE`. The profile ferrum applied: :data:`FERRUM`.
    Any other profile: :data:`ONEVIEW` (a OneView user has the hardware).
    """
    if not hardware_profile_uri:
        return FREE
    if hardware_profile_uri == applied_profile_uri:
        return FERRUM
    return ONEVIEW


def profile_name(label: str, node_uuid: str) -> str:
    """The name of a profile ferrum applies to ``node_uuid``'s hardware.

    The node UUID in brackets is the rule :func:`named_for` checks; never
    change it without a migration: profiles on hardware carry it.
    """
    return '%s [%s]' % (label, node_uuid)


def named_for(name: Any, node_uuid: str) -> bool:
    """Whether a profile called ``name`` is one ferrum applied to the node
    ``node_uuid`` (see :func:`profile_name`)."""
    return isinstance(name, str) and name.endswith('[%s]' % node_uuid)


def compatibility_errors(hardware: Mapping[str, Any],
                         template: Mapping[str, Any],
                         node: OneViewNode) -> list[str]:
    """Why profiles of ``template`` cannot go on ``hardware`` (empty: they
    can).

    The template must be for the hardware's server hardware type and
    enclosure group, manage the boot order (the management interface sets
    it through the profile) and use physical MACs (ports match them).
    """
    errors = []
    hw_type = hardware.get('serverHardwareTypeUri')
    hw_group = hardware.get('serverGroupUri')
    if template.get('serverHardwareTypeUri') != hw_type:
        errors.append('template %s is for server hardware type %s but the '
                      'hardware is a %s' % (
                          template.get('uri'),
                          template.get('serverHardwareTypeUri'), hw_type))
    if template.get('enclosureGroupUri') != hw_group:
        errors.append('template %s is for enclosure group %s but the '
                      'hardware is in %s' % (
                          template.get('uri'),
                          template.get('enclosureGroupUri'), hw_group))
    if not (template.get('boot') or {}).get('manageBoot'):
        errors.append('template %s does not manage the boot order '
                      '(boot.manageBoot)' % template.get('uri'))
    mac_type = template.get('macType')
    if mac_type not in (None, 'Physical'):
        errors.append('template %s uses %s MACs; use Physical ones'
                      % (template.get('uri'), mac_type))
    if node.server_hardware_type_uri and (
            node.server_hardware_type_uri != hw_type):
        errors.append('capability %s is %s but the hardware is a %s' % (
            HARDWARE_TYPE_URI, node.server_hardware_type_uri, hw_type))
    if node.enclosure_group_uri and node.enclosure_group_uri != hw_group:
        errors.append('capability %s is %s but the hardware is in %s' % (
            ENCLOSURE_GROUP_URI, node.enclosure_group_uri, hw_group))
    return errors
