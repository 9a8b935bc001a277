# SPDX-License-Identifier: Apache-2.0
"""``/v1/lookup`` and ``/v1/heartbeat/{node}``: what a ramdisk agent calls.

As in Ironic (API 1.22 and later; 404 before): both are public, since an
agent has no credentials, and both only find nodes in which an agent is
expected (``states.AGENT_STATES``). Everything else, including a node
that exists in another state, is the same bare 404, so an anonymous
caller learns nothing about the other nodes; and what lookup returns of
the node has its secrets masked as Ironic masks them.
"""

import logging
from typing import Any

import flask

from ferrum.api import body
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.schemas import agent as agent_schema
from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers.agent import inband
from ferrum.objects import agent_token
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj

LOG = logging.getLogger(__name__)
_MINOR = 22
#: The disk formats the agent may write (ferrum deploys whole-disk
#: images: see doc/deploy.md).
PERMITTED_IMAGE_FORMATS = ('raw', 'qcow2')


def _require_version(what: str) -> None:
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what=what, minor=_MINOR, header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))


def _not_found(ident: str, why: str) -> exception.NodeNotFound:
    # DEBUG: the endpoints are public, and anyone could fill the log.
    LOG.debug('Agent call for node %(node)s refused: %(why)s',
             {'node': ident[:100], 'why': why})
    return exception.NodeNotFound(node=ident[:100])


def _agent_node(node_ident: int | str, shown: str) -> node_obj.Node:
    """The node, when it exists and an agent may be running on it.

    :param shown: how the caller named it, for the 404.
    """
    try:
        node = node_obj.Node.get(services.db(), node_ident)
    except exception.NodeNotFound:
        raise _not_found(shown, 'no such node') from None
    if node.provision_state not in states.AGENT_STATES:
        raise _not_found(shown, 'provision state "%s"'
                         % node.provision_state)
    return node


def _by_addresses(addresses: list[str]) -> node_obj.Node:
    for address in addresses:
        for port in port_obj.Port.list(services.db(), address=address,
                                       limit=1):
            return _agent_node(port.node_id, ','.join(addresses))
    raise _not_found(','.join(addresses), 'no port has these addresses')


def lookup() -> dict[str, Any]:
    _require_version('/v1/lookup')
    raw = flask.request.args.get('addresses', '')
    addresses = [a.strip().lower() for a in raw.split(',') if a.strip()]
    node_uuid = flask.request.args.get('node_uuid')
    if node_uuid and not base.is_uuid_like(node_uuid):
        raise exception.InvalidParameterValue(reason=(
            '"node_uuid" must be a UUID, not "%s".' % node_uuid[:100]))
    if not addresses and not node_uuid:
        raise exception.InvalidParameterValue(reason=(
            'Lookup needs "addresses" (the MAC addresses of the node, comma '
            'separated) or "node_uuid".'))
    node = (_agent_node(node_uuid, node_uuid) if node_uuid
            else _by_addresses(addresses))
    # The first lookup gets the token, every later one the mask (Ironic's
    # rule): an agent started by someone else later cannot take over.
    token = agent_token.issue(services.db(), node.id)
    return {
        'node': inband.node_view(node),
        'config': {
            'heartbeat_timeout': services.conf().api.ramdisk_heartbeat_timeout,
            'agent_token': token or agent_token.MASK,
            'agent_token_required': True,
            'agent_md5_checksum_enable': False,
            'disable_deep_image_inspection': False,
            'permitted_image_formats': list(PERMITTED_IMAGE_FORMATS),
        },
    }


def _refuse_unknown_field(request: dict[str, Any], field: str,
                          minor: int) -> None:
    # Ironic's answer to a field older versions do not have: 400.
    if field in request and not microversion.at_least(minor):
        raise exception.InvalidParameterValue(reason=(
            'Field "%s" not recognised at API version %s; it needs 1.%d.'
            % (field, microversion.as_string(
                microversion.request_version()), minor)))


def heartbeat(node_ident: str) -> flask.Response:
    _require_version('/v1/heartbeat/{node}')
    request = body.json_body(agent_schema.HEARTBEAT)
    _refuse_unknown_field(request, 'agent_version', 36)
    _refuse_unknown_field(request, 'agent_token', 62)
    _refuse_unknown_field(request, 'agent_verify_ca', 68)
    # Fast track's agent status: ferrum has no fast track to use it for.
    _refuse_unknown_field(request, 'agent_status', 72)
    _refuse_unknown_field(request, 'agent_status_message', 72)
    node = _agent_node(node_ident, node_ident)
    try:
        verify_ca = request.get('agent_verify_ca')
        services.rpc().heartbeat(
            node.id, request['callback_url'], request.get('agent_version'),
            request.get('agent_token'),
            verify_ca if isinstance(verify_ca, str) else None)
    except exception.NodeNotWaiting:
        # It moved on since it was read: the same answer as above.
        raise _not_found(node_ident, 'no longer waiting') from None
    return flask.Response(status=202)
