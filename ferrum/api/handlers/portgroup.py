# SPDX-License-Identifier: Apache-2.0
"""``/v1/portgroups``, ``/v1/nodes/{node}/portgroups`` and a group's
ports: list, get, create, PATCH, delete (API 1.23; 404 before).

A group is addressed by UUID or name. Creating one checks
``baremetal:portgroup:create`` against the node first, as Ironic does: a
caller the rule refuses gets 403 whatever the body says, and only then is
the body validated and an unknown node a 400. The rules between a group
and its ports are in :mod:`ferrum.api.port_membership`; like ports, groups
are written by the API directly (see :mod:`ferrum.api.handlers.port`).
A PATCH refuses (409) a move to another node unless that node is
``enroll``, ``manageable``, ``inspecting`` or ``inspect wait``, or in
maintenance, and any change while the group's node is inspecting.
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import node_lookup
from ferrum.api import port_membership
from ferrum.api import services
from ferrum.api.handlers import port as port_handler
from ferrum.api.schemas import portgroup as portgroup_schema
from ferrum.api.views import portgroup as portgroup_view
from ferrum.common import exception
from ferrum.common import states
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from ferrum.objects import portgroup as portgroup_obj

_MINOR = 23
#: sort_key -> the minor version from which it may be used (a group's
#: dicts cannot be sorted by, as in Ironic).
_SORT_VERSIONS: dict[str, int] = {
    name: minor for name, minor in portgroup_view.FIELD_VERSIONS.items()
    if name not in ('extra', 'internal_info', 'properties', 'links',
                    'ports', 'node_uuid')} | {'id': 23, 'node_id': 23}
#: What removing a field with PATCH sets it to.
_DEFAULTS: dict[str, Any] = {'extra': {}, 'properties': {},
                             'standalone_ports_supported': True}
_MOVE_STATES = frozenset({states.ENROLL, states.MANAGEABLE,
                          states.INSPECTING, states.INSPECTWAIT})


def _check_version(what: str = '/v1/portgroups') -> None:
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what=what, minor=_MINOR, header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))


def _group(ident: str, rule: str) -> portgroup_obj.Portgroup:
    _check_version()
    if not base.is_uuid_like(ident):
        try:
            portgroup_schema.check_name(ident)
        except exception.InvalidParameterValue:
            raise exception.InvalidParameterValue(
                reason='Expected a logical name or UUID but received %s.'
                       % ident[:100]) from None
    return access.portgroup(ident, rule)


# ---- reading ---------------------------------------------------------------

def _filters(parent: node_obj.Node | None) -> dict[str, Any]:
    args = flask.request.args
    filters: dict[str, Any] = {}
    if parent is not None:
        filters['node_id'] = parent.id
    elif args.get('node'):
        ident = args['node']
        filters['node_id'] = access.visible_node(node_lookup.get(ident),
                                                 ident).id
    if args.get('address'):
        filters['address'] = port_obj.normalize_mac(args['address'])
    if args.get('conductor_groups') is not None:
        microversion.require(99, 'The conductor_groups filter')
        filters['conductor_groups'] = [
            group.strip().lower() for group in
            args['conductor_groups'].split(',') if group.strip()]
    if args.get('shard') is not None:
        microversion.require(106, 'The shard filter')
        filters['shards'] = [item for item in args['shard'].split(',')
                             if item]
    if len(filters) > 1:
        raise exception.InvalidParameterValue(
            reason='Filtering by node, address, or shard simultaneously is '
                   'not supported.')
    return filters


def _page() -> tuple[listing.Page, portgroup_obj.Portgroup | None]:
    page = listing.parse_versioned_page(_SORT_VERSIONS, 'port group')
    if page.marker is None:
        return page, None
    return page, access.portgroup(page.marker, 'baremetal:portgroup:get')


def _list(detail: bool,
          parent: node_obj.Node | None = None) -> dict[str, Any]:
    fields = listing.list_fields(portgroup_view.available_fields(),
                                 portgroup_view.LIST_FIELDS, detail)
    page, marker = _page()
    project = access.list_project('portgroup') if parent is None else None
    groups = portgroup_obj.Portgroup.list(
        services.db(), limit=page.limit, sort_key=page.sort_key,
        sort_dir=page.sort_dir, marker=marker, project=project,
        columns=fields, **_filters(parent))
    result: dict[str, Any] = {'portgroups': [
        portgroup_view.render(g, fields) for g in groups]}
    result.update(listing.next_link(
        page, len(groups), groups[-1].uuid if groups else None))
    return result


def list_portgroups() -> dict[str, Any]:
    _check_version()
    return _list(detail=False)


def list_details() -> dict[str, Any]:
    _check_version()
    return _list(detail=True)


def _parent(node_ident: str) -> node_obj.Node:
    # Ironic serves a node's groups from 1.24, the group resource's second.
    if not microversion.at_least(24):
        raise exception.NotFoundAtVersion(
            what='/v1/nodes/{node}/portgroups', minor=24,
            header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))
    return access.node(node_ident, 'baremetal:portgroup:get')


def list_node_portgroups(node_ident: str) -> dict[str, Any]:
    return _list(False, _parent(node_ident))


def list_node_portgroup_details(node_ident: str) -> dict[str, Any]:
    return _list(True, _parent(node_ident))


def get_portgroup(portgroup_ident: str) -> dict[str, Any]:
    group = _group(portgroup_ident, 'baremetal:portgroup:get')
    available = portgroup_view.available_fields()
    fields = listing.parse_fields(available)
    return portgroup_view.render(group, fields or available)


def _ports_of(portgroup_ident: str, detail: bool) -> dict[str, Any]:
    group = _group(portgroup_ident, 'baremetal:port:get')
    if not microversion.at_least(24):
        raise exception.NotFoundAtVersion(
            what='/v1/portgroups/{portgroup}/ports', minor=24,
            header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))
    return port_handler.list_of_group(group, detail)


def list_ports(portgroup_ident: str) -> dict[str, Any]:
    return _ports_of(portgroup_ident, False)


def list_port_details(portgroup_ident: str) -> dict[str, Any]:
    return _ports_of(portgroup_ident, True)


# ---- writing ---------------------------------------------------------------

def _require_versions(values: dict[str, Any]) -> None:
    for name in values:
        microversion.require(portgroup_view.FIELD_VERSIONS.get(name, _MINOR),
                             'The port group field "%s"' % name)


def _normalize(values: dict[str, Any]) -> None:
    """Check names, normalize MACs and booleans of ``values`` in place."""
    if values.get('name') is not None:
        portgroup_schema.check_name(values['name'])
    if values.get('address') is not None:
        values['address'] = port_obj.normalize_mac(values['address'])
    if 'standalone_ports_supported' in values:
        values['standalone_ports_supported'] = listing.to_bool(
            'standalone_ports_supported',
            values['standalone_ports_supported'])
    for name in ('extra', 'properties'):
        if name in values and values[name] is None:
            values[name] = {}


def _creation_node(values: Any) -> node_obj.Node | None:
    """The node a new group goes on (None: missing, or hidden from the
    caller), once ``baremetal:portgroup:create`` allows it: judged by
    the node's owner and lessee, or by none when there is no such node.

    :raises Forbidden: the rule refuses the caller.
    """
    ident = values.get('node_uuid') if isinstance(values, dict) else None
    node = None
    if isinstance(ident, str) and base.is_uuid_like(ident):
        try:
            node = access.visible_node(
                node_obj.Node.get(services.db(), ident), ident)
        except exception.NodeNotFound:
            node = None
    access.check('baremetal:portgroup:create',
                 access.node_target(node) if node is not None else {})
    return node


def create_portgroup() -> flask.Response:
    _check_version()
    values = body.json_body()
    node = _creation_node(values)
    body.validate(values, portgroup_schema.CREATE, 'port group')
    node_uuid = port_handler.canonical_uuid('node_uuid',
                                            values.pop('node_uuid'))
    if node is None:
        raise port_handler.no_node(node_uuid)
    values = {name: value for name, value in values.items()
              if value is not None or name == 'address'}
    _require_versions(values)
    _normalize(values)
    if 'uuid' in values:
        values['uuid'] = port_handler.canonical_uuid('uuid', values['uuid'])
    values['node_id'] = node.id
    if not values.get('mode'):
        values['mode'] = services.conf().default_portgroup_mode
    try:
        group = portgroup_obj.Portgroup.create(services.db(), values)
    except exception.NodeNotFound:
        raise port_handler.no_node(node.uuid) from None
    return listing.created('portgroups', group.uuid, portgroup_view.render(
        group, portgroup_view.available_fields()))


def _patch_changes(group: portgroup_obj.Portgroup) -> dict[str, Any]:
    patch = body.json_body()
    body.validate(patch, body.PATCH_SCHEMA, 'JSON Patch')
    _require_versions(dict.fromkeys(op['path'].split('/')[1] for op in patch))
    document = portgroup_view.render(group,
                                     portgroup_view.available_fields())
    patched = body.apply_patch(document, patch)
    changes = {name: patched.get(name) for name in document
               if patched.get(name) != document[name]}
    if 'mode' in changes and changes['mode'] is None:
        raise exception.InvalidParameterValue(
            reason="'mode' is a mandatory attribute and can not be removed")
    read_only = sorted(set(changes) - portgroup_schema.UPDATABLE)
    if read_only:
        raise exception.InvalidParameterValue(
            reason="Cannot patch /%s. Only the following can be updated: %s"
                   % (read_only[0],
                      ', '.join(sorted(portgroup_schema.UPDATABLE))))
    if 'node_uuid' in changes and changes['node_uuid'] is None:
        raise exception.InvalidParameterValue(
            reason="'/node_uuid' is a mandatory attribute and cannot be "
                   "removed.")
    for name, default in _DEFAULTS.items():
        if name in changes and changes[name] is None:
            changes[name] = default
    body.validate(changes, portgroup_schema.UPDATE, 'port group update')
    _normalize(changes)
    return changes


def _check_node_allows(group: portgroup_obj.Portgroup,
                       nodes: list[node_obj.Node], changed: set[str]) -> None:
    for node in nodes:
        if node.provision_state == states.INSPECTING:
            raise exception.InvalidState(reason=(
                'Cannot update portgroup "%s" on node "%s" while it is in '
                'state "%s".' % (group.uuid, node.uuid, states.INSPECTING)))
    # The node it goes to, as Ironic checks under that node's lock.
    node = nodes[-1]
    if ('node_id' in changed and not node.maintenance
            and node.provision_state not in _MOVE_STATES):
        raise exception.InvalidState(reason=(
            "Portgroup %s can not be associated to node %s unless the node "
            "is in a %s state or in maintenance mode. Current state is "
            "'%s'." % (group.uuid, node.uuid, ', '.join(sorted(_MOVE_STATES)),
                       node.provision_state)))


def patch_portgroup(portgroup_ident: str) -> dict[str, Any]:
    group = _group(portgroup_ident, 'baremetal:portgroup:update')
    changes = _patch_changes(group)
    nodes = [node_obj.Node.get(services.db(), group.node_id)]
    if 'node_uuid' in changes:
        nodes.append(port_handler.target_node(
            changes.pop('node_uuid'), 'baremetal:portgroup:update'))
        group.node_id, group.node_uuid = nodes[-1].id, nodes[-1].uuid
    for name, value in changes.items():
        setattr(group, name, value)
    changed = set(group.changes())
    _check_node_allows(group, nodes, changed)
    port_membership.check_group_change(group, changed)
    try:
        group.save()
    except exception.NodeNotFound:
        raise port_handler.no_node(group.node_uuid) from None
    return portgroup_view.render(group, portgroup_view.available_fields())


def delete_portgroup(portgroup_ident: str) -> flask.Response:
    group = _group(portgroup_ident, 'baremetal:portgroup:delete')
    group.destroy()
    return flask.Response(status=204)
