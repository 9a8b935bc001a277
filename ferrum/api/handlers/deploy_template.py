# SPDX-License-Identifier: Apache-2.0
"""``/v1/deploy_templates`` (API 1.55 and later): list, get, create, PATCH,
delete.

Below 1.55 the endpoint does not exist, as in Ironic: a GET is a 404, any
other method a 405. Templates belong to no project: the rules are Ironic's
``baremetal:deploy_template:*`` (a system reader reads, a system admin
writes). A template is found by UUID or by name.
"""

import uuid as uuidlib
from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.schemas import deploy_template as template_schema
from ferrum.api.views import deploy_template as template_view
from ferrum.common import exception
from ferrum.objects import base
from ferrum.objects import deploy_template as template_obj

_MINOR = 55
_PATH = '/v1/deploy_templates'


def _check(rule: str) -> None:
    """The version (404 or 405 below 1.55), then the policy."""
    if not microversion.at_least(_MINOR):
        details: dict[str, Any] = {
            'what': _PATH, 'minor': _MINOR,
            'header': microversion.LEGACY_HEADER,
            'current': microversion.as_string(microversion.request_version())}
        if flask.request.method == 'GET':
            raise exception.NotFoundAtVersion(**details)
        raise exception.NotAllowedAtVersion(method=flask.request.method,
                                            **details)
    access.check(rule)


def _get(ident: str) -> template_obj.DeployTemplate:
    return template_obj.DeployTemplate.get(services.db(), ident)


# ---- reading ---------------------------------------------------------------

def list_templates() -> dict[str, Any]:
    _check('baremetal:deploy_template:get')
    fields = listing.list_fields(list(template_view.FIELDS),
                                 template_view.LIST_FIELDS, False)
    page = listing.parse_page(template_obj.SORT_KEYS)
    marker = None
    if page.marker is not None:
        if not base.is_uuid_like(page.marker):
            raise exception.InvalidParameterValue(
                reason='marker must be a deploy template UUID, not "%s".'
                       % page.marker[:100])
        marker = _get(page.marker)
    templates = template_obj.DeployTemplate.list(
        services.db(), limit=page.limit, sort_key=page.sort_key,
        sort_dir=page.sort_dir, marker=marker,
        columns=set(fields) & set(template_obj.FIELDS))
    result: dict[str, Any] = {'deploy_templates': [
        template_view.render(t, fields) for t in templates]}
    result.update(listing.next_link(
        page, len(templates), templates[-1].uuid if templates else None))
    return result


def get_template(template_ident: str) -> dict[str, Any]:
    _check('baremetal:deploy_template:get')
    fields = listing.parse_fields(template_view.FIELDS)
    return template_view.render(_get(template_ident),
                                fields or template_view.FIELDS)


# ---- writing ---------------------------------------------------------------

def create_template() -> flask.Response:
    _check('baremetal:deploy_template:create')
    values = template_schema.normalize(body.json_body(template_schema.CREATE))
    given = values.pop('uuid', None)
    if given is not None:
        if not base.is_uuid_like(given):
            raise exception.InvalidParameterValue(
                reason='uuid must be a UUID, not "%s".' % given[:100])
        values['uuid'] = str(uuidlib.UUID(given))
    template = template_obj.DeployTemplate.create(services.db(), values)
    return listing.created('deploy_templates', template.uuid,
                           template_view.render(template,
                                                template_view.FIELDS))


def _check_paths(patch: Any) -> None:
    """Ironic's answer to a path outside the writable fields."""
    body.validate(patch, body.PATCH_SCHEMA, 'JSON Patch')
    for operation in patch:
        if operation['path'].split('/')[1] not in template_schema.UPDATABLE:
            raise exception.InvalidParameterValue(
                reason='Cannot patch %s. Only the following can be updated: '
                       '%s' % (operation['path'][:100],
                               ', '.join(sorted(template_schema.UPDATABLE))))


def patch_template(template_ident: str) -> dict[str, Any]:
    _check('baremetal:deploy_template:update')
    patch = body.json_body()
    _check_paths(patch)
    template = _get(template_ident)
    document = template_view.document(template)
    changes = body.patch_changes(document, patch, template_schema.UPDATABLE,
                                 'see the paths above')
    patched = dict(document, **changes)
    body.validate(patched, template_schema.UPDATE, 'deploy template')
    patched = template_schema.normalize(patched)
    for name in changes:
        setattr(template, name, patched[name])
    template.save()
    return template_view.render(template, template_view.FIELDS)


def delete_template(template_ident: str) -> flask.Response:
    _check('baremetal:deploy_template:delete')
    _get(template_ident).destroy()
    return flask.Response(status=204)
