# SPDX-License-Identifier: Apache-2.0
"""The real ``ferrum`` and ``ferrum-api`` processes serving HTTP.

The ``baremetal`` CLI tests run the commands README.md gives, so the
README cannot drift from what works.
"""

import json
import os
import socket
import subprocess
import sys

import bcrypt
import requests

from ferrum import conf as ferrum_conf
from ferrum.api import microversion
from ferrum.db import api as db_api
from ferrum.objects import conductor as conductor_obj
from tests.functional import server

BIN = os.path.dirname(sys.executable)
MIN_VERSION = microversion.as_string(microversion.MIN_VERSION)


def _run(command, config, **kwargs):
    return subprocess.run([os.path.join(BIN, command), '--config-file',
                           str(config)], capture_output=True, text=True,
                          timeout=120, **kwargs)


def _baremetal(url, *args, **env):
    return subprocess.run(
        [os.path.join(BIN, 'baremetal'), *args],
        env=dict(os.environ, OS_ENDPOINT=url, **env),
        capture_output=True, text=True, timeout=120)


def test_ferrum_serves_the_api_and_stops_cleanly(tmp_path):
    with server.running_ferrum(tmp_path) as url:
        response = requests.get(url + '/v1', timeout=10)
        assert response.status_code == 200
        assert (response.headers['X-OpenStack-Ironic-API-Version']
                == MIN_VERSION)
        assert response.headers['X-OpenStack-Ironic-API-Minimum-Version']
        assert response.headers['X-OpenStack-Ironic-API-Maximum-Version']
        assert response.json()['links'][0]['href'] == url + '/v1/'

        listed = _baremetal(url, 'node', 'list', '-f', 'json',
                            OS_AUTH_TYPE='none')
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout) == []
    # running_ferrum has checked the exit status after SIGTERM.
    assert 'ferrum is stopping' in (tmp_path / 'ferrum.out').read_text()


def test_ferrum_api_with_http_basic(tmp_path):
    subprocess.run([os.path.join(BIN, 'ferrum-dbsync'), '--config-file',
                    str(server.write_config(tmp_path, 0)), 'upgrade'],
                   check=True, capture_output=True)
    users = tmp_path / 'htpasswd'
    users.write_text('admin:%s\n' % bcrypt.hashpw(
        b'secret', bcrypt.gensalt(4)).decode())
    extra = {'DEFAULT': {'auth_strategy': 'http_basic',
                         'http_basic_auth_user_file': str(users)}}
    with server.running_ferrum(tmp_path, extra,
                               command='ferrum-api') as url:
        response = requests.get(url + '/v1/nodes', timeout=10)
        assert response.status_code == 401
        assert requests.get(url + '/v1/nodes', auth=('admin', 'secret'),
                            timeout=10).json() == {'nodes': []}

        credentials = {'OS_AUTH_TYPE': 'http_basic',
                       'OS_USERNAME': 'admin'}
        listed = _baremetal(url, 'node', 'list', '-f', 'json',
                            OS_PASSWORD='secret', **credentials)
        assert listed.returncode == 0, listed.stderr
        refused = _baremetal(url, 'node', 'list', OS_PASSWORD='wrong',
                             **credentials)
        assert refused.returncode == 1
        assert 'Incorrect username or password. (HTTP 401)' in (
            refused.stderr)


def test_ferrum_api_refuses_an_outdated_schema(tmp_path):
    result = _run('ferrum-api', server.write_config(tmp_path, 0))
    assert result.returncode == 1
    assert 'ferrum-api cannot start: The database at sqlite:' in (
        result.stderr)
    assert 'run "ferrum-dbsync upgrade"' in result.stderr


def test_noauth_on_a_public_address_is_refused_before_anything_starts(
        tmp_path):
    config = server.write_config(tmp_path, 0, {'api': {
        'host_ip': '0.0.0.0'}})
    result = _run('ferrum', config)
    assert result.returncode == 1
    assert ('ferrum cannot start: Refusing to serve the API on 0.0.0.0 '
            'without authentication') in result.stderr
    assert not (tmp_path / 'state' / 'ferrum.sqlite').exists()


def test_port_in_use_fails_cleanly_and_unregisters(tmp_path):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = server.write_config(tmp_path, port)
        result = _run('ferrum', config)
    assert result.returncode == 1
    assert ('ferrum cannot start: Cannot serve the API on 127.0.0.1 port '
            '%d: ' % port) in result.stderr
    assert 'Traceback' not in result.stderr
    conf = ferrum_conf.new_conf(['--config-file', str(config)])
    db = db_api.Database(conf)
    try:
        assert not conductor_obj.get(db, 'ferrum-under-test').online
    finally:
        db.dispose()


def test_ferrum_on_postgresql(tmp_path, pg_url):
    with server.running_ferrum(tmp_path, database_url=pg_url) as url:
        assert requests.get(url + '/v1/nodes',
                            timeout=10).json() == {'nodes': []}
