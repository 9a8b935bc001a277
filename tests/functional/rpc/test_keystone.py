# SPDX-License-Identifier: Apache-2.0
"""``[json_rpc] auth_strategy = keystone`` against the real Keystone.

The conductor's endpoint runs the real keystonemiddleware ``auth_token``
and serves only ferrum's services: the ``service`` persona (user ``ferrum``
with the service role) and the system admin. Tenants' tokens, even a
project administrator's, are refused, as are bad tokens and none at all.
"""

import contextlib
import json

import pytest
import requests
from keystoneauth1 import loading as ks_loading

from ferrum.api import server
from ferrum.conductor import service
from ferrum.rpc import client
from ferrum.rpc import server as rpc_server
from ferrum.rpc import service_auth
from tests.functional.rpc import cluster

CALL = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'get_boot_device',
                   'params': {'node_id': 1}})


def _set(conf, group, options):
    # The plugin's options are registered when it is loaded: register the
    # password plugin's now, so that the test can set them.
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('password'),
                       group=group)
    for name, value in options.items():
        conf.set_override(name, value, group=group)


def _service_credentials(keystone):
    options = keystone.authtoken_options()
    return {name: options[name] for name in (
        'auth_url', 'auth_type', 'username', 'password', 'user_domain_id',
        'project_name', 'project_domain_id')}


@pytest.fixture
def ks_conf(conf, keystone):
    """A conductor and an API in one config, both under keystone."""
    conf.set_override('auth_strategy', 'keystone', group='json_rpc')
    _set(conf, 'keystone_authtoken', keystone.authtoken_options())
    _set(conf, 'json_rpc', _service_credentials(keystone))
    return conf


@contextlib.contextmanager
def _serving(conf, db):
    conf.set_override('port', 0, group='json_rpc')
    svc = service.ConductorService(conf, db=db)
    endpoint = server.APIServer(conf, group='json_rpc', what='JSON-RPC')
    endpoint.start(rpc_server.application(conf, lambda: svc.manager))
    svc.start(start_periodics=False, rpc_address=endpoint.url)
    try:
        yield endpoint.url
    finally:
        svc.stop()
        endpoint.stop()


def _post(url, token=None, **headers):
    if token is not None:
        headers['X-Auth-Token'] = token
    return requests.post(url, data=CALL, timeout=30, headers={
        'Content-Type': 'application/json', **headers})


def test_the_api_calls_with_its_service_token(ks_conf, db):
    with _serving(ks_conf, db):
        rpc = client.JsonRpcConductorAPI(ks_conf, db)
        node = rpc.create_node({'driver': 'fake-hardware', 'name': 'n1'})
        assert rpc.get_boot_device(node.id) is not None


@pytest.mark.parametrize('persona', ['service', 'system-admin'])
def test_services_are_served(ks_conf, db, keystone, persona):
    with _serving(ks_conf, db) as url:
        answer = _post(url, keystone.token(persona))
        assert answer.status_code == 200, answer.text
        # No such node, but the call reached the conductor.
        assert answer.json()['error']['data']['code'] == 404


@pytest.mark.parametrize('persona', ['owner-admin', 'lessee-member',
                                     'third-reader', 'system-member'])
def test_a_tenant_token_is_refused(ks_conf, db, keystone, persona):
    with _serving(ks_conf, db) as url:
        # Identity headers sent by the client do not count.
        answer = _post(url, keystone.token(persona), **{
            'X-Roles': 'service,admin', 'OpenStack-System-Scope': 'all'})
        assert answer.status_code == 403, answer.text
        error = answer.json()['error']
        assert error['code'] == rpc_server.INVALID_REQUEST
        assert '"service" role' in error['message']


#: auth_token decides alone even where it is told it may defer.
DELAY = pytest.mark.parametrize('delay', [False, True],
                                ids=['decided', 'delay_auth_decision'])


@DELAY
@pytest.mark.parametrize('token', [None, 'not-a-token'])
def test_no_token_or_a_bad_one_is_refused(ks_conf, db, token, delay):
    ks_conf.set_override('delay_auth_decision', delay,
                         group='keystone_authtoken')
    with _serving(ks_conf, db) as url:
        answer = _post(url, token, **{'X-Roles': 'service'})
        assert answer.status_code == 401, answer.text
        assert answer.headers['WWW-Authenticate'].startswith('Keystone uri=')


def test_the_api_needs_its_credentials(conf, db):
    conf.set_override('auth_strategy', 'keystone', group='json_rpc')
    with pytest.raises(service_auth.ServiceAuthMissing,
                       match=r'\[json_rpc\] auth_type is unset'):
        client.JsonRpcConductorAPI(conf, db)
    conf.set_override('auth_type', 'password', group='json_rpc')
    with pytest.raises(service_auth.ServiceAuthMissing,
                       match=r'\[json_rpc\] auth_url unset'):
        client.JsonRpcConductorAPI(conf, db)


def test_a_wrong_service_password_is_503_naming_keystone(ks_conf, db):
    ks_conf.set_override('password', 'wrong', group='json_rpc')
    with _serving(ks_conf, db):
        rpc = client.JsonRpcConductorAPI(ks_conf, db)
        with pytest.raises(service_auth.KeystoneUnavailable) as caught:
            rpc.create_node({'driver': 'fake-hardware'})
        assert caught.value.code == 503
        assert 'wrong' not in str(caught.value)


def test_api_and_conductor_processes_under_keystone(tmp_path, conf, pg_url,
                                                     keystone):
    """ferrum-api (itself under keystone) and a ferrum-conductor."""
    authtoken = keystone.authtoken_options()
    extra = {'DEFAULT': {'auth_strategy': 'keystone'},
             'keystone_authtoken': authtoken,
             'json_rpc': {'auth_strategy': 'keystone',
                          **_service_credentials(keystone)}}
    with cluster.running(tmp_path, conf, pg_url, ['conductor-1'],
                         extra) as (url, _procs, _db):
        headers = dict(cluster.HEADERS,
                       **{'X-Auth-Token': keystone.token('system-admin')})
        response = requests.post(url + '/v1/nodes', headers=headers,
                                 json={'driver': 'fake-hardware'},
                                 timeout=30)
        assert response.status_code == 201, response.text
        uuid = response.json()['uuid']
        response = requests.put(
            url + '/v1/nodes/%s/states/power' % uuid, timeout=30,
            headers=headers, json={'target': 'power on'})
        assert response.status_code == 202, response.text


@DELAY
def test_a_revoked_token_is_replaced_once(ks_conf, db, keystone, delay):
    """A conductor refusing the API's token (401: revoked before it
    expired) gets the call once more with a new token."""
    ks_conf.set_override('delay_auth_decision', delay,
                         group='keystone_authtoken')
    with _serving(ks_conf, db):
        rpc = client.JsonRpcConductorAPI(ks_conf, db)
        first = rpc._token.headers()['X-Auth-Token']
        # Revoked before the conductor ever saw it: auth_token's cache
        # does not hide the revocation.
        keystone.session('system-admin').delete(
            keystone.auth_url + '/auth/tokens',
            headers={'X-Subject-Token': first})
        node = rpc.create_node({'driver': 'fake-hardware'})
        assert node.driver == 'fake-hardware'
        assert rpc._token.headers()['X-Auth-Token'] != first


@pytest.mark.parametrize('environ', [
    {}, {'HTTP_X_ROLES': None}, {'HTTP_X_ROLES': 'admin,member'},
    {'HTTP_X_ROLES': 'admin', 'HTTP_OPENSTACK_SYSTEM_SCOPE': None},
    {'HTTP_X_ROLES': 'servicex', 'HTTP_X_PROJECT_NAME': 'service'},
    # A tenant's own user with the service role in its project.
    {'HTTP_X_ROLES': 'service', 'HTTP_X_PROJECT_NAME': 'tenant'},
    {'HTTP_X_ROLES': 'service', 'HTTP_X_PROJECT_NAME': None}])
def test_what_is_not_a_service(environ):
    # auth_token sets headers a token has no value for to None.
    assert service_auth.refusal(environ, 'service') is not None


@pytest.mark.parametrize('environ', [
    {'HTTP_X_ROLES': 'reader,service', 'HTTP_X_PROJECT_NAME': 'service'},
    {'HTTP_X_ROLES': 'admin', 'HTTP_OPENSTACK_SYSTEM_SCOPE': 'all'}])
def test_what_is_a_service(environ):
    assert service_auth.refusal(environ, 'service') is None
