# SPDX-License-Identifier: Apache-2.0
"""The OneView client without an appliance: [oneview] settings, the
per-conductor client cache, and how the session translates hpOneView's
failures (hpOneView's client class is replaced, the process boundary)."""

import importlib.util

import pytest

from ferrum.drivers.oneview import errors
from ferrum.drivers.oneview import settings as ov_settings
from tests.real import require_real


@pytest.fixture
def client():
    """ferrum.drivers.oneview.client, which needs hpOneView to import."""
    if importlib.util.find_spec('hpOneView') is None:
        require_real('hpOneView')
    from ferrum.drivers.oneview import client as module
    return module


@pytest.mark.parametrize('url, address', [
    ('oneview.example.com', 'oneview.example.com'),
    ('https://oneview.example.com/', 'oneview.example.com'),
    ('https://10.0.0.5:8443/rest', '10.0.0.5:8443'),
    ('127.0.0.1:40000', '127.0.0.1:40000'),
    ('[::1]:443', '[::1]:443'),
])
def test_manager_url_becomes_what_hponeview_wants(url, address):
    assert ov_settings.address_of(url) == address


def _oneview_conf(conf, **values):
    base = {'manager_url': 'ov.example.com', 'username': 'u',
            'password': 'secret-pw', 'tls_cacert_file': '/etc/ca.pem'}
    base.update(values)
    for name, value in base.items():
        conf.set_override(name, value, 'oneview')
    return conf


def test_settings_need_a_ca_file_unless_insecure(conf):
    with pytest.raises(errors.OneViewConfigError) as caught:
        ov_settings.settings_from(_oneview_conf(conf, tls_cacert_file=None))
    assert 'tls_cacert_file' in str(caught.value)
    insecure = ov_settings.settings_from(_oneview_conf(
        conf, allow_insecure_connections=True))
    assert insecure.ca_file is None
    assert insecure.hponeview_config['ssl_certificate'] is False


def test_settings_always_carry_a_timeout_and_hide_the_password(conf):
    settings = ov_settings.settings_from(_oneview_conf(conf))
    config = settings.hponeview_config
    assert config['timeout'] == 60.0
    assert config['ssl_certificate'] == '/etc/ca.pem'
    assert 'secret-pw' not in repr(settings)
    assert settings.wait == 600
    conf.set_override('task_timeout', 0, 'oneview')
    assert ov_settings.settings_from(conf).wait == -1


def test_missing_options_are_named(conf):
    with pytest.raises(errors.OneViewConfigError) as caught:
        ov_settings.settings_from(conf)
    assert 'manager_url, username, password' in str(caught.value)


def test_one_client_per_settings(client, conf):
    _oneview_conf(conf)
    assert client.get_client(conf) is client.get_client(conf)
    first = client.get_client(conf)
    conf.set_override('username', 'other', 'oneview')
    assert client.get_client(conf) is not first


class _Session:
    """Stands for hpOneView's OneViewClient: ``call`` runs ``script``."""

    def __init__(self, script):
        self.script = script


def _client_with(client, conf, sessions):
    made = []

    def factory(config):
        assert config['timeout'] == 60.0 and config['ssl_certificate']
        made.append(config)
        return sessions[len(made) - 1]
    return client.Client(ov_settings.settings_from(_oneview_conf(conf)),
                         factory=factory), made


def test_an_expired_session_logs_in_again_once(client, conf):
    from hpOneView import exceptions as ov_exc
    expired = ov_exc.HPOneViewException({'errorCode': 'AUTHORIZATION',
                                         'message': 'session expired'})
    answers = [expired, 'ok', expired, expired]

    def run(session):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer
    ov, made = _client_with(client, conf, [_Session(run) for _ in range(3)])
    assert ov.call('test', run) == 'ok'
    assert len(made) == 2
    with pytest.raises(errors.OneViewError, match='session expired'):
        ov.call('test', run)       # the retry is expired too: no loop
    assert len(made) == 3


@pytest.mark.parametrize('raised, error, words', [
    (ConnectionRefusedError(111, 'Connection refused'), 'OneViewUnreachable',
     'did not answer during test: [Errno 111] Connection refused'),
    (TimeoutError('timed out'), 'OneViewUnreachable', 'timed out'),
    ('task', 'OneViewTaskError', 'The OneView task of test failed: no way'),
    ('timeout', 'OneViewTaskError', 'task_timeout'),
    ('missing', 'OneViewNotFound', 'Thing /rest/x does not exist'),
    ('busy', 'OneViewUnreachable', 'maintenance window'),
])
def test_failures_become_ferrum_errors(client, conf, raised, error, words):
    from hpOneView import exceptions as ov_exc
    made = {'task': ov_exc.HPOneViewTaskError('no way', 'BadThing'),
            'timeout': ov_exc.HPOneViewTimeout('Waited 1 seconds'),
            'missing': ov_exc.HPOneViewException({
                'errorCode': 'RESOURCE_NOT_FOUND', 'message': 'gone'}),
            'busy': ov_exc.HPOneViewException({
                'errorCode': 'SERVICE_UNAVAILABLE',
                'message': 'maintenance window'})}.get(raised, raised)

    def run(session):
        raise made
    ov, _made = _client_with(client, conf, [_Session(run)])
    with pytest.raises(getattr(errors, error)) as caught:
        ov.call('test', run, not_found=('Thing', '/rest/x'))
    assert words in str(caught.value)
    assert isinstance(caught.value, errors.OneViewError)


def test_login_failures_name_the_cause(client, conf):
    from hpOneView import exceptions as ov_exc

    def refused(config):
        raise ov_exc.HPOneViewException(
            'Failure during login attempt.\n Traceback ...\n'
            'ConnectionRefusedError: [Errno 111] Connection refused')

    def bad_password(config):
        raise ov_exc.HPOneViewException({'errorCode': 'AUTHN_AUTH_FAIL',
                                         'message': 'Invalid user name or '
                                                    'password.'})
    settings = ov_settings.settings_from(_oneview_conf(conf))
    with pytest.raises(errors.OneViewUnreachable, match='Errno 111'):
        client.Client(settings, factory=refused).call('x', lambda s: s)
    with pytest.raises(errors.OneViewLoginError) as caught:
        client.Client(settings, factory=bad_password).call('x', lambda s: s)
    assert 'Check [oneview] username and password' in str(caught.value)
    assert caught.value.code == 400  # fix the configuration; no retry
    assert 'secret-pw' not in str(caught.value)


def test_refused_logins_back_off(client, conf):
    from hpOneView import exceptions as ov_exc

    from ferrum.drivers.oneview import session
    attempts = []

    def bad_password(config):
        attempts.append(config)
        raise ov_exc.HPOneViewException({'errorCode': 'AUTHN_AUTH_FAIL',
                                         'message': 'Invalid password.'})
    now = [1000.0]
    ov = client.Client(ov_settings.settings_from(_oneview_conf(conf)),
                       factory=bad_password, clock=lambda: now[0])
    for _ in range(5):
        with pytest.raises(errors.OneViewLoginError):
            ov.call('x', lambda s: s)
    assert len(attempts) == 1  # the account is spared
    with pytest.raises(errors.OneViewLoginError, match='paused for 30'):
        ov.call('x', lambda s: s)
    now[0] += session.LOGIN_BACKOFF_S
    with pytest.raises(errors.OneViewLoginError):
        ov.call('x', lambda s: s)
    assert len(attempts) == 2
    # The next pause doubles.
    now[0] += session.LOGIN_BACKOFF_S
    with pytest.raises(errors.OneViewLoginError, match='paused'):
        ov.call('x', lambda s: s)
    assert len(attempts) == 2


@pytest.mark.parametrize('raised, error, code, words', [
    ('tls', 'OneViewTLSError', 400, 'tls_cacert_file'),
    ('nofile', 'OneViewConfigError', 400, 'is not a readable file'),
    ('notca', 'OneViewConfigError', 400,
     'tls_cacert_file /etc/ca.pem holds no CA certificate'),
    ('refused', 'OneViewUnreachable', 503, 'did not answer'),
])
def test_login_failures_get_their_status(client, conf, raised, error, code,
                                         words):
    import ssl

    from hpOneView import exceptions as ov_exc
    made = {
        'tls': ov_exc.HPOneViewException(
            'Failure during login attempt.\n Traceback ...\n'
            'ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] '
            'certificate verify failed'),
        'nofile': FileNotFoundError(2, 'No such file or directory'),
        'notca': ov_exc.HPOneViewException(
            'Failure during login attempt.\n Traceback ...\nssl.SSLError: '
            '[X509: NO_CERTIFICATE_OR_CRL_FOUND] no certificate or crl '
            'found (_ssl.c:4154)'),
        'refused': ssl.SSLZeroReturnError('TLS/SSL connection has been '
                                          'closed (EOF)'),
    }[raised]

    def factory(config):
        raise made
    ov = client.Client(ov_settings.settings_from(_oneview_conf(conf)),
                       factory=factory)
    with pytest.raises(getattr(errors, error)) as caught:
        ov.call('x', lambda s: s)
    assert caught.value.code == code
    assert words in str(caught.value)


def test_a_missing_resource_is_a_400_naming_the_key(client, conf):
    from hpOneView import exceptions as ov_exc

    def run(session):
        raise ov_exc.HPOneViewException({'errorCode': 'RESOURCE_NOT_FOUND',
                                         'message': 'gone'})
    ov, _made = _client_with(client, conf, [_Session(run)])
    with pytest.raises(errors.OneViewNotFound) as caught:
        ov.call('reading', run, not_found=('Server hardware', '/rest/sh/9'))
    assert caught.value.code == 400
    assert 'driver_info server_hardware_uri' in str(caught.value)


def test_a_ca_file_must_be_readable_and_hold_a_certificate(tmp_path):
    with pytest.raises(errors.OneViewConfigError,
                       match='is not a readable file'):
        ov_settings.check_ca_file(str(tmp_path / 'missing.pem'))
    garbage = tmp_path / 'garbage.pem'
    garbage.write_text('not a certificate\n')
    with pytest.raises(errors.OneViewConfigError,
                       match='holds no CA certificate') as caught:
        ov_settings.check_ca_file(str(garbage))
    assert caught.value.code == 400
    assert '\n' not in str(caught.value)
