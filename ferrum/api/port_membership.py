# SPDX-License-Identifier: Apache-2.0
"""The rules between ports and their port group, as Ironic enforces them.

A port joins a group (at create, or by PATCHing ``portgroup_uuid``) only:

- if the group is on the port's node (400; Ironic checks this at create
  only, ferrum at every change, since a port in another node's bond is
  never right);
- if the group supports standalone ports, or the port is not PXE-enabled
  and has no VIF: a group with ``standalone_ports_supported`` false may
  only hold ports that never work alone (409);
- if its physical network is the group's: that of the group's other ports,
  else the group's own ``physical_network`` (409).

A group, for its part, cannot stop supporting standalone ports while a
member is PXE-enabled or has a VIF (409), cannot move to another node
while it has ports (400) and cannot be deleted while it has ports (400).

Like port writes (see :mod:`ferrum.api.handlers.port`), these are checked
then written without the node's lock: no conductor code reads groups yet.
"""

from ferrum.api import services
from ferrum.common import exception
from ferrum.drivers import vifs
from ferrum.objects import port as port_obj
from ferrum.objects import portgroup as portgroup_obj


def _members(group: portgroup_obj.Portgroup,
             leaving: port_obj.Port | None = None) -> list[port_obj.Port]:
    return [p for p in port_obj.Port.list(services.db(),
                                          portgroup_id=group.id)
            if leaving is None or p.id != leaving.id]


def check_port(port: port_obj.Port, group: portgroup_obj.Portgroup,
               changed: set[str], creating: bool = False) -> None:
    """Refuse ``port`` (changed in ``changed``) as a member of ``group``.

    :raises InvalidParameterValue: the group is on another node.
    :raises PortgroupMembership: standalone ports or the physical network
        forbid it.
    """
    if group.node_id != port.node_id:
        raise exception.InvalidParameterValue(
            reason='Port can not be added to a portgroup belonging to a '
                   'different node.')
    if not group.standalone_ports_supported:
        _check_not_standalone(port, group, changed, creating)
    if creating or {'portgroup_id', 'physical_network'} & changed:
        _check_physical_network(port, group)


def _check_not_standalone(port: port_obj.Port,
                          group: portgroup_obj.Portgroup, changed: set[str],
                          creating: bool) -> None:
    if creating:
        if port.pxe_enabled:
            raise exception.PortgroupMembership(reason=(
                "Port group %s doesn't support standalone ports. This port "
                "cannot be created as a member of that portgroup as the "
                "port's 'pxe_enabled' field was set to True." % group.uuid))
        return
    if not ({'pxe_enabled', 'portgroup_id'} & changed or vifs.on_port(port)):
        return
    reasons = _standalone_uses(port, "'pxe_enabled' was set to True",
                               'VIF %s is attached to the port')
    if reasons:
        raise exception.PortgroupMembership(reason=(
            "Port group %s doesn't support standalone ports. This port %s "
            "cannot be a member of that port group because of: %s"
            % (group.uuid, port.uuid, ', '.join(reasons))))


def _standalone_uses(port: port_obj.Port, pxe: str, vif: str) -> list[str]:
    """Why ``port`` works alone (``pxe`` and ``vif`` say it, in the words
    of Ironic's message at hand), which a group without standalone ports
    cannot have."""
    reasons = [pxe] if port.pxe_enabled else []
    attached = vifs.on_port(port)
    if attached:
        reasons.append(vif % attached)
    return reasons


def _check_physical_network(port: port_obj.Port,
                            group: portgroup_obj.Portgroup) -> None:
    networks = {p.physical_network for p in _members(group, port)}
    if not networks and group.physical_network is not None:
        networks = {group.physical_network}
    if not networks:
        return
    if len(networks) > 1:
        raise exception.PortgroupMembership(reason=(
            'Port group %s has member ports with inconsistent physical '
            'networks (%s). All ports in a port group must have the same '
            'physical network.' % (group.uuid, ', '.join(
                sorted(str(n) for n in networks)))))
    expected = networks.pop()
    if port.physical_network != expected:
        raise exception.PortgroupMembership(reason=(
            'Port with physical network %s cannot become a member of port '
            'group %s which has ports in physical network %s.'
            % (port.physical_network, group.uuid, expected)))


def check_group_change(group: portgroup_obj.Portgroup,
                       changed: set[str]) -> None:
    """Refuse changes of ``group`` that its ports forbid.

    :raises PortgroupNotEmpty: it would move to another node with ports.
    :raises PortgroupMembership: standalone ports would be refused to
        PXE-enabled or VIF-holding members.
    """
    if 'node_id' in changed and group.has_ports():
        raise exception.PortgroupNotEmpty(portgroup=group.uuid)
    if ('standalone_ports_supported' in changed
            and not group.standalone_ports_supported):
        for member in _members(group):
            reasons = _standalone_uses(member, "'pxe_enabled' is set to True",
                                       'VIF %s is attached to this port')
            if reasons:
                raise exception.PortgroupMembership(reason=(
                    'standalone_ports_supported can not be set to False, '
                    'because the port group %s contains port with %s'
                    % (group.uuid, ', '.join(reasons))))
