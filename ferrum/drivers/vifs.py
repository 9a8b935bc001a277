# SPDX-License-Identifier: Apache-2.0
"""Where attached VIFs are recorded, for every network interface.

As in Ironic, a VIF attached to a node is recorded on one of its physical
ports, as ``internal_info['tenant_vif_port_id']``: a network interface that
plugs ports into networks finds there which VIF each port serves. A free
port is chosen (one without a VIF; PXE-enabled ports first, then the
oldest), or the port the client named with ``port_uuid``.

A node without a free port still accepts a VIF: it is recorded in the
node's ``driver_internal_info['vifs']`` until a port is there for it.
Ironic's ``noop`` interface records nothing at all; its ``flat`` and
``neutron`` ones refuse such a VIF (``NoFreePhysicalPorts``). ferrum keeps
it, so that listing shows what was attached.

The keys are :mod:`ferrum.objects.vif`'s, which also forgets them when a
node is given back without a tear-down.

The caller holds the node's exclusive lock (attach, detach) or a shared one
(listing). Port rows are written at once; the node's
``driver_internal_info`` is written when the task releases the lock.
"""

from typing import Any

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from ferrum.objects.vif import NODE_VIFS
from ferrum.objects.vif import PORT_VIF


def _ports(db: db_api.Database, node: node_obj.Node) -> list[port_obj.Port]:
    return port_obj.Port.list(db, node_id=node.id)


def attached(db: db_api.Database, node: node_obj.Node) -> list[str]:
    """The IDs of the VIFs attached to ``node``: ports' first."""
    found = [port.internal_info[PORT_VIF] for port in _ports(db, node)
             if port.internal_info.get(PORT_VIF)]
    found += [vif for vif in node.driver_internal_info.get(NODE_VIFS, [])
              if vif not in found]
    return found


def attach(db: db_api.Database, node: node_obj.Node,
           vif_info: dict[str, Any]) -> None:
    """Record VIF ``vif_info['id']`` on a free port, or on the node.

    :raises VifAlreadyAttached: it is attached to this node already.
    :raises InvalidParameterValue: ``port_uuid`` is not a free port of it.
    """
    vif = str(vif_info['id'])
    ports = _ports(db, node)
    for port in ports:
        if port.internal_info.get(PORT_VIF) == vif:
            raise exception.VifAlreadyAttached(vif=vif, object_type='port',
                                               object_uuid=port.uuid)
    if vif in node.driver_internal_info.get(NODE_VIFS, []):
        raise exception.VifAlreadyAttached(vif=vif, object_type='node',
                                           object_uuid=node.uuid)
    chosen = _port_for(node, ports, vif_info.get('port_uuid'))
    if chosen is None:
        node.driver_internal_info[NODE_VIFS] = node.driver_internal_info.get(
            NODE_VIFS, []) + [vif]
        return
    chosen.internal_info = dict(chosen.internal_info, **{PORT_VIF: vif})
    chosen.save()


def _port_for(node: node_obj.Node, ports: list[port_obj.Port],
              wanted: Any) -> port_obj.Port | None:
    """The port to record a new VIF on, or None (no free port)."""
    free = [port for port in ports if not port.internal_info.get(PORT_VIF)]
    if wanted is None:
        free.sort(key=lambda port: (not port.pxe_enabled, port.id))
        return free[0] if free else None
    for port in ports:
        if port.uuid == str(wanted).lower():
            if port in free:
                return port
            raise exception.InvalidParameterValue(
                reason='Port %s already has VIF %s attached; detach it or '
                       'name another port.' % (port.uuid,
                                               port.internal_info[PORT_VIF]))
    raise exception.InvalidParameterValue(
        reason='Port %s is not a port of node %s.' % (str(wanted)[:100],
                                                      node.uuid))


def detach(db: db_api.Database, node: node_obj.Node, vif: str) -> None:
    """Forget VIF ``vif`` wherever it is recorded.

    :raises VifNotAttached: it is not attached to this node.
    """
    for port in _ports(db, node):
        if port.internal_info.get(PORT_VIF) == vif:
            port.internal_info = {key: value for key, value in
                                  port.internal_info.items()
                                  if key != PORT_VIF}
            port.save()
            return
    waiting = node.driver_internal_info.get(NODE_VIFS, [])
    if vif not in waiting:
        raise exception.VifNotAttached(vif=vif, node=node.uuid)
    node.driver_internal_info[NODE_VIFS] = [v for v in waiting if v != vif]


def on_port(port: port_obj.Port) -> str | None:
    """The VIF recorded on ``port``, if any."""
    vif = port.internal_info.get(PORT_VIF)
    return str(vif) if vif else None
