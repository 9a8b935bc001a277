# SPDX-License-Identifier: Apache-2.0
"""The real Keystone of tests/keystone.py, and what the real
keystonemiddleware ``auth_token`` makes of its tokens: the facts issue 28's
``auth_strategy = keystone`` relies on, pinned."""

import json

import pytest
import requests
import werkzeug.test
from keystonemiddleware import auth_token
from oslo_config import cfg

from tests.keystone import PERSONAS
from tests.keystone import Keystone
from tests.keystone import require_keystone


def echo(environ, start_response):
    """The service behind the middleware: answers with the identity
    headers it was given."""
    seen = {key: value for key, value in environ.items()
            if key.startswith('HTTP_')}
    start_response('200 OK', [('Content-Type', 'application/json')])
    return [json.dumps(seen).encode()]


def middleware(keystone, tmp_path, **overrides):
    """``auth_token`` around :func:`echo`, configured as a service is: its
    own ConfigOpts reading ``[keystone_authtoken]`` from a file."""
    options = dict(keystone.authtoken_options(), **overrides)
    path = tmp_path / 'service.conf'
    path.write_text('[keystone_authtoken]\n' + ''.join(
        '%s = %s\n' % item for item in options.items() if item[1] is not None))
    conf = cfg.ConfigOpts()
    conf(['--config-file', str(path)], project='ferrum-test')
    app = auth_token.AuthProtocol(echo, {'oslo_config_config': conf})
    return werkzeug.test.Client(app)


@pytest.fixture
def service(keystone, tmp_path):
    return middleware(keystone, tmp_path)


def identity(response):
    assert response.status_code == 200, response.text
    return response.json


def roles(seen):
    return set(seen['HTTP_X_ROLES'].split(','))


def unset(seen, key):
    """auth_token sets the identity headers a token has no value for to
    None in the WSGI environ (not a string, and not absent): code reading
    them must take None as unset (``key in environ`` is no test)."""
    return key in seen and seen[key] is None


@pytest.mark.parametrize('persona', sorted(PERSONAS))
def test_every_persona_gets_a_token_scoped_as_it_is(keystone, persona):
    access = keystone.auth(persona).get_access(keystone.session(persona))
    _user, project, role = PERSONAS[persona]
    if project is None:
        assert access.system_scoped
        assert access.project_id is None
    else:
        assert access.project_id == keystone.project_ids[project]
        assert not access.system_scoped
    assert role in access.role_names


def test_a_project_member_is_its_project_with_reader_implied(keystone,
                                                             service):
    seen = identity(service.get('/', headers={
        'X-Auth-Token': keystone.token('owner-member')}))
    assert seen['HTTP_X_IDENTITY_STATUS'] == 'Confirmed'
    assert seen['HTTP_X_PROJECT_ID'] == keystone.project_ids['owner']
    assert seen['HTTP_X_PROJECT_NAME'] == 'owner'
    assert seen['HTTP_X_USER_ID'] == keystone.user_ids['owner-member']
    assert roles(seen) == {'member', 'reader'}
    assert unset(seen, 'HTTP_OPENSTACK_SYSTEM_SCOPE')


def test_a_project_admin_has_every_implied_role(keystone, service):
    seen = identity(service.get('/', headers={
        'X-Auth-Token': keystone.token('lessee-admin')}))
    assert seen['HTTP_X_PROJECT_ID'] == keystone.project_ids['lessee']
    assert roles(seen) == {'admin', 'manager', 'member', 'reader'}


@pytest.mark.parametrize('persona,expected', [
    ('system-reader', {'reader'}),
    ('system-member', {'member', 'reader'}),
    ('system-admin', {'admin', 'manager', 'member', 'reader'}),
])
def test_a_system_persona_has_system_scope_and_no_project(keystone, service,
                                                          persona, expected):
    seen = identity(service.get('/', headers={
        'X-Auth-Token': keystone.token(persona)}))
    assert seen['HTTP_OPENSTACK_SYSTEM_SCOPE'] == 'all'
    assert unset(seen, 'HTTP_X_PROJECT_ID')
    assert roles(seen) == expected


def test_identity_headers_sent_by_the_client_are_replaced(keystone,
                                                          service):
    seen = identity(service.get('/', headers={
        'X-Auth-Token': keystone.token('third-reader'),
        'X-Roles': 'admin',
        'X-Project-Id': keystone.project_ids['owner'],
        'OpenStack-System-Scope': 'all'}))
    assert roles(seen) == {'reader'}
    assert seen['HTTP_X_PROJECT_ID'] == keystone.project_ids['third']
    assert unset(seen, 'HTTP_OPENSTACK_SYSTEM_SCOPE')


def test_every_token_is_of_the_admin_project_by_default(keystone, service):
    """Keystone without ``[resource] admin_project_name`` (its default,
    and this one's) leaves ``is_admin_project`` out of tokens, which
    auth_token reads as True: a policy must never grant by
    ``is_admin_project``."""
    seen = identity(service.get('/', headers={
        'X-Auth-Token': keystone.token('third-reader')}))
    assert seen['HTTP_X_IS_ADMIN_PROJECT'] == 'True'


def test_identity_headers_without_a_token_are_refused(keystone, service):
    response = service.get('/', headers={
        'X-Roles': 'admin', 'OpenStack-System-Scope': 'all',
        'X-Identity-Status': 'Confirmed'})
    assert response.status_code == 401


def test_a_bad_token_is_401_naming_keystone(keystone, service):
    response = service.get('/', headers={'X-Auth-Token': 'not-a-token'})
    assert response.status_code == 401
    assert response.headers['WWW-Authenticate'] == (
        'Keystone uri="%s"' % keystone.url)


def test_the_internal_endpoint_is_in_the_catalog_too(keystone, tmp_path):
    """keystonemiddleware's default interface is internal: the tool
    bootstraps every interface, or each validation would be a 500."""
    service = middleware(keystone, tmp_path, interface=None)
    seen = identity(service.get('/', headers={
        'X-Auth-Token': keystone.token('owner-reader')}))
    assert seen['HTTP_X_PROJECT_ID'] == keystone.project_ids['owner']


def test_keystone_down_is_503_for_an_unseen_token_and_recovers(keystone,
                                                               service):
    seen_before = keystone.token('owner-admin')
    identity(service.get('/', headers={'X-Auth-Token': seen_before}))
    unseen = keystone.new_token('lessee-member')
    keystone.stop()
    try:
        with pytest.raises(requests.ConnectionError):
            requests.get(keystone.auth_url, timeout=10)
        response = service.get('/', headers={'X-Auth-Token': unseen})
        assert response.status_code == 503
        # Tokens it validated before stay in its cache; no token stays 401.
        identity(service.get('/', headers={'X-Auth-Token': seen_before}))
        assert service.get('/').status_code == 401
    finally:
        keystone.start()
    # The same database and keys: a token issued before the stop is good.
    seen = identity(service.get('/', headers={'X-Auth-Token': unseen}))
    assert seen['HTTP_X_PROJECT_ID'] == keystone.project_ids['lessee']


def test_the_tool_runs_keystone_on_postgresql(pg_url, tmp_path):
    """``tools/keystone_server.py --db-url``: the same set-up and service
    on PostgreSQL, for runs longer than SQLite should take."""
    require_keystone()
    keystone = Keystone(str(tmp_path), db_url=pg_url)
    try:
        keystone.start()
        admin = keystone.session('system-admin')
        assert admin.auth.get_access(admin).system_scoped
        services = admin.get(keystone.auth_url + '/services').json()
        assert [s['type'] for s in services['services']] == ['identity']
    finally:
        keystone.stop()
