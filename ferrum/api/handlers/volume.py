# SPDX-License-Identifier: Apache-2.0
"""``/v1/volume``, its connectors and targets, and a node's (API 1.32).

Connectors and targets are two resources with one set of rules, Ironic's
``baremetal:volume:*``, so one module serves both from a :class:`_Kind`
each. They are stored and shown, but nothing uses them: ferrum's only
storage interface is ``noop`` and no node boots from a volume (see
``doc/api-versions.md``).

They are written by the API directly, as ports are, with the rules
Ironic's conductor applies under the node's lock: a change (PATCH) only
while the node is powered off, a delete only while it is powered off or
``manageable``, ``enroll`` or ``adopt failed``; creating is allowed in
every state. The node's state is read just before the write: the only
reader is the ``noop`` interface, so a power change racing a write
leaves nothing inconsistent.

As in Ironic: a connector or target whose node the caller may not see is
a 404; a create naming such a node is a 400, after the create rule (403)
is checked against that node; a PATCH may move it only to a node the
caller sees with the same owner.
"""

import copy
import dataclasses
import uuid as uuidlib
from collections.abc import Callable
from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import node_lookup
from ferrum.api import services
from ferrum.api.schemas import volume as volume_schema
from ferrum.api.views import volume as volume_view
from ferrum.common import exception
from ferrum.common import states
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.objects import volume_connector as connector_obj
from ferrum.objects import volume_target as target_obj

_MINOR = 32
_UNSORTABLE = frozenset({'extra', 'properties', 'node_uuid'})


@dataclasses.dataclass(frozen=True)
class _Kind:
    shape: volume_view.Shape
    record: type[base.NodeRecord]
    #: What actions and errors call it ("volume connector").
    what: str
    create: dict[str, Any]
    update: dict[str, Any]
    updatable: frozenset[str]
    not_found: Callable[[str], exception.NotFound]

    @property
    def sortable(self) -> frozenset[str]:
        return frozenset(self.record.COLUMNS) - _UNSORTABLE


_CONNECTORS = _Kind(
    volume_view.CONNECTORS, connector_obj.VolumeConnector,
    'volume connector', volume_schema.CONNECTOR_CREATE,
    volume_schema.CONNECTOR_UPDATE, volume_schema.CONNECTOR_UPDATABLE,
    lambda ident: exception.VolumeConnectorNotFound(connector=ident[:100]))
_TARGETS = _Kind(
    volume_view.TARGETS, target_obj.VolumeTarget, 'volume target',
    volume_schema.TARGET_CREATE, volume_schema.TARGET_UPDATE,
    volume_schema.TARGET_UPDATABLE,
    lambda ident: exception.VolumeTargetNotFound(target=ident[:100]))


def _check_version(what: str) -> None:
    # Older versions never had the endpoint: 404, as in Ironic.
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what=what, minor=_MINOR, header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))


def _see_properties() -> bool:
    return access.allowed('baremetal:volume:view_target_properties')


def _render(kind: _Kind, row: Any, fields: Any = None) -> dict[str, Any]:
    return volume_view.render(row, fields or kind.shape.fields, kind.shape,
                              _see_properties())


# ---- the link documents ----------------------------------------------------

def get_volume() -> dict[str, Any]:
    _check_version('/v1/volume')
    access.check('baremetal:volume:get')
    return volume_view.links()


def get_node_volume(node_ident: str) -> dict[str, Any]:
    _check_version('/v1/nodes/{node}/volume')
    node = access.node(node_ident, 'baremetal:volume:get')
    return volume_view.links(node.uuid)


# ---- reading -------------------------------------------------------------

def _get(kind: _Kind, ident: str, rule: str
         ) -> tuple[Any, node_obj.Node]:
    """The row ``ident`` names and its node, if the caller sees the node
    (else 404) and passes ``rule`` on it (else 403)."""
    if not base.is_uuid_like(ident):
        raise exception.InvalidParameterValue(
            reason='Expected a UUID for the %s, not "%s".'
                   % (kind.what, ident[:100]))
    row = kind.record.get(services.db(), ident)
    node = node_obj.Node.get(services.db(), row.node_id)
    target = access.node_target(node)
    if not access.allowed('baremetal:node:get', target):
        raise kind.not_found(ident)
    access.check(rule, target)
    return row, node


def _list(kind: _Kind, parent: str | None) -> dict[str, Any]:
    what = '/v1/volume/' + kind.shape.collection
    _check_version(what)
    node_ident = parent or flask.request.args.get('node')
    node = None
    if parent is not None:
        node = access.node(parent, 'baremetal:node:get')
    elif node_ident:
        node = access.visible_node(node_lookup.get(node_ident), node_ident)
    project = access.list_project('volume')
    fields = listing.list_fields(list(kind.shape.fields),
                                 kind.shape.list_fields, False, _MINOR)
    page, marker = listing.parse_uuid_page(
        kind.sortable, kind.what,
        lambda ident: _get(kind, ident, 'baremetal:volume:get')[0])
    filters = {'node_id': node.id if node else None, 'project': project}
    rows = kind.record.list(services.db(), filters, page.limit,
                            page.sort_key, page.sort_dir, marker)
    see = _see_properties()
    result: dict[str, Any] = {kind.shape.collection: [
        volume_view.render(row, fields, kind.shape, see) for row in rows]}
    result.update(listing.next_link(
        page, len(rows), rows[-1].uuid if rows else None))
    return result


def _show(kind: _Kind, ident: str) -> dict[str, Any]:
    _check_version('/v1/volume/' + kind.shape.collection)
    fields = listing.parse_fields(kind.shape.fields)
    row, _node = _get(kind, ident, 'baremetal:volume:get')
    return _render(kind, row, fields)


def list_connectors() -> dict[str, Any]:
    return _list(_CONNECTORS, None)


def list_targets() -> dict[str, Any]:
    return _list(_TARGETS, None)


def list_node_connectors(node_ident: str) -> dict[str, Any]:
    return _list(_CONNECTORS, node_ident)


def list_node_targets(node_ident: str) -> dict[str, Any]:
    return _list(_TARGETS, node_ident)


def get_connector(connector_uuid: str) -> dict[str, Any]:
    return _show(_CONNECTORS, connector_uuid)


def get_target(target_uuid: str) -> dict[str, Any]:
    return _show(_TARGETS, target_uuid)


# ---- writing -------------------------------------------------------------

def _uuid(name: str, value: str) -> str:
    if not base.is_uuid_like(value):
        raise exception.InvalidParameterValue(
            reason='Expected a UUID for %s, not "%s".' % (name, value[:100]))
    return str(uuidlib.UUID(value))


def _create(kind: _Kind) -> flask.Response:
    _check_version('/v1/volume/' + kind.shape.collection)
    values = body.json_body(kind.create)
    node_uuid = _uuid('node_uuid', values.pop('node_uuid'))
    try:
        node: node_obj.Node | None = access.visible_node(
            node_obj.Node.get(services.db(), node_uuid), node_uuid)
    except exception.NodeNotFound:
        node = None
    # The rule first, as Ironic: a hidden or missing node is then a 400.
    access.check('baremetal:volume:create',
                 access.node_target(node) if node else {})
    if node is None:
        raise _invalid_node(node_uuid)
    values['node_id'] = node.id
    if values.get('uuid') is None:
        values.pop('uuid', None)
    else:
        values['uuid'] = _uuid('uuid', values['uuid'])
    for name in ('extra', 'properties'):
        if name in values and values[name] is None:
            values[name] = {}
    try:
        row = kind.record.create(services.db(), values)
    except exception.NodeNotFound:
        raise _invalid_node(node_uuid) from None
    return listing.created('volume/' + kind.shape.collection, row.uuid,
                           _render(kind, row))


def _invalid_node(node_uuid: str) -> exception.InvalidParameterValue:
    return exception.InvalidParameterValue(
        reason='Invalid input for field/attribute node_uuid. Value: %s. '
               'No such node.' % node_uuid)


def _moved_to(node: node_obj.Node, node_uuid: Any) -> node_obj.Node:
    """The node a PATCH moves the row to: one the caller sees, with the
    same owner (Ironic's rule; one message for both, so that nothing is
    learnt about other projects' nodes)."""
    refused = exception.InvalidParameterValue(
        reason="Unable to apply the requested node_uuid '%s'. Requested "
               "value was invalid." % str(node_uuid)[:100])
    if not base.is_uuid_like(node_uuid):
        raise refused
    try:
        moved = node_obj.Node.get(services.db(), node_uuid)
    except exception.NodeNotFound:
        raise refused from None
    if (not access.allowed('baremetal:node:get', access.node_target(moved))
            or moved.owner != node.owner):
        raise refused
    return moved


def _keep_masked(row: Any, changes: dict[str, Any]) -> None:
    """A client that sends back the "******" a GET showed must not
    overwrite the password it stands for."""
    new, old = changes.get('properties'), getattr(row, 'properties', {})
    if isinstance(new, dict):
        for key, value in new.items():
            if value == volume_view.SECRET_MASK and key in old:
                new[key] = old[key]


def _patch(kind: _Kind, ident: str) -> dict[str, Any]:
    _check_version('/v1/volume/' + kind.shape.collection)
    row, node = _get(kind, ident, 'baremetal:volume:update')
    document = _render(kind, row)
    if 'properties' in document:
        # As Ironic, the patch applies to the stored values, not to what
        # a GET shows (masked or redacted).
        document['properties'] = copy.deepcopy(row.properties)
    changes = body.patch_changes(
        document, body.json_body(), kind.updatable,
        'only %s can change.' % ', '.join(sorted(kind.updatable)))
    for name in ('extra', 'properties'):
        if name in changes and changes[name] is None:
            changes[name] = {}
    body.validate(changes, kind.update, kind.what + ' update')
    _keep_masked(row, changes)
    if 'node_uuid' in changes:
        node = _moved_to(node, changes.pop('node_uuid'))
        row.node_id, row.node_uuid = node.id, node.uuid
    if node.power_state != states.POWER_OFF:
        raise exception.InvalidStateRequested(
            action=kind.what + ' update', node=node.uuid,
            state=node.power_state)
    for name, value in changes.items():
        setattr(row, name, value)
    row.save()
    return _render(kind, row)


def _delete(kind: _Kind, ident: str) -> flask.Response:
    _check_version('/v1/volume/' + kind.shape.collection)
    row, node = _get(kind, ident, 'baremetal:volume:delete')
    if (node.provision_state not in states.DELETE_ALLOWED_STATES
            and node.power_state != states.POWER_OFF):
        raise exception.InvalidStateRequested(
            action=kind.what + ' deletion', node=node.uuid,
            state=node.power_state)
    row.destroy()
    return flask.Response(status=204)


def create_connector() -> flask.Response:
    return _create(_CONNECTORS)


def create_target() -> flask.Response:
    return _create(_TARGETS)


def patch_connector(connector_uuid: str) -> dict[str, Any]:
    return _patch(_CONNECTORS, connector_uuid)


def patch_target(target_uuid: str) -> dict[str, Any]:
    return _patch(_TARGETS, target_uuid)


def delete_connector(connector_uuid: str) -> flask.Response:
    return _delete(_CONNECTORS, connector_uuid)


def delete_target(target_uuid: str) -> flask.Response:
    return _delete(_TARGETS, target_uuid)
