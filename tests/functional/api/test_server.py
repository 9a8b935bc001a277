# SPDX-License-Identifier: Apache-2.0
"""Serving the API with cheroot: addresses, ports, start and stop."""

import socket

import pytest
import requests

from ferrum.api import microversion
from ferrum.api import server

MIN_VERSION = microversion.as_string(microversion.MIN_VERSION)


@pytest.fixture
def api_server(conf):
    conf.set_override('port', 0, group='api')
    servers = []

    def make(app):
        api = server.APIServer(conf)
        api.start(app)
        servers.append(api)
        return api
    yield make
    for api in servers:
        api.stop()


def test_serves_the_app_on_a_free_port(api_server, app):
    api = api_server(app)
    assert api.port != 0
    assert api.url == 'http://127.0.0.1:%d' % api.port
    response = requests.get(api.url + '/v1', timeout=10)
    assert response.status_code == 200
    assert response.headers['X-OpenStack-Ironic-API-Version'] == MIN_VERSION
    assert response.headers['Server'] == 'ferrum'
    assert requests.get(api.url + '/v1/nodes',
                        timeout=10).json() == {'nodes': []}


def test_stop_closes_the_port_and_may_be_repeated(api_server, app):
    api = api_server(app)
    api.stop()
    api.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(api.url + '/v1', timeout=10)


def test_port_in_use_is_a_clear_error(conf, app):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        conf.set_override('port', port, group='api')
        api = server.APIServer(conf)
        with pytest.raises(server.BindFailed) as info:
            api.start(app)
    message = str(info.value)
    assert message.startswith('Cannot serve the API on 127.0.0.1 port %d: '
                              % port)
    assert 'Address already in use' in message
    assert message.endswith('Change [api] host_ip or port, or stop what '
                            'already listens there.')


@pytest.mark.parametrize('host', ['0.0.0.0', '::', '192.0.2.10'])
def test_noauth_refuses_a_non_loopback_address(conf, host):
    conf.set_override('host_ip', host, group='api')
    with pytest.raises(server.NoauthNotLoopback) as info:
        server.APIServer(conf)
    assert str(info.value).startswith(
        'Refusing to serve the API on %s without authentication' % host)
    assert '[api] allow_non_loopback_noauth = True' in str(info.value)
    assert '[DEFAULT] auth_strategy = http_basic' in str(info.value)


def test_allow_option_serves_noauth_on_any_address(conf, api_server, app,
                                                   caplog):
    conf.set_override('host_ip', '0.0.0.0', group='api')
    conf.set_override('allow_non_loopback_noauth', True, group='api')
    api = api_server(app)
    assert requests.get('http://127.0.0.1:%d/v1' % api.port,
                        timeout=10).status_code == 200
    assert 'without authentication' in caplog.text


def test_noauth_json_rpc_refuses_a_non_loopback_address(conf):
    conf.set_override('host_ip', '0.0.0.0', group='json_rpc')
    # The API's own strategy is not the endpoint's.
    conf.set_override('auth_strategy', 'http_basic')
    with pytest.raises(server.NoauthNotLoopback) as info:
        server.APIServer(conf, group='json_rpc',
                         what='conductor JSON-RPC endpoint')
    message = str(info.value)
    assert message.startswith('Refusing to serve the conductor JSON-RPC '
                              'endpoint on 0.0.0.0 without authentication')
    assert '[json_rpc] auth_strategy = http_basic' in message
    assert '[json_rpc] allow_non_loopback_noauth = True' in message
    conf.set_override('allow_non_loopback_noauth', True, group='json_rpc')
    server.APIServer(conf, group='json_rpc')
    conf.set_override('allow_non_loopback_noauth', False, group='json_rpc')
    conf.set_override('auth_strategy', 'http_basic', group='json_rpc')
    server.APIServer(conf, group='json_rpc')


def test_http_basic_may_bind_any_address(conf):
    conf.set_override('host_ip', '0.0.0.0', group='api')
    conf.set_override('auth_strategy', 'http_basic')
    server.APIServer(conf)


@pytest.mark.parametrize('host, loopback', [
    ('127.0.0.1', True), ('127.1.2.3', True), ('::1', True),
    ('localhost', True), ('0.0.0.0', False), ('::', False),
    ('192.0.2.10', False), ('no-such-host.invalid', False)])
def test_is_loopback(host, loopback):
    assert server.is_loopback(host) is loopback
