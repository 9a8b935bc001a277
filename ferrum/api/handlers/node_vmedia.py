# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/vmedia``: attach (1.89), detach (1.89) and list
(1.93) a node's virtual media devices, as Ironic.

Attaching and detaching answer 204 once the conductor has taken the
node's lock and handed the work to a worker; a failure, a driver without
virtual media included, becomes the node's ``last_error``. The list asks
the BMC while the client waits: a driver without virtual media is a 400.
The ``redfish`` management interface has them.
"""

import urllib.parse
from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import microversion
from ferrum.api import services
from ferrum.common import exception

#: Ironic's virtual media devices.
DEVICES = ('disk', 'cdrom', 'floppy')
#: The URL schemes Ironic passes to a BMC.
_SCHEMES = ('http', 'https', 'nfs', 'cifs', 'smb')
_ATTACH: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'device_type': {'type': 'string', 'enum': list(DEVICES)},
        'image_url': {'type': 'string', 'maxLength': 2048},
        'image_download_source': {'type': 'string',
                                  'enum': ['http', 'local', 'swift']},
    },
    'required': ['device_type', 'image_url'],
    'additionalProperties': False,
}
_PATH = '/v1/nodes/{node}/vmedia'


def attach(node_ident: str) -> flask.Response:
    microversion.endpoint(89, _PATH)
    request = body.json_body(_ATTACH)
    scheme = urllib.parse.urlparse(request['image_url']).scheme
    if scheme not in _SCHEMES:
        raise exception.InvalidParameterValue(
            reason='Unsupported or missing URL scheme: %s' % scheme[:20])
    node = access.node(node_ident, 'baremetal:node:vmedia:attach')
    # The BMC downloads the image from the URL itself, so "local" (an
    # image served by ferrum) has nothing to serve; it is accepted as
    # Ironic accepts it and the URL goes to the BMC.
    services.rpc().attach_virtual_media(node.id, request['device_type'],
                                        request['image_url'])
    return flask.Response(status=204)


def detach(node_ident: str) -> flask.Response:
    microversion.endpoint(89, _PATH)
    raw = flask.request.args.get('device_types')
    devices = [item for item in raw.split(',') if item] if raw else None
    invalid = [item for item in devices or () if item not in DEVICES]
    if invalid:
        raise exception.InvalidParameterValue(
            reason='Invalid device type(s) %s (valid are %s)'
                   % (', '.join(item[:20] for item in invalid[:5]),
                      ', '.join(DEVICES)))
    node = access.node(node_ident, 'baremetal:node:vmedia:detach')
    services.rpc().detach_virtual_media(node.id, devices)
    return flask.Response(status=204)


def get(node_ident: str) -> flask.Response:
    microversion.endpoint(93, _PATH)
    node = access.node(node_ident, 'baremetal:node:vmedia:get')
    # Ironic answers the conductor's list itself, not an object.
    return flask.jsonify(services.rpc().get_virtual_media(node.id))
