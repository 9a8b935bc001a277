# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/vifs`` (API 1.28 and later): attach, list, detach.

Below 1.28 the routes answer 404, as in Ironic, where the resource does not
exist at that version. The conductor does the work under the node's lock,
through the node's network interface.
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.schemas import vif as vif_schema
from ferrum.common import exception

_MINOR = 28


def _node_id(node_ident: str, rule: str) -> int:
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what='/v1/nodes/{node}/vifs', minor=_MINOR,
            header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))
    return access.node(node_ident, rule).id


def list_vifs(node_ident: str) -> dict[str, Any]:
    return {'vifs': services.rpc().vif_list(
        _node_id(node_ident, 'baremetal:node:vif:list'))}


def attach_vif(node_ident: str) -> flask.Response:
    node_id = _node_id(node_ident, 'baremetal:node:vif:attach')
    vif_info = body.json_body(vif_schema.ATTACH)
    if 'portgroup_uuid' in vif_info:
        raise exception.InvalidParameterValue(
            reason='portgroup_uuid cannot be used: ferrum serves no port '
                   'groups; name a port with port_uuid, or neither.')
    services.rpc().vif_attach(node_id, vif_info)
    return flask.Response(status=204)


def detach_vif(node_ident: str, vif_id: str) -> flask.Response:
    services.rpc().vif_detach(
        _node_id(node_ident, 'baremetal:node:vif:detach'), vif_id)
    return flask.Response(status=204)
