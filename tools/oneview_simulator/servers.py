# SPDX-License-Identifier: Apache-2.0
"""What changes a server: power, server profiles, and a OneView user's hand.

Each REST change returns a task (see ``appliance.Appliance.start_task``);
its effect shows at once where OneView shows it at once (the hardware's
``serverProfileUri`` is reserved when a profile is being applied) and the
rest when the task completes.
"""

import copy
from typing import Any

from appliance import Appliance
from appliance import ApplianceError
from appliance import public
from appliance import timestamp

_POWER_STATES = ('On', 'Off')
_POWER_CONTROLS = ('MomentaryPress', 'PressAndHold', 'ColdBoot', 'Reset')
#: Fields a PUT may not change (the hardware moves only by delete + create).
_FIXED = ('uri', 'serverHardwareUri', 'created', 'category')


def _bump(item: dict[str, Any]) -> None:
    item['eTag'] = str(int(item.get('eTag') or 0) + 1)


def set_power(app: Appliance, sh_uri: str, body: Any) -> dict[str, Any]:
    """``PUT /rest/server-hardware/{id}/powerState``: a power task."""
    with app.lock:
        app.settle()
        sh = _hardware(app, sh_uri)
        if not isinstance(body, dict) or body.get(
                'powerState') not in _POWER_STATES or body.get(
                'powerControl', 'MomentaryPress') not in _POWER_CONTROLS:
            raise ApplianceError(400, 'INVALID_POWER_STATE',
                                 'powerState must be On or Off, powerControl'
                                 ' one of %s' % ', '.join(_POWER_CONTROLS))
        target, before = body['powerState'], sh['powerState']
        sh['powerState'] = 'Powering' + target if before != target \
            else before

        def done() -> None:
            sh['powerState'] = target
            _bump(sh)

        def undo() -> None:
            sh['powerState'] = before

        return app.start_task('Set power state', sh, done, undo)


def create_profile(app: Appliance, body: Any) -> dict[str, Any]:
    """``POST /rest/server-profiles``: reserve the hardware, then apply."""
    with app.lock:
        app.settle()
        if not isinstance(body, dict) or not body.get('name'):
            raise ApplianceError(400, 'INVALID_PROFILE',
                                 'A server profile needs a name.')
        sh_uri = body.get('serverHardwareUri') or ''
        sh = _hardware(app, sh_uri) if sh_uri else None
        if sh is not None and sh['serverHardwareTypeUri'] != body.get(
                'serverHardwareTypeUri', sh['serverHardwareTypeUri']):
            raise ApplianceError(
                400, 'SERVER_HARDWARE_TYPE_MISMATCH',
                'The server hardware type of %s does not match the '
                'profile.' % sh_uri)
        uri = '/rest/server-profiles/' + app.new_id('sp')
        profile = copy.deepcopy(body)
        profile.update({'uri': uri, 'category': 'server-profiles',
                        'type': body.get('type', 'ServerProfileV9'),
                        'eTag': '1', 'created': timestamp(),
                        'state': 'Creating', 'status': 'OK',
                        'serverHardwareUri': sh_uri or None})
        profile.setdefault('boot', {'manageBoot': False, 'order': []})
        if sh is not None and sh['serverProfileUri']:
            # OneView accepts the request and fails the task.
            return app.start_task(
                'Create', profile, lambda: None, error=(
                    'ProfileAlreadyExistsInServer',
                    'The server hardware %s already has a server profile '
                    'applied: %s' % (sh['name'], sh['serverProfileUri'])))
        app.profiles[uri] = profile
        if sh is not None:
            sh['serverProfileUri'], sh['state'] = uri, 'ApplyingProfile'

        def done() -> None:
            profile['state'] = 'Normal'
            if sh is not None:
                sh['state'] = 'ProfileApplied'
                _bump(sh)

        def undo() -> None:
            app.profiles.pop(uri, None)
            if sh is not None and sh['serverProfileUri'] == uri:
                sh['serverProfileUri'], sh['state'] = None, 'NoProfileApplied'

        return app.start_task('Create', profile, done, undo)


def update_profile(app: Appliance, uri: str, body: Any) -> dict[str, Any]:
    """``PUT /rest/server-profiles/{id}``: the full profile, eTag checked."""
    with app.lock:
        app.settle()
        profile = _profile(app, uri)
        if not isinstance(body, dict):
            raise ApplianceError(400, 'INVALID_PROFILE', 'Bad profile body.')
        if body.get('eTag') not in (None, '*', profile['eTag']):
            raise ApplianceError(
                412, 'ETAG_MISMATCH', 'The resource was changed since it '
                'was read (eTag %s, now %s).' % (body['eTag'],
                                                 profile['eTag']))
        for field in _FIXED:
            if body.get(field, profile.get(field)) != profile.get(field):
                raise ApplianceError(
                    400, 'INVALID_PROFILE_CHANGE',
                    '%s cannot be changed by this simulator.' % field)
        changes = {k: copy.deepcopy(v) for k, v in body.items()
                   if k not in _FIXED and k != 'eTag'}

        def done() -> None:
            profile.update(changes)
            _bump(profile)

        return app.start_task('Update', profile, done)


def delete_profile(app: Appliance, uri: str) -> dict[str, Any]:
    """``DELETE /rest/server-profiles/{id}``: a task named Delete."""
    with app.lock:
        app.settle()
        profile = _profile(app, uri)
        sh = app.hardware.get(profile.get('serverHardwareUri') or '')
        if sh is not None and sh['serverProfileUri'] == uri:
            sh['state'] = 'RemovingProfile'

        def done() -> None:
            _unassign(app, uri)

        def undo() -> None:
            if sh is not None and sh['serverProfileUri'] == uri:
                sh['state'] = 'ProfileApplied'

        return app.start_task('Delete', profile, done, undo)


def take(app: Appliance, sh_uri: str) -> dict[str, Any]:
    """A OneView user applies their own profile: no task, no faults."""
    with app.lock:
        app.settle()
        sh = _hardware(app, sh_uri)
        if sh['serverProfileUri']:
            raise ApplianceError(409, 'ProfileAlreadyExistsInServer',
                                 '%s already has %s' % (
                                     sh_uri, sh['serverProfileUri']))
        uri = '/rest/server-profiles/' + app.new_id('sp')
        app.profiles[uri] = {
            'uri': uri, 'name': 'OneView user profile %s' % sh['name'],
            'category': 'server-profiles', 'type': 'ServerProfileV9',
            'eTag': '1', 'created': timestamp(), 'state': 'Normal',
            'status': 'OK', 'serverHardwareUri': sh_uri,
            'serverHardwareTypeUri': sh['serverHardwareTypeUri'],
            'enclosureGroupUri': sh['serverGroupUri'],
            'serverProfileTemplateUri': None, 'macType': 'Physical',
            'boot': {'manageBoot': True, 'order': ['HardDisk']}}
        sh['serverProfileUri'], sh['state'] = uri, 'ProfileApplied'
        _bump(sh)
        return public(sh)


def free(app: Appliance, sh_uri: str) -> dict[str, Any]:
    """Whatever profile the hardware has is removed at once."""
    with app.lock:
        app.settle()
        sh = _hardware(app, sh_uri)
        if sh['serverProfileUri']:
            _unassign(app, sh['serverProfileUri'])
        return public(sh)


def new_profile(app: Appliance, spt_uri: str) -> dict[str, Any]:
    """``GET .../{id}/new-profile``: a profile skeleton from the template."""
    spt = app.get('server-profile-templates', spt_uri)
    skeleton = {k: v for k, v in spt.items()
                if k not in ('uri', 'name', 'eTag', 'category',
                             'serverProfileDescription')}
    skeleton.update({'type': 'ServerProfileV9', 'name': '',
                     'serverProfileTemplateUri': spt_uri,
                     'serverHardwareUri': None,
                     'description': spt.get('serverProfileDescription', '')})
    return skeleton


def state(app: Appliance) -> dict[str, Any]:
    """The whole appliance, compactly, for ``GET /admin/state``."""
    with app.lock:
        app.settle()
        by_key = {t['_key']: uri for uri, t in app.templates.items()}
        return {
            'hardware': [{k: sh[k] for k in (
                'uri', 'name', 'powerState', 'serverProfileUri', 'state',
                'serverHardwareTypeUri', 'serverGroupUri')}
                for sh in app.hardware.values()],
            'profiles': [{'uri': p['uri'], 'name': p['name'],
                          'serverHardwareUri': p.get('serverHardwareUri'),
                          'state': p.get('state'),
                          'bootOrder': (p.get('boot') or {}).get('order'),
                          'serverProfileTemplateUri': p.get(
                              'serverProfileTemplateUri')}
                         for p in app.profiles.values()],
            'tasks': [public(t) for t in list(app.tasks.values())[-200:]],
            'templates': by_key,
            'server_hardware_types': list(app.types),
            'enclosure_groups': list(app.groups),
            'faults': [public(f) for f in app.faults],
            'sessions': len(app.sessions),
            'hanging': list(app.hanging),
            'page_size': app.page_size,
        }


def _unassign(app: Appliance, uri: str) -> None:
    profile = app.profiles.pop(uri, None)
    sh = app.hardware.get((profile or {}).get('serverHardwareUri') or '')
    if sh is not None and sh['serverProfileUri'] == uri:
        sh['serverProfileUri'], sh['state'] = None, 'NoProfileApplied'
        _bump(sh)



def _hardware(app: Appliance, uri: str) -> dict[str, Any]:
    return app.find('server-hardware', uri)


def _profile(app: Appliance, uri: str) -> dict[str, Any]:
    return app.find('server-profiles', uri)
