# SPDX-License-Identifier: Apache-2.0
"""The API over HTTPS: [api] enable_ssl_api with the [ssl] certificate.

Certificates come from trustme; clients are requests, openstacksdk and the
``baremetal`` CLI, each trusting the test's certificate authority.
"""

import os
import sqlite3
import subprocess
import sys

import openstack
import pytest
import requests

from ferrum.api import server
from ferrum.common import tls
from tests import certificates

BIN = os.path.dirname(sys.executable)


@pytest.fixture
def certs(tmp_path):
    return certificates.make(tmp_path / 'certs')


@pytest.fixture
def tls_conf(conf, certs):
    conf.set_override('port', 0, group='api')
    conf.set_override('enable_ssl_api', True, group='api')
    conf.set_override('cert_file', str(certs.cert), group='ssl')
    conf.set_override('key_file', str(certs.key), group='ssl')
    return conf


@pytest.fixture
def https_api(tls_conf, app):
    api = server.APIServer(tls_conf)
    api.start(app)
    yield api
    api.stop()


def test_serves_https_to_a_client_trusting_the_ca(https_api, certs):
    assert https_api.url == 'https://127.0.0.1:%d' % https_api.port
    response = requests.get(https_api.url + '/v1', verify=str(certs.ca),
                            timeout=10)
    assert response.status_code == 200
    # Links follow the scheme the request came in with.
    assert [link['href'] for link in response.json()['links']
            if link['rel'] == 'self'] == [https_api.url + '/v1/']
    assert requests.get(https_api.url + '/v1/nodes', verify=str(certs.ca),
                        timeout=10).json() == {'nodes': []}


def test_serves_no_plain_http(https_api):
    plain = 'http://127.0.0.1:%d/v1/nodes' % https_api.port
    try:
        response = requests.get(plain, timeout=10)
    except requests.ConnectionError:
        return  # cheroot 11 resets the connection
    # Older cheroot answers 400 "only speaks HTTPS"; never the API's data.
    assert response.status_code == 400
    assert 'nodes' not in response.text


def test_a_client_trusting_another_ca_refuses_the_api(https_api, certs):
    with pytest.raises(requests.exceptions.SSLError,
                       match='CERTIFICATE_VERIFY_FAILED'):
        requests.get(https_api.url + '/v1', verify=str(certs.other_ca),
                     timeout=10)


def test_ca_file_requires_client_certificates(tls_conf, app, certs):
    tls_conf.set_override('ca_file', str(certs.ca), group='ssl')
    api = server.APIServer(tls_conf)
    api.start(app)
    try:
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.get(api.url + '/v1', verify=str(certs.ca), timeout=10)
        response = requests.get(
            api.url + '/v1', verify=str(certs.ca), timeout=10,
            cert=(str(certs.client_cert), str(certs.client_key)))
        assert response.status_code == 200
    finally:
        api.stop()


def test_openstacksdk_with_the_ca(https_api, certs):
    connection = openstack.connect(
        load_yaml_config=False, load_envvars=False, auth_type='none',
        baremetal_endpoint_override=https_api.url, cacert=str(certs.ca))
    try:
        assert list(connection.baremetal.nodes()) == []
    finally:
        connection.close()


def test_baremetal_cli_with_os_cacert(https_api, certs, tmp_path):
    env = {key: value for key, value in os.environ.items()
           if not key.startswith('OS_')}
    env.update(HOME=str(tmp_path), OS_CACERT=str(certs.ca))
    result = subprocess.run(
        [os.path.join(BIN, 'baremetal'), '--os-endpoint', https_api.url,
         '--os-auth-type', 'none', 'node', 'list', '-f', 'json'],
        env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, check=False)
    assert (result.returncode, result.stdout.strip()) == (0, '[]'), (
        result.stderr)


# ---- start-up: every file checked, one clear error -------------------------

def _encrypted_key(certs, path):
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(certs.key.read_bytes(), None)
    path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b'secret')))


@pytest.mark.parametrize('option, make, reason', [
    ('cert_file', lambda certs, path: None, 'no such file'),
    ('cert_file', lambda certs, path: path.mkdir(), 'it is a directory'),
    ('cert_file', lambda certs, path: path.write_text('not a certificate'),
     'it holds no PEM certificate (no "-----BEGIN CERTIFICATE-----" line)'),
    ('key_file', lambda certs, path: None, 'no such file'),
    ('key_file', lambda certs, path: path.write_text('not a key'),
     'it holds no PEM private key'),
    ('key_file',
     lambda certs, path: path.write_bytes(certs.client_key.read_bytes()),
     'it is not the private key of [ssl] cert_file = '),
    ('key_file', _encrypted_key,
     'the private key is encrypted; ferrum needs it unencrypted'),
    ('ca_file', lambda certs, path: path.write_text('no CA'),
     'it holds no PEM certificate'),
])
def test_bad_file_is_named_at_start(tls_conf, app, certs, tmp_path, option,
                                    make, reason):
    path = tmp_path / 'bad.pem'
    make(certs, path)
    tls_conf.set_override(option, str(path), group='ssl')
    with pytest.raises(tls.TLSFileInvalid) as info:
        server.APIServer(tls_conf)
    assert str(info.value).startswith('Cannot use [ssl] %s = %s: %s'
                                      % (option, path, reason))


def test_enable_ssl_api_without_a_certificate(conf, app):
    conf.set_override('enable_ssl_api', True, group='api')
    with pytest.raises(tls.TLSOptionMissing) as info:
        server.APIServer(conf)
    assert str(info.value) == (
        '[api] enable_ssl_api is set but [ssl] cert_file is not: set it to '
        'the PEM file of the certificate to serve.')


@pytest.mark.parametrize('command', ['ferrum', 'ferrum-api'])
def test_missing_file_stops_before_the_conductor_starts(tmp_path, certs,
                                                        command):
    # The local conductor would register, clear locks and start periodics
    # first, at every restart systemd makes.
    database = tmp_path / 'ferrum.sqlite'
    config = tmp_path / 'ferrum.conf'
    missing = tmp_path / 'nowhere.pem'
    config.write_text(
        '[DEFAULT]\nstate_path = %s\nenabled_hardware_types = fake-hardware'
        '\n[database]\nconnection = sqlite:///%s\n[api]\nport = 0\n'
        'enable_ssl_api = true\n[ssl]\ncert_file = %s\nkey_file = %s\n'
        % (tmp_path / 'state', database, missing, certs.key))
    subprocess.run([os.path.join(BIN, 'ferrum-dbsync'), '--config-file',
                    str(config), 'upgrade'], check=True, timeout=120,
                   capture_output=True, cwd=tmp_path)
    result = subprocess.run(
        [os.path.join(BIN, command), '--config-file', str(config)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 1
    # The last line: a library's deprecation warning may come first.
    assert result.stderr.strip().splitlines()[-1] == (
        '%s cannot start: Cannot use [ssl] cert_file = %s: no such '
        'file' % (command, missing)), result.stderr
    assert 'Traceback' not in result.stdout + result.stderr
    with sqlite3.connect(database) as db:
        assert db.execute('SELECT hostname FROM conductors').fetchall() == []
