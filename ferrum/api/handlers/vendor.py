# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/vendor_passthru``: a node's vendor methods, as Ironic.

``GET .../vendor_passthru/methods`` lists them; any HTTP method on
``.../vendor_passthru?method=<name>`` calls one with the JSON body as its
arguments. An asynchronous method answers 202 (its failure shows in the
node's ``last_error``), a synchronous one 200 with what it returned.
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import services
from ferrum.common import exception

_RULE = 'baremetal:node:vendor_passthru'


def list_methods(node_ident: str) -> dict[str, Any]:
    node = access.node(node_ident, _RULE)
    return services.rpc().get_vendor_passthru_methods(node.id)


def call(node_ident: str) -> flask.Response:
    method = flask.request.args.get('method')
    if not method:
        raise exception.MissingParameterValue(reason=(
            'Vendor passthru needs "?method=<name>"; GET '
            '/v1/nodes/%s/vendor_passthru/methods lists them.'
            % node_ident[:100]))
    node = access.node(node_ident, _RULE)
    info: Any = {}
    if flask.request.method in ('POST', 'PUT', 'PATCH'):
        info = body.json_body() if flask.request.content_length else {}
    if not isinstance(info, dict):
        raise exception.InvalidParameterValue(reason=(
            'A vendor passthru body is a JSON object of the method\'s '
            'arguments.'))
    result = services.rpc().vendor_passthru(node.id, method,
                                            flask.request.method, info)
    if result['async']:
        return flask.Response(status=202)
    return flask.jsonify(result['return'])
