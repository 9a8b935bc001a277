# SPDX-License-Identifier: Apache-2.0
"""HTTP Basic authentication against a bcrypt htpasswd file."""

import base64
import json
import logging
import os
from unittest import mock

import bcrypt
import pytest

from ferrum.api import app as api_app
from ferrum.common import http_basic

# Cost 4, the minimum, keeps the suite fast; the code path is the same. A
# fixed salt keeps the hash, and so the test ids it appears in, the same in
# every process: pytest-xdist's workers must collect the same ids.
ADMIN_HASH = bcrypt.hashpw(b'admin-pw',
                           b'$2b$04$ferrumtestsaltferrumte').decode()
# htpasswd -B writes $2y$; bcrypt reads it as $2b$.
OPS_HASH = '$2y$' + bcrypt.hashpw(b'ops-pw', bcrypt.gensalt(4)).decode()[4:]


def _basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode()).decode()
    return {'Authorization': 'Basic ' + token}


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / 'htpasswd'
    path.write_text('# API users\nadmin:%s\n\nops:%s\n' % (ADMIN_HASH,
                                                          OPS_HASH))
    return path


@pytest.fixture
def basic_conf(conf, user_file):
    conf.set_override('auth_strategy', 'http_basic')
    conf.set_override('http_basic_auth_user_file', str(user_file))
    return conf


@pytest.fixture
def client(basic_conf, db, conductor):
    return api_app.create_app(
        basic_conf, db,
        conductor.manager).test_client()


def _bump_mtime(path):
    # Same-second rewrites must still be noticed; make the change explicit.
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


@pytest.mark.parametrize('headers, message', [
    ({}, 'Authorization required.'),
    ({'Authorization': 'Bearer abc'}, 'Unsupported authorization type '
                                      '"Bearer"; use Basic.'),
    ({'Authorization': 'Basic !!!'}, 'Could not decode the Basic '
                                     'authorization token.'),
    ({'Authorization': 'Basic \u00e9t\u00e9'}, 'Could not decode the Basic '
                                                'authorization token.'),
    ({'Authorization': 'Basic ' + base64.b64encode(b'\xff:pw').decode()},
     'Could not decode the Basic authorization token.'),
    ({'Authorization': 'Basic ' + base64.b64encode(b'nocolon').decode()},
     'Could not decode the Basic authorization token.'),
    (_basic('admin', 'wrong'), 'Incorrect username or password.'),
    (_basic('nobody', 'admin-pw'), 'Incorrect username or password.'),
])
def test_missing_or_bad_credentials_are_401_with_a_challenge(
        client, headers, message):
    response = client.get('/v1/nodes', headers=headers)
    assert response.status_code == 401
    assert response.headers['WWW-Authenticate'] == (
        'Basic realm="Baremetal API"')
    assert _fault(response) == message
    assert response.headers['X-OpenStack-Ironic-API-Maximum-Version']


def test_unauthenticated_gets_401_before_version_negotiation(client):
    response = client.get('/v1/nodes', headers={
        'X-OpenStack-Ironic-API-Version': '9.9'})
    assert response.status_code == 401


@pytest.mark.parametrize('user, password', [('admin', 'admin-pw'),
                                            ('ops', 'ops-pw')])
def test_good_credentials_pass(client, user, password):
    response = client.get('/v1/nodes', headers=_basic(user, password))
    assert response.status_code == 200
    assert response.get_json() == {'nodes': []}


@pytest.mark.parametrize('path', ['/', '/v1', '/v1/'])
def test_version_discovery_is_public(client, path):
    assert client.get(path).status_code == 200


def test_repeated_requests_check_bcrypt_once(client):
    with mock.patch.object(http_basic.bcrypt, 'checkpw', autospec=True,
                           side_effect=bcrypt.checkpw) as checkpw:
        for _ in range(3):
            assert client.get('/v1/nodes', headers=_basic(
                'admin', 'admin-pw')).status_code == 200
        assert client.get('/v1/nodes', headers=_basic(
            'admin', 'wrong')).status_code == 401
        assert client.get('/v1/nodes', headers=_basic(
            'admin', 'wrong')).status_code == 401
    # One success remembered; failures are checked every time.
    assert checkpw.call_count == 3


def test_verified_cache_is_bounded():
    cache = http_basic.VerifiedCache(size=2)
    for password in (b'admin-pw', b'admin-pw', b'x', b'y', b'admin-pw'):
        cache.check('admin', password, ADMIN_HASH.encode())
    assert len(cache._digests) == 1
    hashed = bcrypt.hashpw(b'p', bcrypt.gensalt(4))
    for user in ('a', 'b', 'c'):
        assert cache.check(user, b'p', hashed)
    assert len(cache._digests) == 2


def test_password_longer_than_72_bytes_is_not_a_500(tmp_path, basic_conf,
                                                    db, conductor):
    long_password = 'p' * 100
    (tmp_path / 'htpasswd').write_text('long:%s\n' % bcrypt.hashpw(
        long_password[:72].encode(), bcrypt.gensalt(4)).decode())
    client = api_app.create_app(basic_conf, db,
                                conductor.manager).test_client()
    assert client.get('/v1/nodes', headers=_basic(
        'long', long_password)).status_code == 200
    assert client.get('/v1/nodes', headers=_basic(
        'long', 'q' * 100)).status_code == 401


def test_user_file_changes_are_picked_up(client, user_file):
    good = _basic('admin', 'admin-pw')
    assert client.get('/v1/nodes', headers=good).status_code == 200

    new_hash = bcrypt.hashpw(b'new-pw', bcrypt.gensalt(4)).decode()
    user_file.write_text('admin:%s\n' % new_hash)
    _bump_mtime(user_file)
    # The old password was remembered, but under the old hash.
    assert client.get('/v1/nodes', headers=good).status_code == 401
    assert client.get('/v1/nodes', headers=_basic(
        'admin', 'new-pw')).status_code == 200
    assert client.get('/v1/nodes', headers=_basic(
        'ops', 'ops-pw')).status_code == 401


def test_a_broken_edit_refuses_requests_until_fixed(client, user_file,
                                                    caplog):
    good = _basic('admin', 'admin-pw')
    content = user_file.read_text()
    user_file.write_text(content + 'ops2:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n')
    _bump_mtime(user_file)
    response = client.get('/v1/nodes', headers=good)
    assert response.status_code == 503
    assert 'users file is unusable' in _fault(response)
    assert str(user_file) not in response.get_data(as_text=True)
    assert 'line 5 (user "ops2") is not a bcrypt hash' in caplog.text

    user_file.write_text(content)
    _bump_mtime(user_file)
    assert client.get('/v1/nodes', headers=good).status_code == 200


def test_a_removed_file_refuses_requests(client, user_file):
    user_file.unlink()
    response = client.get('/v1/nodes', headers=_basic('admin', 'admin-pw'))
    assert response.status_code == 503
    assert "Retry later" in _fault(response)


@pytest.mark.parametrize('content, reason', [
    (None, 'it does not exist.'),
    ('admin\n', 'line 1 is not of the form "user:bcrypt-hash".'),
    (':%s\n' % ADMIN_HASH, 'line 1 is not of the form "user:bcrypt-hash".'),
    ('# users\nadmin:$apr1$abcdefgh$0123456789abcdefghijkl\n',
     'line 2 (user "admin") is not a bcrypt hash; only bcrypt is '
     'supported, make one with "htpasswd -nbB".'),
    ('admin:%s\n' % ADMIN_HASH[:40],
     'line 1 (user "admin") is a truncated or malformed bcrypt hash.'),
    ('admin:%s\nadmin:%s\n' % (ADMIN_HASH, OPS_HASH),
     'line 2 repeats user "admin".'),
    (b'admin:\xff\n', 'it is not UTF-8 text.'),
])
def test_unusable_user_file_fails_at_install_naming_it(
        basic_conf, db, conductor, user_file, content, reason):
    if content is None:
        user_file.unlink()
    elif isinstance(content, bytes):
        user_file.write_bytes(content)
    else:
        user_file.write_text(content)
    with pytest.raises(http_basic.UserFileInvalid) as info:
        api_app.create_app(basic_conf, db,
                           conductor.manager)
    message = str(info.value)
    assert message == (
        'Cannot use the HTTP Basic users file %s (set by [DEFAULT] '
        'http_basic_auth_user_file): %s' % (user_file, reason))
    assert ADMIN_HASH[7:] not in message and OPS_HASH[7:] not in message


def test_unreadable_user_file_fails_at_install(tmp_path):
    # A directory is unreadable as a file even for root.
    with pytest.raises(http_basic.UserFileInvalid,
                       match='it cannot be read: Is a directory.'):
        http_basic.UserFile(str(tmp_path),
                            '[DEFAULT] http_basic_auth_user_file')


def test_secrets_are_never_logged(client, caplog):
    caplog.set_level(logging.DEBUG)
    for password in ('admin-pw', 'Wr0ngPassw0rd'):
        client.get('/v1/nodes', headers=_basic('admin', password))
    client.get('/v1/nodes', headers=_basic('nobody', 'Wr0ngPassw0rd'))
    for secret in ('admin-pw', 'Wr0ngPassw0rd', ADMIN_HASH, OPS_HASH,
                   _basic('admin', 'admin-pw')['Authorization'][6:]):
        assert secret not in caplog.text
    assert 'wrong password for user' in caplog.text


def test_noauth_serves_everyone(conf, db, conductor):
    client = api_app.create_app(conf, db, conductor.manager).test_client()
    assert client.get('/v1/nodes').status_code == 200
