# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/validate``, ``/management/boot_device`` and
``/management/inject_nmi``.

These ask the node's driver, so they go to its conductor.
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.schemas import node as node_schema
from ferrum.api.views import unserved
from ferrum.common import exception


def _node_id(node_ident: str, rule: str) -> int:
    return access.node(node_ident, rule).id


def validate(node_ident: str) -> dict[str, Any]:
    """Every interface kind but vendor, as Ironic reports them; the kinds
    ferrum does not serve are "not supported", with no result."""
    result = services.rpc().validate_driver_interfaces(
        _node_id(node_ident, 'baremetal:node:validate'))
    result.pop('vendor', None)
    for kind in unserved.INTERFACES:
        result[kind] = {'result': None, 'reason': 'not supported'}
    return dict(sorted(result.items()))


def get_boot_device(node_ident: str) -> dict[str, Any]:
    return services.rpc().get_boot_device(
        _node_id(node_ident, 'baremetal:node:get_boot_device'))


def set_boot_device(node_ident: str) -> flask.Response:
    request = body.json_body(node_schema.BOOT_DEVICE)
    services.rpc().set_boot_device(_node_id(node_ident,
                                           'baremetal:node:set_boot_device'),
                                   request['boot_device'],
                                   request.get('persistent', False))
    return flask.Response(status=204)


def inject_nmi(node_ident: str) -> flask.Response:
    if not microversion.at_least(29):
        # Ironic's answer before 1.29: not found, as an unknown path.
        raise exception.NotFoundAtVersion(
            what='/v1/nodes/{node}/management/inject_nmi', minor=29,
            header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))
    services.rpc().inject_nmi(_node_id(node_ident,
                                       'baremetal:node:inject_nmi'))
    return flask.Response(status=204)


def get_supported_boot_devices(node_ident: str) -> dict[str, Any]:
    devices = services.rpc().get_supported_boot_devices(
        _node_id(node_ident, 'baremetal:node:get_boot_device'))
    return {'supported_boot_devices': devices}
