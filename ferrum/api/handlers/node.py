# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes``: list (with filters and paging), get, create, PATCH, delete.

Reads go straight to the database; anything that changes a node goes to
its conductor through the rpcapi, which takes the node's lock.
"""

from collections.abc import Mapping
from typing import Any

import flask
from oslo_utils import strutils

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import node_lookup
from ferrum.api import services
from ferrum.api.schemas import node as node_schema
from ferrum.api.views import node as node_view
from ferrum.common import exception
from ferrum.common import states
from ferrum.conf import default as default_conf
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import chassis as chassis_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

#: query parameter (also the filter's key) -> (minor version, how to
#: parse it).
_FILTERS: dict[str, tuple[int, str]] = {
    'provision_state': (9, 'str'),
    'maintenance': (1, 'bool'),
    'associated': (1, 'bool'),
    'instance_uuid': (1, 'uuid'),
    'driver': (16, 'str'),
    'resource_class': (21, 'str'),
    'fault': (42, 'str'),
    'conductor_group': (46, 'group'),
    'owner': (50, 'str'),
    'description_contains': (51, 'str'),
    'retired': (61, 'bool'),
    'lessee': (65, 'str'),
    'shard': (82, 'list'),
    'sharded': (82, 'bool'),
    'include_children': (83, 'bool'),
    'parent_node': (83, 'str'),
    'instance_name': (104, 'str'),
}
#: The only storage interface ferrum serves: no node boots from a volume.
_STORAGE_INTERFACE = 'noop'
_JSON_FIELDS = frozenset({'driver_info', 'driver_internal_info',
                          'properties', 'instance_info', 'extra',
                          'clean_step', 'deploy_step'})
_SORTABLE = frozenset(node_obj.FIELDS) - _JSON_FIELDS
#: What a field removed by PATCH goes back to, where that is not null.
_REMOVED_VALUES: dict[str, Any] = {
    'driver_info': {}, 'properties': {}, 'instance_info': {}, 'extra': {},
    'conductor_group': '', 'protected': False, 'retired': False,
    'disable_power_off': False}
_READ_ONLY_HINT = 'see the API reference for the endpoint that changes it.'


def _filters() -> dict[str, Any]:
    filters: dict[str, Any] = {}
    for param, (minor, kind) in _FILTERS.items():
        raw = flask.request.args.get(param)
        if raw is None:
            continue
        microversion.require(minor, 'The %s filter' % param)
        if kind == 'bool':
            filters[param] = listing.parse_bool(param)
        elif kind == 'list':
            filters[param + '_in'] = [item for item in raw.split(',')
                                      if item]
        elif kind == 'uuid' and not base.is_uuid_like(raw):
            raise exception.InvalidParameterValue(
                reason='instance_uuid must be a UUID, not "%s".' % raw[:100])
        else:
            filters[param] = raw.lower() if kind == 'group' else raw
    # As Ironic, at every version: a list leaves child nodes (1.83) out,
    # unless it asks for them or for one parent's children.
    if not filters.pop('include_children', False):
        filters.setdefault('parent_node', None)
    return filters


def _context(nodes: list[node_obj.Node], fields: list[str]
             ) -> node_view.Context:
    db, registry = services.db(), services.registry()
    allocation_ids = [n.allocation_id for n in nodes
                      if n.allocation_id is not None]
    return node_view.Context(
        secrets=(registry.secrets(key for n in nodes
                                  for key in node_view.interface_keys(n))
                 if 'driver_info' in fields else {}),
        conductors=(registry.conductors()
                    if 'conductor' in fields else {}),
        traits=(trait_obj.get_for_nodes(db, [n.id for n in nodes])
                if 'traits' in fields else {}),
        allocations=(allocation_obj.uuids_by_id(db, allocation_ids)
                     if 'allocation_uuid' in fields else {}),
        hidden=access.node_redactions(),
        chassis=(chassis_obj.uuids_by_id(db, [
            n.chassis_id for n in nodes if n.chassis_id is not None])
            if 'chassis_uuid' in fields else {}))


def _render_all(nodes: list[node_obj.Node], fields: list[str]
                ) -> list[dict[str, Any]]:
    ctx = _context(nodes, fields)
    return [node_view.render(n, fields, ctx) for n in nodes]


def _list(detail: bool, chassis_uuid: str | None = None) -> dict[str, Any]:
    fields = _with_links(listing.list_fields(
        node_view.available_fields(), node_view.LIST_FIELDS, detail))
    page = listing.parse_page(_SORTABLE)
    marker = None
    if page.marker is not None:
        if not base.is_uuid_like(page.marker):
            raise exception.InvalidParameterValue(
                reason='marker must be a node UUID, not "%s".'
                       % page.marker[:100])
        marker = access.visible_node(
            node_obj.Node.get(services.db(), page.marker), page.marker)
    conductor = flask.request.args.get('conductor')
    if conductor is not None:
        microversion.require(49, 'The conductor filter')
    filters = _filters()
    chassis_uuid = chassis_uuid or flask.request.args.get('chassis_uuid')
    if chassis_uuid is not None:
        filters['chassis_id'] = _listed_chassis(chassis_uuid).id
    # Ironic's project filter (owner or lessee), at every version; a
    # project-scoped caller may only name its own project.
    asked = flask.request.args.get('project')
    project = access.list_project('node', filters.get('owner'))
    if asked is not None:
        project = access.list_project('node', asked) or asked
    if project is not None:
        filters['project'] = project
    with services.db().reader():
        # Which conductor handles a node is computed, not stored: with that
        # filter the page is cut after filtering.
        nodes = node_obj.Node.list(
            services.db(), filters,
            page.limit if conductor is None else None,
            page.sort_key, page.sort_dir, marker)
        if conductor is not None:
            nodes = _handled_by(conductor, nodes)[:page.limit]
        result: dict[str, Any] = {'nodes': _render_all(nodes, fields)}
    result.update(listing.next_link(
        page, len(nodes), nodes[-1].uuid if nodes else None))
    return result


def _listed_chassis(chassis_uuid: str) -> chassis_obj.Chassis:
    """The chassis a list is filtered by: a bad UUID is a 400, an unknown
    one a 404, as in Ironic."""
    if not base.is_uuid_like(chassis_uuid):
        raise exception.InvalidParameterValue(
            reason='Expected a UUID for chassis_uuid, not "%s".'
                   % chassis_uuid[:100])
    return chassis_obj.Chassis.get(services.db(), chassis_uuid)


def list_chassis_nodes(chassis_uuid: str) -> dict[str, Any]:
    """``/v1/chassis/{uuid}/nodes``: the nodes list of one chassis."""
    return _chassis_list(chassis_uuid, detail=False)


def list_chassis_node_details(chassis_uuid: str) -> dict[str, Any]:
    return _chassis_list(chassis_uuid, detail=True)


def _chassis_list(chassis_uuid: str, detail: bool) -> dict[str, Any]:
    # The chassis in the path is the filter (the query may not repeat it).
    if 'chassis_uuid' in flask.request.args:
        raise exception.InvalidParameterValue(
            reason='The chassis is named by the path; leave out the '
                   'chassis_uuid query parameter.')
    return _list(detail, chassis_uuid)


def _handled_by(host: str, nodes: list[node_obj.Node]
                ) -> list[node_obj.Node]:
    ctx = node_view.Context(secrets={}, traits={}, allocations={},
                            conductors=services.registry().conductors())
    return [n for n in nodes if node_view.conductor_for(n, ctx) == host]


def list_nodes() -> dict[str, Any]:
    return _list(detail=False)


def list_details() -> dict[str, Any]:
    return _list(detail=True)


def get_node(node_ident: str) -> dict[str, Any]:
    fields = listing.parse_fields(node_view.available_fields())
    with services.db().reader():
        node = access.node(node_ident, 'baremetal:node:get')
        return _render_all([node], _with_links(fields) if fields
                           else node_view.available_fields())[0]


def _with_links(fields: list[str]) -> list[str]:
    """As Ironic does, ``fields`` never drops the links."""
    return fields if 'links' in fields else fields + ['links']


def _translate(values: dict[str, Any], node: node_obj.Node | None) -> None:
    """``chassis_uuid`` as the ``chassis_id`` stored, and a
    ``storage_interface`` other than "noop" refused: ferrum does not boot
    nodes from volumes."""
    if 'storage_interface' in values:
        microversion.require(33, 'The node field "storage_interface"')
        storage = values.pop('storage_interface')
        if storage not in (None, _STORAGE_INTERFACE):
            raise exception.InvalidParameterValue(
                reason='The storage interface "%s" is not served: ferrum '
                       'does not boot nodes from volumes, and "%s" is its '
                       'only storage interface. Volume connectors and '
                       'targets can be recorded, but no driver uses them.'
                       % (str(storage)[:100], _STORAGE_INTERFACE))
    if 'chassis_uuid' not in values:
        return
    chassis_uuid = values.pop('chassis_uuid')
    if chassis_uuid is None:
        if node is not None and node.chassis_id is not None:
            microversion.require(25, 'Removing a node\'s chassis_uuid')
        values['chassis_id'] = None
        return
    if not base.is_uuid_like(chassis_uuid):
        raise exception.InvalidParameterValue(
            reason='Expected a UUID for chassis_uuid, not "%s".'
                   % chassis_uuid[:100])
    try:
        found = chassis_obj.Chassis.get(services.db(), chassis_uuid)
    except exception.ChassisNotFound as exc:
        # A bad request, as in Ironic: the chassis is the node's field.
        raise exception.InvalidParameterValue(reason=str(exc)) from None
    values['chassis_id'] = found.id


def _check_values(values: dict[str, Any], owner: str | None,
                  uuid: str | None = None) -> None:
    """Rules beyond the schema: versions, names, the registered driver,
    a parent the caller may see (``owner``: the node's owner once
    written; ``uuid``: the node's own)."""
    for name in values:
        minor = node_view.FIELD_VERSIONS.get(name, 1)
        microversion.require(minor, 'The node field "%s"' % name)
    for name in node_schema.BOOLEANS:
        if values.get(name) is not None:
            values[name] = listing.to_bool('The node field "%s"' % name,
                                           values[name])
    if values.get('name') is not None:
        node_lookup.check_name(values['name'])
    if values.get('parent_node') is not None:
        values['parent_node'] = access.parent_uuid(
            values['parent_node'], owner, uuid)
    if values.get('conductor_group'):
        # Ironic matches groups case-insensitively; storing them in lower
        # case makes that a plain equality everywhere.
        values['conductor_group'] = values['conductor_group'].lower()
    if 'driver' in values:
        _check_driver_registered(values['driver'])


def _check_driver_registered(driver: str) -> None:
    alive = services.registry().conductors(driver)
    if not any(driver in types for _group, types in alive.values()):
        raise exception.DriverNotSupported(driver=driver)


def _detail(node: node_obj.Node) -> dict[str, Any]:
    return _render_all([node], node_view.available_fields())[0]


def _self_service() -> bool:
    return bool(services.conf().api.project_admin_can_manage_own_nodes)


def _creation_owner(values: dict[str, Any]) -> None:
    """Ironic's self-service nodes: a caller that may create nodes only
    under ``create:self_owned_node`` creates them for its project, and
    a system-scoped one as it asks."""
    if not (_self_service() and access.allowed(
            'baremetal:node:create:self_owned_node')):
        access.check('baremetal:node:create')
        return
    project = access.context().project_id
    if access.context().system_scope == 'all':
        return
    if values.get('owner') and values['owner'] != project:
        raise exception.InvalidParameterValue(
            reason='Cannot create a node as a project scoped admin with an '
                   'owner other than your own project.')
    values['owner'] = project


def create_node() -> flask.Response:
    values = body.json_body(node_schema.CREATE)
    _creation_owner(values)
    if values.get('network_data') is not None:
        microversion.require(66, 'The node field "network_data"')
    if values.pop('network_data', None):
        raise exception.InvalidParameterValue(
            reason='network_data is not served: ferrum builds no network '
                   'configuration for config drives; leave it out.')
    _translate(values, None)
    _check_values(values, values.get('owner'))
    values = {k: v for k, v in values.items() if v is not None}
    if not microversion.at_least(11):
        # Before 1.11 a node starts "available", unverified, as in Ironic.
        values['provision_state'] = states.AVAILABLE
    node = services.rpc().create_node(values)
    return listing.created('nodes', node.uuid, _detail(node))


def _patchable_document(node: node_obj.Node) -> dict[str, Any]:
    """What a patch applies to: every visible field, secrets unmasked,
    redacted fields redacted (a "test" operation learns nothing there)."""
    fields = node_view.available_fields()
    document = _render_all([node], fields)[0]
    if 'driver_info' not in access.node_redactions()(node):
        document['driver_info'] = dict(node.driver_info)
    document['instance_info'] = dict(node.instance_info)
    return document


#: Ironic's PATCH rules by path, in the order it matches them: a path
#: starting with one of these (``/retired_reason`` too) takes its rule.
_PATH_RULES = (
    ('/instance_info', 'baremetal:node:update_instance_info'),
    ('/extra', 'baremetal:node:update_extra'),
    ('/driver_info', 'baremetal:node:update:driver_info'),
    ('/properties', 'baremetal:node:update:properties'),
    ('/chassis_uuid', 'baremetal:node:update:chassis_uuid'),
    ('/instance_uuid', 'baremetal:node:update:instance_uuid'),
    ('/instance_name', 'baremetal:node:update_instance_info'),
    ('/lessee', 'baremetal:node:update:lessee'),
    ('/owner', 'baremetal:node:update:owner'),
    ('/driver', 'baremetal:node:update:driver_interfaces'),
    ('/network_data', 'baremetal:node:update:network_data'),
    ('/conductor_group', 'baremetal:node:update:conductor_group'),
    ('/name', 'baremetal:node:update:name'),
    ('/retired', 'baremetal:node:update:retired'),
    ('/shard', 'baremetal:node:update:shard'),
    ('/parent_node', 'baremetal:node:update:parent_node'),
    ('/disable_power_off', 'baremetal:node:update:disable_power_off'),
)
_INTERFACE_PATHS = frozenset('/%s_interface' % kind
                             for kind in default_conf.INTERFACE_KINDS)


def _path_rule(operation: Mapping[str, Any]) -> str | None:
    """The rule of one operation's path; None for the generic one."""
    path = operation['path']
    for prefix, rule in _PATH_RULES:
        if path.startswith(prefix):
            return rule
    if '/' + path.split('/')[1] in _INTERFACE_PATHS:
        return 'baremetal:node:update:driver_interfaces'
    if (path.startswith('/automated_clean')
            and strutils.bool_from_string(operation.get('value'),
                                          default=None) is False):
        # A lessee that could turn cleaning off would leave its data on
        # the disks for the node's next tenant (system admin only).
        return 'baremetal:node:disable_cleaning'
    return None


def _check_patch(node: node_obj.Node, document: Mapping[str, Any],
                 patch: Any) -> None:
    """Ironic's order: the patch's shape and fields (400), then each
    path's rule (403), all before anything is applied, so that a caller
    learns nothing from how a patch of a field it may not change fails
    (a redacted one, say)."""
    body.validate(patch, body.PATCH_SCHEMA, 'JSON Patch')
    for operation in patch:
        root = body.existing_root(document, operation['path'])
        if root not in node_schema.UPDATABLE and root != 'network_data':
            raise exception.InvalidParameterValue(
                reason="'/%s' is a read-only attribute and cannot be "
                       "updated with PATCH; %s" % (root, _READ_ONLY_HINT))
    rules = [_path_rule(operation) for operation in patch]
    target = access.node_target(node)
    for rule in sorted({rule or 'baremetal:node:update' for rule in rules}
                       or {'baremetal:node:update'}):
        access.check(rule, target)
    if any(op['path'].split('/')[1] == 'network_data' for op in patch):
        raise exception.InvalidParameterValue(
            reason='network_data is not served: ferrum builds no network '
                   'configuration for config drives.')


def _keep_masked_secrets(node: node_obj.Node, changes: dict[str, Any]) -> None:
    """A client that echoes back "******" must not overwrite the secret."""
    for field in ('driver_info', 'instance_info'):
        info, old = changes.get(field), getattr(node, field)
        if isinstance(info, dict):
            for key, value in info.items():
                if value == node_view.SECRET_MASK and key in old:
                    info[key] = old[key]


def _name_instance(node: node_obj.Node, changes: dict[str, Any]) -> None:
    """As Ironic: a node without an instance_name takes the one nova
    puts in instance_info (display_name)."""
    info = changes.get('instance_info')
    if (isinstance(info, dict) and not node.instance_name
            and 'instance_name' not in changes
            and isinstance(info.get('display_name'), str)
            and info['display_name']):
        changes['instance_name'] = info['display_name'][:255]


def patch_node(node_ident: str) -> dict[str, Any]:
    node = access.node(node_ident, 'baremetal:node:get')
    reset = listing.parse_bool('reset_interfaces')
    if reset is not None:
        microversion.require(45, 'reset_interfaces')
    document = _patchable_document(node)
    patch = body.json_body()
    _check_patch(node, document, patch)
    changes = body.patch_changes(document, patch, node_schema.UPDATABLE,
                                 _READ_ONLY_HINT)
    if reset and 'driver' not in changes:
        raise exception.InvalidParameterValue(
            reason='reset_interfaces can only be used with a driver change.')
    for name, default in _REMOVED_VALUES.items():
        if name in changes and changes[name] is None:
            changes[name] = default
    body.validate(changes, node_schema.UPDATE, 'node update')
    _translate(changes, node)
    _check_values(changes, node.owner, node.uuid)
    _keep_masked_secrets(node, changes)
    _name_instance(node, changes)
    if not changes:
        return _detail(node)
    updated = services.rpc().update_node(node.id, changes, bool(reset))
    return _detail(updated)


def delete_node(node_ident: str) -> flask.Response:
    try:
        node = access.node(node_ident, 'baremetal:node:delete')
    except access.Forbidden:
        if not _self_service():
            raise
        # A project admin deletes the nodes its project owns (1.80).
        node = access.node(node_ident,
                           'baremetal:node:delete:self_owned_node')
    services.rpc().destroy_node(node.id)
    return flask.Response(status=204)
