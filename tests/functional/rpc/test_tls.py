# SPDX-License-Identifier: Apache-2.0
"""JSON-RPC over HTTPS: [json_rpc] use_ssl on conductors and on the API.

In-process endpoints on loopback for the client's checks, and real
``ferrum-api`` and ``ferrum-conductor`` processes for the whole path.
Certificates come from trustme.
"""

import pytest
import requests

from ferrum.api import remote
from ferrum.api import server
from ferrum.common import tls
from ferrum.objects import conductor as conductor_obj
from ferrum.rpc import client
from tests import certificates
from tests.functional.rpc import cluster
from tests.functional.rpc.endpoint import serving


@pytest.fixture
def certs(tmp_path):
    return certificates.make(tmp_path / 'certs')


@pytest.fixture
def tls_conf(conf, certs):
    """A conductor and an API, in one config, both on HTTPS."""
    conf.set_override('use_ssl', True, group='json_rpc')
    conf.set_override('cert_file', str(certs.cert), group='ssl')
    conf.set_override('key_file', str(certs.key), group='ssl')
    conf.set_override('cafile', str(certs.ca), group='json_rpc')
    return conf


def _registered(db):
    return {c.hostname: c.rpc_address for c in conductor_obj.list_all(
        db)}


def test_calls_go_over_https_verified_against_cafile(tls_conf, db):
    with serving(tls_conf, db) as (_svc, endpoint):
        assert endpoint.url.startswith('https://127.0.0.1:')
        assert _registered(db) == {tls_conf.host: endpoint.url}
        rpc = client.JsonRpcConductorAPI(tls_conf, db)
        node = rpc.create_node({'driver': 'fake-hardware', 'name': 'n1'})
        assert rpc.get_boot_device(node.id) is not None
        # The endpoint speaks nothing else.
        with pytest.raises(requests.ConnectionError):
            requests.post(endpoint.url.replace('https:', 'http:'),
                          data=b'{}', timeout=10)


def test_a_wrong_ca_is_refused_with_the_option_to_fix(tls_conf, db, certs,
                                                      caplog):
    with serving(tls_conf, db):
        tls_conf.set_override('cafile', str(certs.other_ca),
                              group='json_rpc')
        rpc = client.JsonRpcConductorAPI(tls_conf, db)
        with pytest.raises(client.ConductorUnreachable) as caught:
            rpc.create_node({'driver': 'fake-hardware'})
        # Through the API: the 503 of an unreachable conductor, naming why.
        api = remote.RemoteAPI(tls_conf, db).start().test_client()
        response = api.post('/v1/nodes', json={'driver': 'fake-hardware'})
    message = str(caught.value)
    assert caught.value.code == 503
    assert 'its TLS certificate is not trusted (' in message
    assert 'set [json_rpc] cafile on the API to the certificate authority ' \
           'that signed it' in message
    assert 'Traceback' not in message
    assert response.status_code == 503
    assert 'set [json_rpc] cafile on the API' in response.get_data(True)
    assert 'set [json_rpc] cafile on the API' in caplog.text


def test_the_system_authorities_do_not_trust_a_private_ca(tls_conf, db):
    tls_conf.clear_override('cafile', group='json_rpc')
    with serving(tls_conf, db):
        with pytest.raises(client.ConductorUnreachable,
                           match=r'\[json_rpc\] cafile'):
            client.JsonRpcConductorAPI(tls_conf, db).create_node(
                {'driver': 'fake-hardware'})


def test_conductor_asking_client_certificates(tls_conf, db, certs):
    tls_conf.set_override('ca_file', str(certs.ca), group='ssl')
    with serving(tls_conf, db):
        with pytest.raises(client.ConductorUnreachable) as caught:
            client.JsonRpcConductorAPI(tls_conf, db).create_node(
                {'driver': 'fake-hardware'})
        # The server's alert, or its close if that comes first.
        assert ('the TLS handshake failed (' in str(caught.value)
                or 'the connection closed during the TLS handshake ('
                in str(caught.value)), caught.value
        assert 'certfile and keyfile' in str(caught.value)
        tls_conf.set_override('certfile', str(certs.client_cert),
                              group='json_rpc')
        tls_conf.set_override('keyfile', str(certs.client_key),
                              group='json_rpc')
        node = client.JsonRpcConductorAPI(tls_conf, db).create_node(
            {'driver': 'fake-hardware'})
        assert node.driver == 'fake-hardware'


def test_json_rpc_ca_file_asks_client_certificates_there_only(tls_conf,
                                                                db, certs):
    """One config file for an API and a conductor: client certificates
    for JSON-RPC are not demanded of the API's own clients."""
    tls_conf.set_override('ca_file', str(certs.ca), group='json_rpc')
    tls_conf.set_override('enable_ssl_api', True, group='api')
    tls_conf.set_override('port', 0, group='api')
    api = server.APIServer(tls_conf)
    api.start(lambda environ, start_response: (
        start_response('200 OK', []), [b'ok'])[1])
    try:
        answer = requests.get(api.url, verify=str(certs.ca), timeout=10)
        assert answer.status_code == 200
    finally:
        api.stop()
    with serving(tls_conf, db):
        with pytest.raises(client.ConductorUnreachable,
                           match='certfile and keyfile'):
            client.JsonRpcConductorAPI(tls_conf, db).create_node(
                {'driver': 'fake-hardware'})
        tls_conf.set_override('certfile', str(certs.client_cert),
                              group='json_rpc')
        tls_conf.set_override('keyfile', str(certs.client_key),
                              group='json_rpc')
        node = client.JsonRpcConductorAPI(tls_conf, db).create_node(
            {'driver': 'fake-hardware'})
        assert node.driver == 'fake-hardware'


def test_json_rpc_ca_file_is_checked_at_start(tls_conf, tmp_path):
    missing = tmp_path / 'clients-ca.pem'
    tls_conf.set_override('ca_file', str(missing), group='json_rpc')
    with pytest.raises(tls.TLSFileInvalid) as caught:
        server.APIServer(tls_conf, group='json_rpc')
    assert str(caught.value) == (
        'Cannot use [json_rpc] ca_file = %s: no such file' % missing)


def test_use_ssl_never_calls_a_plain_http_conductor(conf, db, certs):
    with serving(conf, db) as (_svc, endpoint):
        assert endpoint.url.startswith('http://')
        conf.set_override('use_ssl', True, group='json_rpc')
        with pytest.raises(client.ConductorUnreachable) as caught:
            client.JsonRpcConductorAPI(conf, db).create_node(
                {'driver': 'fake-hardware'})
    assert ('it registered a plain HTTP address, and [json_rpc] use_ssl '
            'here allows HTTPS only: set [json_rpc] use_ssl = true on that '
            'conductor too') in str(caught.value)


def test_json_rpc_cert_file_overrides_ssl(tls_conf, tmp_path):
    missing = tmp_path / 'rpc-cert.pem'
    tls_conf.set_override('cert_file', str(missing), group='json_rpc')
    tls_conf.set_override('key_file', str(missing), group='json_rpc')
    with pytest.raises(tls.TLSFileInvalid) as caught:
        server.APIServer(tls_conf, group='json_rpc')
    assert str(caught.value) == (
        'Cannot use [json_rpc] cert_file = %s: no such file' % missing)
    tls_conf.clear_override('cert_file', group='ssl')
    tls_conf.clear_override('cert_file', group='json_rpc')
    tls_conf.clear_override('key_file', group='json_rpc')
    with pytest.raises(tls.TLSOptionMissing) as missing_option:
        server.APIServer(tls_conf, group='json_rpc')
    assert str(missing_option.value).startswith(
        '[json_rpc] use_ssl is set but [ssl] cert_file is not')


@pytest.mark.parametrize('option, content, reason', [
    ('cafile', None, 'no such file'),
    ('cafile', 'not a CA', 'it holds no PEM certificate'),
    ('certfile', None, 'no such file'),
])
def test_bad_client_files_stop_the_api_at_start(conf, db, tmp_path, option,
                                                content, reason):
    path = tmp_path / 'bad.pem'
    if content is not None:
        path.write_text(content)
    conf.set_override(option, str(path), group='json_rpc')
    with pytest.raises(tls.TLSFileInvalid) as caught:
        client.JsonRpcConductorAPI(conf, db)
    assert str(caught.value).startswith(
        'Cannot use [json_rpc] %s = %s: %s' % (option, path, reason))


def test_keyfile_without_certfile(conf, db, certs):
    conf.set_override('keyfile', str(certs.client_key), group='json_rpc')
    with pytest.raises(tls.TLSOptionMissing, match=r'\[json_rpc\] keyfile '
                       r'is set but \[json_rpc\] certfile is not'):
        client.JsonRpcConductorAPI(conf, db)


def test_api_and_conductor_processes_over_https(tmp_path, conf, pg_url,
                                                 certs):
    extra = {'json_rpc': {'use_ssl': 'true', 'cafile': str(certs.ca)},
             'ssl': {'cert_file': str(certs.cert),
                     'key_file': str(certs.key)}}
    with cluster.running(tmp_path, conf, pg_url, ['conductor-1'],
                         extra) as (url, _procs, db):
        address = _registered(db)['conductor-1']
        assert address.startswith('https://127.0.0.1:')
        response = requests.post(url + '/v1/nodes', headers=cluster.HEADERS,
                                 json={'driver': 'fake-hardware'},
                                 timeout=30)
        assert response.status_code == 201, response.text
        uuid = response.json()['uuid']
        response = requests.put(
            url + '/v1/nodes/%s/states/power' % uuid, timeout=30,
            headers=cluster.HEADERS, json={'target': 'power on'})
        assert response.status_code == 202, response.text
