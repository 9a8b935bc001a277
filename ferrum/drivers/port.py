# SPDX-License-Identifier: Apache-2.0
"""Ports that a driver finds on the hardware: one per MAC, never twice.

An inspect interface reports the node's NICs by MAC address;
:func:`add_missing` creates a port for each MAC the node has no port for
yet, as Ironic's ``inspect_utils.create_ports_if_not_exist`` does, so
inspecting again adds only what is new. Ports that exist are left as they
are (an operator may have changed ``pxe_enabled`` or
``local_link_connection``), and no port is deleted: a NIC the BMC stopped
listing may only be down.

The caller holds the node's exclusive lock (``inspect_hardware``), so no
other task of this node adds ports meanwhile. A MAC that is already a port
of another node, or one the API added at the same moment, is refused by
the database's unique address (:class:`~ferrum.common.exception.
MACAlreadyExists`); it is reported in the result, not raised, so that one
such NIC does not fail the whole inspection. Port rows are written at once,
not when the task releases the lock.
"""

import dataclasses
import logging
from collections.abc import Iterable

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Added:
    """What :func:`add_missing` did with each MAC (all in lower case)."""

    #: MACs that got a new port.
    created: list[str] = dataclasses.field(default_factory=list)
    #: MACs the node had a port for already.
    existing: list[str] = dataclasses.field(default_factory=list)
    #: MAC (as given) -> why no port was made for it.
    refused: dict[str, str] = dataclasses.field(default_factory=dict)


def _owner(db: db_api.Database, address: str) -> str:
    ports = port_obj.Port.list(db, address=address)
    return ports[0].node_uuid if ports else 'unknown (deleted meanwhile)'


def add_missing(db: db_api.Database, node: node_obj.Node,
                addresses: Iterable[str]) -> Added:
    """Create a port of ``node`` for each of ``addresses`` it lacks.

    New ports are PXE-enabled, as ports made through the API are by
    default. Each outcome is logged with the node's UUID.

    :param addresses: MAC addresses, in any letter case.
    :returns: which MACs got a port, had one, or were refused and why
        (not a MAC address, or already a port of another node).
    """
    result = Added()
    have = {port.address for port in port_obj.Port.list(db, node_id=node.id)}
    for given in addresses:
        try:
            address = port_obj.normalize_mac(given)
        except exception.InvalidMAC:
            result.refused[given] = 'not a MAC address'
            continue
        if address in have:
            result.existing.append(address)
            continue
        try:
            port = port_obj.Port.create(db, {'node_id': node.id,
                                             'address': address})
        except exception.MACAlreadyExists:
            owner = _owner(db, address)
            if owner == node.uuid:  # added through the API meanwhile
                result.existing.append(address)
                continue
            result.refused[given] = 'already a port of node %s' % owner
            LOG.warning('Node %(node)s: no port created for MAC %(mac)s, '
                        'which is already a port of node %(owner)s',
                        {'node': node.uuid, 'mac': address, 'owner': owner})
            continue
        have.add(address)
        result.created.append(address)
        LOG.info('Node %(node)s: port %(port)s created for MAC %(mac)s',
                 {'node': node.uuid, 'port': port.uuid, 'mac': address})
    return result
