# SPDX-License-Identifier: Apache-2.0
"""``/v1/lookup`` and ``/v1/heartbeat/{node}``: what a ramdisk agent calls.

As in Ironic (API 1.22 and later; 404 before): both are public, since an
agent has no credentials, and both only find nodes in which an agent is
expected (``states.AGENT_STATES``), so they reveal nothing about the rest.
"""

from typing import Any

import flask

from ferrum.api import body
from ferrum.api import microversion
from ferrum.api import node_lookup
from ferrum.api import services
from ferrum.api.schemas import agent as agent_schema
from ferrum.common import exception
from ferrum.common import states
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj

_MINOR = 22
_MAX_ADDRESSES = 64
#: Seconds between heartbeats an agent should keep (Ironic's default).
_HEARTBEAT_TIMEOUT = 300


def _require_version(what: str) -> None:
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what=what, minor=_MINOR, header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))


def _find(addresses: list[str], node_uuid: str | None) -> node_obj.Node:
    db = services.db()
    if node_uuid:
        return node_obj.Node.get(db, node_uuid)
    for address in addresses:
        for port in port_obj.Port.list(db, address=address, limit=1):
            return node_obj.Node.get(db, port.node_id)
    raise exception.NodeNotFound(node=', '.join(addresses)[:100])


def lookup() -> dict[str, Any]:
    _require_version('/v1/lookup')
    raw = flask.request.args.get('addresses', '')
    addresses = [a.strip().lower() for a in raw.split(',') if a.strip()]
    node_uuid = flask.request.args.get('node_uuid')
    if len(addresses) > _MAX_ADDRESSES:
        raise exception.InvalidParameterValue(reason=(
            'Lookup takes at most %d addresses.' % _MAX_ADDRESSES))
    if not addresses and not node_uuid:
        raise exception.InvalidParameterValue(reason=(
            'Lookup needs "addresses" (the MAC addresses of the node, comma '
            'separated) or "node_uuid".'))
    node = _find(addresses, node_uuid)
    if node.provision_state not in states.AGENT_STATES:
        raise exception.NodeNotWaiting(node=node.uuid,
                                       state=node.provision_state)
    return {
        'node': {'uuid': node.uuid, 'properties': node.properties,
                 'instance_info': node.instance_info,
                 'driver_internal_info': node.driver_internal_info},
        'config': {'heartbeat_timeout': _HEARTBEAT_TIMEOUT},
    }


def heartbeat(node_ident: str) -> flask.Response:
    _require_version('/v1/heartbeat/{node}')
    request = body.json_body(agent_schema.HEARTBEAT)
    if 'agent_version' in request:
        microversion.require(36, 'agent_version in a heartbeat')
    if 'agent_token' in request:
        microversion.require(62, 'agent_token in a heartbeat')
    node = node_lookup.get(node_ident)
    services.rpc().heartbeat(node.id, request['callback_url'],
                             request.get('agent_version'))
    return flask.Response(status=202)
