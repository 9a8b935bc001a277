# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/states`` and ``/maintenance``: read and change state.

Changes are asynchronous, as in Ironic: the conductor accepts the request
(or refuses it with a clear error, changing nothing) and answers 202; the
node's state then shows progress.
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.schemas import node as node_schema
from ferrum.api.views import node as node_view
from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import provisioning
from ferrum.objects import node as node_obj

#: Provision targets -> the minor version that introduced them, from the
#: conductor's one verb table.
_TARGETS: dict[str, int] = {name: verb.min_version
                            for name, verb in provisioning.VERBS.items()}
_NO_RESCUE = ('rescue is not supported: no ferrum driver has a rescue '
              'interface')
#: Ironic targets ferrum does not serve: the version that introduced
#: them (406 before, as Ironic), and why (400 from it).
_UNSERVED_TARGETS = {
    'rescue': (38, _NO_RESCUE),
    'unrescue': (38, _NO_RESCUE),
    'unhold': (85, 'no ferrum node is ever held: ferrum runs no hold steps '
                   '(Ironic\'s "deploy hold", "clean hold" and "service '
                   'hold" states), so there is nothing to unhold'),
    'service': (87, 'servicing is not served: ferrum runs no service steps '
                    '(it needs the agent\'s in-band step machinery)'),
}
#: Power targets -> the minor version that introduced them.
_POWER_TARGETS: dict[str, int] = {
    'power on': 1, 'power off': 1, 'rebooting': 1,
    'soft power off': 27, 'soft rebooting': 27,
}
_STATE_FIELDS = ('console_enabled', 'last_error', 'power_state',
                 'provision_state', 'provision_updated_at', 'raid_config',
                 'target_power_state', 'target_provision_state',
                 'target_raid_config')


#: Options of later versions that ferrum accepts only empty or false:
#: (field, minor version, targets it goes with (the first two named in the
#: message), the answer to a value that is set).
_UNSERVED_STEP_OPTIONS = (
    ('deploy_steps', 69, ('active', 'rebuild', 'deploy'),
     "deploy_steps are not served: ferrum deploys with its deploy "
     "interface's own steps; leave them out."),
    ('disable_ramdisk', 70, ('clean',),
     'disable_ramdisk is not served: ferrum runs clean steps as its '
     'interfaces define them; leave it out.'),
)


def _node(node_ident: str, rule: str) -> node_obj.Node:
    return access.node(node_ident, rule)


def _accepted(node: node_obj.Node) -> flask.Response:
    response = flask.Response(status=202)
    response.headers['Location'] = '%sv1/nodes/%s/states' % (
        listing.base_url(), node.uuid)
    return response


def get_states(node_ident: str) -> dict[str, Any]:
    node = _node(node_ident, 'baremetal:node:get_states')
    ctx = node_view.Context(secrets={}, conductors={}, traits={},
                            allocations={}, hidden=access.node_redactions())
    available = node_view.available_fields()
    return node_view.render(
        node, [name for name in _STATE_FIELDS if name in available], ctx)


def _provision_args(target: str, request: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if target == 'clean' and not request.get('clean_steps'):
        raise exception.InvalidParameterValue(
            reason='Target "clean" needs "clean_steps": a list of '
                   '{"interface", "step", "args"} objects.')
    if request.get('clean_steps') is not None:
        if target != 'clean':
            raise exception.InvalidParameterValue(
                reason='clean_steps can only be given with target "clean".')
        args['clean_steps'] = request['clean_steps']
    for field, version, targets, unserved in _UNSERVED_STEP_OPTIONS:
        if request.get(field) is None:
            continue
        microversion.require(version, field)
        if target not in targets:
            raise exception.InvalidParameterValue(
                reason='%s can only be given with target %s.'
                % (field, ' or '.join('"%s"' % t for t in targets[:2])))
        if request[field]:
            raise exception.InvalidParameterValue(reason=unserved)
    configdrive = request.get('configdrive')
    if configdrive is not None:
        if target not in ('active', 'deploy', 'rebuild'):
            raise exception.InvalidParameterValue(
                reason='configdrive can only be given with target "active" '
                       'or "rebuild".')
        if target == 'rebuild':
            microversion.require(35, 'configdrive with "rebuild"')
        if isinstance(configdrive, dict):
            microversion.require(56, 'configdrive as a JSON object')
        args['configdrive'] = configdrive
    return args


#: Newer Ironic target names -> the name ferrum's versions use.
_OLDER_NAMES = {'deploy': 'active', 'undeploy': 'deleted'}


def _check_target(kind: str, target: str, versions: dict[str, int]) -> None:
    """A known target, available at the request's version."""
    if target not in versions:
        raise exception.InvalidParameterValue(
            reason='"%s" is not a %s target; use one of %s.' % (
                target[:100], kind, ', '.join(sorted(versions))))
    instead = ('Use the target "%s".' % _OLDER_NAMES[target]
               if target in _OLDER_NAMES else '')
    microversion.require(versions[target], 'The %s target "%s"'
                         % (kind, target), instead)


def set_provision_state(node_ident: str) -> flask.Response:
    request = body.json_body(node_schema.PROVISION)
    target = request['target']
    if target in _UNSERVED_TARGETS:
        minor, reason = _UNSERVED_TARGETS[target]
        microversion.require(minor, 'The provision target "%s"' % target)
        raise exception.InvalidParameterValue(reason=reason)
    _check_target('provision', target, _TARGETS)
    args = _provision_args(target, request)
    node = _node(node_ident, 'baremetal:node:set_provision_state')
    if target == 'abort' and node.provision_state == states.INSPECTWAIT:
        microversion.require(41, 'Aborting inspection')
    if target == 'abort' and node.provision_state == states.DEPLOYWAIT:
        microversion.require(110, 'Aborting a deploy in "wait call-back"')
    services.rpc().do_provisioning_action(node.id, target, args)
    return _accepted(node)


def set_power_state(node_ident: str) -> flask.Response:
    request = body.json_body(node_schema.POWER)
    target = request['target']
    _check_target('power', target, _POWER_TARGETS)
    if request.get('timeout') is not None:
        microversion.require(27, 'A power change timeout')
    node = _node(node_ident, 'baremetal:node:set_power_state')
    services.rpc().change_node_power_state(node.id, target,
                                           request.get('timeout'))
    return _accepted(node)


def set_maintenance(node_ident: str) -> flask.Response:
    request = body.json_body()
    body.validate(request, node_schema.MAINTENANCE, 'request body')
    node = _node(node_ident, 'baremetal:node:set_maintenance')
    services.rpc().set_maintenance(node.id, True,
                                   (request or {}).get('reason'))
    return _accepted(node)


def unset_maintenance(node_ident: str) -> flask.Response:
    node = _node(node_ident, 'baremetal:node:clear_maintenance')
    services.rpc().set_maintenance(node.id, False)
    return _accepted(node)
