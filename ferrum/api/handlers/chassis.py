# SPDX-License-Identifier: Apache-2.0
"""``/v1/chassis``: list, get, create, PATCH, delete (a chassis' nodes are
listed by :mod:`ferrum.api.handlers.node`).

Chassis are written by the API directly through
:mod:`ferrum.objects.chassis`: no conductor reads them. Every rule is
Ironic's ``baremetal:chassis:*``, system scope only. Deleting a chassis
that holds nodes is a 400 (Ironic's ``ChassisNotEmpty``); the database
decides it.
"""

import uuid as uuidlib
from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import services
from ferrum.api.schemas import chassis as chassis_schema
from ferrum.api.views import chassis as chassis_view
from ferrum.common import exception
from ferrum.objects import base
from ferrum.objects import chassis as chassis_obj

#: Ironic refuses sorting by extra only.
_SORTABLE = frozenset({'id', 'uuid', 'description', 'created_at',
                       'updated_at'})
#: What removing a field with PATCH sets it to.
_DEFAULTS: dict[str, Any] = {'extra': {}}


def _get(ident: str) -> chassis_obj.Chassis:
    """The chassis ``ident`` names; a malformed UUID is a 400, as Ironic's
    UUID argument check answers."""
    if not base.is_uuid_like(ident):
        raise exception.InvalidParameterValue(
            reason='Expected a UUID for chassis, not "%s".' % ident[:100])
    return chassis_obj.Chassis.get(services.db(), ident)


def _list(detail: bool) -> dict[str, Any]:
    access.check('baremetal:chassis:get')
    if detail and 'fields' in flask.request.args:
        # As Ironic's query schema for /detail.
        raise exception.InvalidParameterValue(
            reason='The fields parameter cannot be used on /detail.')
    fields = (list(chassis_view.FIELDS) if detail else listing.list_fields(
        list(chassis_view.FIELDS), chassis_view.LIST_FIELDS, False))
    page, marker = listing.parse_uuid_page(_SORTABLE, 'chassis', _get)
    found = chassis_obj.Chassis.list(
        services.db(), limit=page.limit, sort_key=page.sort_key,
        sort_dir=page.sort_dir, marker=marker)
    result: dict[str, Any] = {
        'chassis': [chassis_view.render(c, fields) for c in found]}
    result.update(listing.next_link(
        page, len(found), found[-1].uuid if found else None))
    return result


def list_chassis() -> dict[str, Any]:
    return _list(detail=False)


def list_details() -> dict[str, Any]:
    return _list(detail=True)


def get_chassis(chassis_uuid: str) -> dict[str, Any]:
    access.check('baremetal:chassis:get')
    fields = listing.parse_fields(chassis_view.FIELDS)
    return chassis_view.render(_get(chassis_uuid),
                               fields or chassis_view.FIELDS)


def create_chassis() -> flask.Response:
    access.check('baremetal:chassis:create')
    values = body.json_body(chassis_schema.CREATE)
    if values.get('uuid') is None:
        values.pop('uuid', None)
    elif not base.is_uuid_like(values['uuid']):
        raise exception.InvalidParameterValue(
            reason='Expected a UUID for uuid, not "%s".'
                   % values['uuid'][:100])
    else:
        values['uuid'] = str(uuidlib.UUID(values['uuid']))
    if values.get('extra') is None:
        values.pop('extra', None)
    chassis = chassis_obj.Chassis.create(services.db(), values)
    return listing.created('chassis', chassis.uuid,
                           chassis_view.render(chassis, chassis_view.FIELDS))


def patch_chassis(chassis_uuid: str) -> dict[str, Any]:
    access.check('baremetal:chassis:update')
    chassis = _get(chassis_uuid)
    document = chassis_view.render(chassis, chassis_view.FIELDS)
    changes = body.patch_changes(document, body.json_body(),
                                 chassis_schema.UPDATABLE,
                                 'only description and extra can change.')
    for name, default in _DEFAULTS.items():
        if name in changes and changes[name] is None:
            changes[name] = default
    body.validate(changes, chassis_schema.UPDATE, 'chassis update')
    for name, value in changes.items():
        setattr(chassis, name, value)
    chassis.save()
    return chassis_view.render(chassis, chassis_view.FIELDS)


def delete_chassis(chassis_uuid: str) -> flask.Response:
    access.check('baremetal:chassis:delete')
    _get(chassis_uuid).destroy()
    return flask.Response(status=204)
