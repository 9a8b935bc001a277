# SPDX-License-Identifier: Apache-2.0
"""``/v1/allocations`` and ``/v1/nodes/{node}/allocation`` (API 1.52+).

Creating and deleting go to a conductor through the rpcapi; reads and the
PATCH of ``name`` and ``extra`` (1.57) use the objects directly, since
nothing in the conductor depends on them. Below 1.52 every route answers
404, as Ironic does for a resource that does not exist at that version.

Codes follow the allocation spec and Ironic: 400 for an unknown candidate
or backfill node, a bad name, resource class or trait; 409 for a
duplicate UUID or name (the spec's "406 Conflict" is a typo) and for
deleting the allocation of a node in use.
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.schemas import allocation as allocation_schema
from ferrum.api.schemas import trait as trait_schema
from ferrum.api.views import allocation as allocation_view
from ferrum.common import exception
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base

_MINOR = 52
#: Sorting by lists or dicts is refused, as in Ironic.
_SORTABLE = frozenset({'id', 'uuid', 'name', 'state', 'resource_class',
                       'node_id', 'owner', 'last_error', 'created_at',
                       'updated_at'})


def _check_version(what: str = '/v1/allocations') -> None:
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what=what, minor=_MINOR, header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))


# ---- reading ---------------------------------------------------------------

def _filters() -> dict[str, Any]:
    args = flask.request.args
    filters: dict[str, Any] = {}
    state = args.get('state')
    if state is not None:
        if state not in allocation_schema.STATES:
            raise exception.InvalidParameterValue(
                reason='state must be one of %s, not "%s".' % (
                    ', '.join(allocation_schema.STATES), state[:100]))
        filters['state'] = state
    resource_class = args.get('resource_class')
    if resource_class is not None:
        if not 0 < len(resource_class) <= 80:
            raise exception.InvalidParameterValue(
                reason='resource_class must be 1 to 80 characters long.')
        filters['resource_class'] = resource_class
    if args.get('node') is not None:
        filters['node_id'] = access.named_node(args['node']).id
    if args.get('owner') is not None:
        microversion.require(60, 'The owner filter')
        filters['owner'] = args['owner']
    return filters


def list_allocations() -> dict[str, Any]:
    _check_version()
    fields = _with_links(listing.parse_fields(
        allocation_view.available_fields()))
    page = listing.parse_page(_SORTABLE)
    marker = None
    if page.marker is not None:
        marker = access.allocation(page.marker, 'baremetal:allocation:get')
    filters = _filters()
    project = access.list_project('allocation', filters.get('owner'))
    if project is not None:
        filters['owner'] = project
    allocations = allocation_obj.Allocation.list(
        services.db(), filters, page.limit, page.sort_key, page.sort_dir,
        marker)
    result: dict[str, Any] = {'allocations': [
        allocation_view.render(a, fields) for a in allocations]}
    result.update(listing.next_link(
        page, len(allocations),
        allocations[-1].uuid if allocations else None))
    return result


def _with_links(fields: list[str] | None) -> list[str]:
    if fields is None:
        return allocation_view.available_fields()
    return fields if 'links' in fields else fields + ['links']


def _show(allocation: allocation_obj.Allocation) -> dict[str, Any]:
    fields = listing.parse_fields(allocation_view.available_fields())
    return allocation_view.render(allocation, _with_links(fields))


def get_allocation(allocation_ident: str) -> dict[str, Any]:
    _check_version()
    return _show(access.allocation(allocation_ident,
                                   'baremetal:allocation:get'))


def get_node_allocation(node_ident: str) -> dict[str, Any]:
    _check_version('/v1/nodes/{node}/allocation')
    return _show(_allocation_of(node_ident, 'baremetal:allocation:get'))


def _allocation_of(node_ident: str, rule: str) -> allocation_obj.Allocation:
    node = access.node(node_ident, 'baremetal:node:get', named=True)
    allocation = allocation_obj.Allocation.get_by_node(services.db(), node.id)
    if allocation is None:
        raise exception.AllocationNotFound(
            allocation='of node %s' % node.uuid)
    return access.allocation_checked(allocation, 'of node %s' % node.uuid,
                                     rule)


# ---- writing ---------------------------------------------------------------

def _check_traits(traits: list[str]) -> list[str]:
    for trait in traits:
        trait_schema.check(trait)
    return sorted(set(traits))


def _check_name(name: str | None) -> None:
    if name is not None and base.is_uuid_like(name):
        raise exception.InvalidParameterValue(
            reason='An allocation name cannot look like a UUID: %s' % name)


def _check_owner(values: dict[str, Any]) -> None:
    """As Ironic: ``create_restricted`` names any owner; anyone else's
    allocation belongs to its own project (so the allocator only takes
    nodes that project owns or leases)."""
    if access.allowed('baremetal:allocation:create_restricted'):
        return
    project = access.context().project_id
    if values.get('owner') and values['owner'] != project:
        raise access.Forbidden(rule='baremetal:allocation:create_restricted')
    if project:
        values['owner'] = project
    access.check('baremetal:allocation:create',
                 access.allocation_target(values.get('owner')))


def create_allocation() -> flask.Response:
    _check_version()
    values = {key: value for key, value in body.json_body(
        allocation_schema.CREATE).items() if value is not None}
    if 'node' in values:
        microversion.require(58, 'Backfilling an allocation with "node"')
    if 'owner' in values:
        microversion.require(60, 'The allocation field "owner"')
    _check_owner(values)
    traits = _check_traits(values.pop('traits', []))
    _check_name(values.get('name'))
    if 'uuid' in values:
        if not base.is_uuid_like(values['uuid']):
            raise exception.InvalidParameterValue(
                reason='uuid must be a UUID, not "%s".' % values['uuid'][:100])
        values['uuid'] = values['uuid'].lower()
    if 'candidate_nodes' in values:
        values['candidate_nodes'] = access.candidate_uuids(
            values['candidate_nodes'])
    node_ident = values.pop('node', None)
    if node_ident is not None:
        allocation = services.rpc().backfill_allocation(
            access.named_node(node_ident).id, values, traits)
    elif 'resource_class' not in values:
        raise exception.InvalidParameterValue(
            reason='An allocation needs a "resource_class" (or, from API '
                   '1.58, a "node" to backfill).')
    else:
        allocation = services.rpc().create_allocation(values, traits)
    return listing.created('allocations', allocation.uuid,
                           allocation_view.render(
                               allocation, allocation_view.available_fields()))


def patch_allocation(allocation_ident: str) -> dict[str, Any]:
    _check_version()
    microversion.require(57, 'Updating an allocation')
    allocation = access.allocation(allocation_ident,
                                   'baremetal:allocation:update')
    fields = allocation_view.available_fields()
    document = allocation_view.render(allocation, fields)
    changes = body.patch_changes(
        document, body.json_body(), allocation_schema.UPDATABLE,
        'only the name and extra of an allocation can change.')
    if 'extra' in changes and changes['extra'] is None:
        changes['extra'] = {}
    body.validate(changes, allocation_schema.UPDATE, 'allocation update')
    _check_name(changes.get('name'))
    for name, value in changes.items():
        setattr(allocation, name, value)
    allocation.save()
    return allocation_view.render(allocation, fields)


def delete_allocation(allocation_ident: str) -> flask.Response:
    _check_version()
    allocation = access.allocation(allocation_ident,
                                   'baremetal:allocation:delete')
    services.rpc().destroy_allocation(allocation.uuid)
    return flask.Response(status=204)


def delete_node_allocation(node_ident: str) -> flask.Response:
    _check_version('/v1/nodes/{node}/allocation')
    services.rpc().destroy_allocation(
        _allocation_of(node_ident, 'baremetal:allocation:delete').id)
    return flask.Response(status=204)
