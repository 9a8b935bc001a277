# SPDX-License-Identifier: Apache-2.0
"""``/v1/ports`` and ``/v1/nodes/{node}/ports``: list, get, create, PATCH,
delete.

Ports are written by the API directly through :mod:`ferrum.objects.port`,
without a conductor and without the node's lock: no conductor code reads
ports yet (no driver boots from them, inspection does not create them), so
a port change has nothing to coordinate with. The unique MAC address is
enforced by the database. When a driver starts using ports, these writes
belong behind the rpcapi, under the node's lock, as in Ironic.

Like Ironic's conductor, the API refuses (409) port changes that would pull
the network from under a node:

- a new ``address`` while the node is ``active`` or has an instance,
  unless it is in maintenance: the instance's network was set up for the
  old MAC. Moving a port to another node changes the MACs of both nodes,
  so the same rule applies to the node it leaves and the node it joins;
- a new ``pxe_enabled``, ``local_link_connection`` or ``physical_network``
  unless the node is ``enroll``, ``manageable``, ``inspecting`` or
  ``inspect wait``, or in maintenance;
- any change while the node is ``inspecting``, which owns its ports then.

Creating and deleting ports is allowed in every state, as in Ironic, which
only refuses deleting a port with a VIF attached unless the node is in
maintenance. A port's group (``portgroup_uuid``, 1.24) is set at create or
by PATCH, under the rules of :mod:`ferrum.api.port_membership`; joining or
leaving one is a connectivity change as above.
"""

import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import node_lookup
from ferrum.api import port_membership
from ferrum.api import services
from ferrum.api.schemas import port as port_schema
from ferrum.api.schemas import portgroup as portgroup_schema
from ferrum.api.views import port as port_view
from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import vifs
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from ferrum.objects import portgroup as portgroup_obj

#: sort_key -> the minor version from which it may be used.
_SORT_VERSIONS: dict[str, int] = {
    'id': 1, 'uuid': 1, 'address': 1, 'node_id': 1, 'created_at': 1,
    'updated_at': 1, 'pxe_enabled': 19, 'physical_network': 34,
    'is_smartnic': 53, 'name': 88, 'description': 97, 'vendor': 100,
    'category': 101}
_CONNECTIVITY = frozenset({'pxe_enabled', 'local_link_connection',
                           'physical_network', 'portgroup_id'})
_CONNECTIVITY_STATES = frozenset({states.ENROLL, states.MANAGEABLE,
                                  states.INSPECTING, states.INSPECTWAIT})
#: What removing a field with PATCH sets it to.
_DEFAULTS: dict[str, Any] = {'extra': {}, 'local_link_connection': {},
                             'pxe_enabled': True, 'is_smartnic': False,
                             'available_for_dynamic_portgroup': True}


# ---- reading ---------------------------------------------------------------

class ShardWithNode(exception.FerrumException):
    """Ironic's OperationNotPermitted for a shard filter with a node."""

    msg_fmt = ('Operation not permitted: the shard filter cannot be '
               'combined with a node.')
    code = 403


def _node_filter(parent: node_obj.Node | None) -> dict[str, Any]:
    """The node_id filter from the URL, ``node_uuid`` or ``node``."""
    if parent is not None:
        return {'node_id': parent.id}
    args = flask.request.args
    node_uuid, node_ident = args.get('node_uuid'), args.get('node')
    if node_uuid is not None and not base.is_uuid_like(node_uuid):
        raise exception.InvalidParameterValue(
            reason='node_uuid must be a UUID, not "%s"; use the node '
                   'parameter for a name.' % node_uuid[:100])
    ident = node_uuid or node_ident
    if not ident:
        return {}
    if not base.is_uuid_like(ident):
        # A name in a query is refused, not "not found", before 1.5.
        microversion.require(5, 'The node filter with a node name')
    return {'node_id': access.visible_node(node_lookup.get(ident), ident).id}


def _filters(parent: node_obj.Node | None) -> dict[str, Any]:
    args = flask.request.args
    filters = _node_filter(parent)
    portgroup = args.get('portgroup')
    if portgroup is not None:
        microversion.require(24, 'The portgroup filter')
        if filters:
            raise exception.OperationNotPermitted(
                reason='Filtering ports by node and by port group at once '
                       'is not supported.')
        filters['portgroup_id'] = access.portgroup(
            portgroup, 'baremetal:portgroup:get').id
    shard = args.get('shard')
    if shard is not None:
        microversion.require(82, 'The shard filter')
        if 'node_id' in filters:
            # As Ironic: a shard is a set of nodes, not one.
            raise ShardWithNode()
        filters['shards'] = [item for item in shard.split(',') if item]
    address = args.get('address')
    if address is not None:
        filters['address'] = port_obj.normalize_mac(address)
    if args.get('description_contains') is not None:
        microversion.require(97, 'The description_contains filter')
        filters['description_contains'] = args['description_contains']
    if args.get('conductor_groups') is not None:
        microversion.require(99, 'The conductor_groups filter')
        if {'node_id', 'portgroup_id', 'address'} & set(filters):
            raise exception.InvalidParameterValue(
                reason='Filtering by conductor_groups cannot be combined '
                       'with node_ident, portgroup_ident, or node address '
                       'filters.')
        filters['conductor_groups'] = [
            group.strip().lower() for group in
            args['conductor_groups'].split(',') if group.strip()]
    return filters


def _fields(detail: bool) -> list[str]:
    """The fields a list shows: ``fields``, or per ``detail``."""
    return listing.list_fields(port_view.available_fields(),
                               port_view.LIST_FIELDS, detail)


def _page() -> tuple[listing.Page, port_obj.Port | None]:
    page = listing.parse_versioned_page(_SORT_VERSIONS, 'port')
    if page.marker is None:
        return page, None
    return page, access.port(page.marker, 'baremetal:port:get')


def _list(detail: bool, parent: node_obj.Node | None = None,
          group: portgroup_obj.Portgroup | None = None) -> dict[str, Any]:
    fields = _fields(detail)
    page, marker = _page()
    # A node's or group's ports were checked with it; the others are
    # confined to the nodes the caller's project owns or leases.
    project = (access.list_project('port')
               if parent is None and group is None else None)
    filters = ({'portgroup_id': group.id} if group is not None
               else _filters(parent))
    ports = port_obj.Port.list(
        services.db(), limit=page.limit, sort_key=page.sort_key,
        sort_dir=page.sort_dir, marker=marker, project=project, **filters)
    result: dict[str, Any] = {
        'ports': [port_view.render(p, fields) for p in ports]}
    result.update(listing.next_link(
        page, len(ports), ports[-1].uuid if ports else None))
    return result


def list_ports() -> dict[str, Any]:
    return _list(detail=False)


def list_details() -> dict[str, Any]:
    return _list(detail=True)


def _parent(node_ident: str) -> node_obj.Node:
    return access.node(node_ident, 'baremetal:port:get')


def list_of_group(group: portgroup_obj.Portgroup,
                  detail: bool) -> dict[str, Any]:
    """``/v1/portgroups/{group}/ports``: the caller may see ``group``."""
    return _list(detail, group=group)


def list_node_ports(node_ident: str) -> dict[str, Any]:
    node = _parent(node_ident)
    return _list(False, node)


def list_node_port_details(node_ident: str) -> dict[str, Any]:
    node = _parent(node_ident)
    return _list(True, node)


def get_port(port_ident: str) -> dict[str, Any]:
    available = port_view.available_fields()
    fields = listing.parse_fields(available)
    return port_view.render(access.port(port_ident, 'baremetal:port:get'),
                            fields or available)


# ---- writing ---------------------------------------------------------------

def _require_versions(values: Mapping[str, Any]) -> None:
    """Refuse (406) fields and local_link_connection keys newer than the
    request's version; ``values`` may hold only the keys that matter."""
    for name in values:
        microversion.require(port_view.FIELD_VERSIONS.get(name, 1),
                             'The port field "%s"' % name)
    link = values.get('local_link_connection')
    for key in link if isinstance(link, dict) else ():
        microversion.require(port_schema.LOCAL_LINK_KEYS.get(key, 1),
                             'The local_link_connection key "%s"' % key)
        if key.startswith('vtep-'):
            microversion.until(port_schema.VTEP_UNTIL,
                               'The local_link_connection key "%s"' % key)


def canonical_uuid(name: str, value: str) -> str:
    """``value`` in the canonical UUID spelling; 400 if it is not one."""
    if not base.is_uuid_like(value):
        raise exception.InvalidParameterValue(
            reason='%s must be a UUID, not "%s".' % (name, value[:100]))
    return str(uuidlib.UUID(value))


def no_node(node_uuid: str) -> exception.InvalidParameterValue:
    return exception.InvalidParameterValue(
        reason='Node %s given as node_uuid does not exist.' % node_uuid)


def target_node(node_uuid: str, rule: str) -> node_obj.Node:
    """The node a port or group is put on, as Ironic decides it: ``rule``
    against the node's owner and lessee first (403 for another project's
    node, or a missing one, unless the caller could do it on any node),
    and only then a missing node's 400."""
    node_uuid = canonical_uuid('node_uuid', node_uuid)
    try:
        node: node_obj.Node | None = node_obj.Node.get(services.db(),
                                                       node_uuid)
    except exception.NodeNotFound:
        node = None
    access.check(rule, access.node_target(node) if node is not None else {})
    if node is None:
        raise no_node(node_uuid)
    return node


def _creation_node(values: dict[str, Any]) -> node_obj.Node:
    """The node a new port goes on: ``node_uuid``, or from 1.94
    ``node_ident`` (a UUID or a name)."""
    if 'node_ident' in values:
        microversion.require(94, 'The port field "node_ident"')
        if 'node_uuid' in values:
            raise exception.InvalidParameterValue(
                reason='Give node_uuid or node_ident, not both.')
        node = access.named_node(values.pop('node_ident'))
        access.check('baremetal:port:create', access.node_target(node))
        return node
    if 'node_uuid' not in values:
        raise exception.InvalidParameterValue(
            reason="'node_uuid' is a required property")
    return target_node(values.pop('node_uuid'), 'baremetal:port:create')


def _group_named(ident: str) -> portgroup_obj.Portgroup:
    """The group a port's ``portgroup_uuid`` names; unknown is a 400."""
    try:
        return portgroup_obj.Portgroup.get(services.db(), ident)
    except exception.PortgroupNotFound as exc:
        raise exception.InvalidParameterValue(reason=str(exc)) from None


def create_port() -> flask.Response:
    values = body.json_body(port_schema.CREATE)
    group_ident = values.pop('portgroup_uuid', None)
    if group_ident is not None:
        microversion.require(24, 'The port field "portgroup_uuid"')
    _require_versions(values)
    port_schema.to_bool(values)
    node = _creation_node(values)
    values['node_id'] = node.id
    if values.get('name') is not None:
        portgroup_schema.check_name(values['name'], 'port')
    group = _group_named(group_ident) if group_ident is not None else None
    if group is not None:
        values['portgroup_id'] = group.id
    values['address'] = port_obj.normalize_mac(values['address'])
    if 'uuid' in values:
        values['uuid'] = canonical_uuid('uuid', values['uuid'])
    values['local_link_connection'] = port_schema.check_local_link_connection(
        values.get('local_link_connection', {}),
        values.get('is_smartnic', False))
    if group is not None:
        port_membership.check_port(port_obj.Port.unsaved(values), group,
                                   set(values), creating=True)
    try:
        port = port_obj.Port.create(services.db(), values)
    except exception.NodeNotFound:
        # Deleted since _target_node found it.
        raise no_node(node.uuid) from None
    return listing.created('ports', port.uuid, port_view.render(
        port, port_view.available_fields()))


def _patch_changes(port: port_obj.Port) -> dict[str, Any]:
    """The fields a PATCH changes, checked for versions and read-only."""
    patch = body.json_body()
    body.validate(patch, body.PATCH_SCHEMA, 'JSON Patch')
    # Before applying: a hidden field is absent from the document, and
    # the patch would otherwise fail as adding an unknown attribute.
    _require_versions(dict.fromkeys(op['path'].split('/')[1] for op in patch))
    document = port_view.render(port, port_view.available_fields())
    patched = body.apply_patch(document, patch)
    changes = {name: patched.get(name) for name in document
               if patched.get(name) != document[name]}
    read_only = sorted(set(changes) - port_schema.UPDATABLE)
    if read_only:
        raise exception.InvalidParameterValue(
            reason="'/%s' is a read-only attribute and cannot be updated."
                   % read_only[0])
    for name in ('address', 'node_uuid'):
        if name in changes and changes[name] is None:
            raise exception.InvalidParameterValue(
                reason="'/%s' is a mandatory attribute and cannot be "
                       "removed." % name)
    for name, default in _DEFAULTS.items():
        if name in changes and changes[name] is None:
            changes[name] = default
    body.validate(changes, port_schema.UPDATE, 'port update')
    port_schema.to_bool(changes)
    _require_versions(changes)
    return changes


def _check_node_allows(port: port_obj.Port, node: node_obj.Node,
                       changed: set[str]) -> None:
    """Refuse (409) changes the node's state forbids; see the module doc."""
    if node.provision_state == states.INSPECTING:
        raise exception.InvalidState(reason=(
            'Cannot update port %s while node %s is inspecting.'
            % (port.uuid, node.uuid)))
    if node.maintenance:
        return
    if ({'address', 'node_id'} & changed
            and (node.provision_state == states.ACTIVE
                 or node.instance_uuid is not None)):
        raise exception.InvalidState(reason=(
            'Cannot change the address or node of port %s while node %s is '
            'active or has an instance; set the node in maintenance first.'
            % (port.uuid, node.uuid)))
    connectivity = sorted(_CONNECTIVITY & changed)
    if connectivity and node.provision_state not in _CONNECTIVITY_STATES:
        raise exception.InvalidState(reason=(
            'Port %s cannot have %s changed while node %s is "%s"; it must '
            'be %s, or in maintenance.' % (
                port.uuid, ', '.join(connectivity), node.uuid,
                node.provision_state,
                ', '.join(sorted(_CONNECTIVITY_STATES)))))


def patch_port(port_ident: str) -> dict[str, Any]:
    port = access.port(port_ident, 'baremetal:port:update')
    changes = _patch_changes(port)
    db = services.db()
    nodes = [node_obj.Node.get(db, port.node_id)]
    if 'node_uuid' in changes:
        nodes.append(target_node(changes.pop('node_uuid'),
                                  'baremetal:port:update'))
        port.node_id, port.node_uuid = nodes[-1].id, nodes[-1].uuid
    if 'address' in changes:
        changes['address'] = port_obj.normalize_mac(changes['address'])
    if changes.get('name') is not None:
        portgroup_schema.check_name(changes['name'], 'port')
    if 'portgroup_uuid' in changes:
        ident = changes.pop('portgroup_uuid')
        group = _group_named(ident) if ident is not None else None
        port.portgroup_id = group.id if group is not None else None
        port.portgroup_uuid = group.uuid if group is not None else None
    if {'local_link_connection', 'is_smartnic'} & set(changes):
        changes['local_link_connection'] = (
            port_schema.check_local_link_connection(
                changes.get('local_link_connection',
                            port.local_link_connection),
                changes.get('is_smartnic', port.is_smartnic)))
    for name, value in changes.items():
        setattr(port, name, value)
    changed = set(port.changes())
    for node in nodes:
        _check_node_allows(port, node, changed)
    _check_membership(port, changed)
    try:
        port.save()
    except exception.NodeNotFound:
        # The node it moves to, deleted since _target_node found it.
        raise no_node(port.node_uuid) from None
    return port_view.render(port, port_view.available_fields())


def _check_membership(port: port_obj.Port, changed: set[str]) -> None:
    if port.portgroup_id is None:
        return
    group = portgroup_obj.Portgroup.get(services.db(), port.portgroup_id)
    if ('physical_network' in changed and 'portgroup_id' not in changed
            and microversion.at_least(102)):
        raise exception.InvalidParameterValue(
            reason='physical_network cannot be changed while the port '
                   'belongs to a portgroup.')
    port_membership.check_port(port, group, changed)


def delete_port(port_ident: str) -> flask.Response:
    port = access.port(port_ident, 'baremetal:port:delete')
    vif = vifs.on_port(port)
    if vif is not None and not node_obj.Node.get(services.db(),
                                                 port.node_id).maintenance:
        raise exception.PortHasVif(port=port.uuid, vif=vif)
    port.destroy()
    return flask.Response(status=204)
