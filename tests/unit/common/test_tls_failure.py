# SPDX-License-Identifier: Apache-2.0
"""Which failed calls to a conductor are blamed on TLS settings."""

import ssl

import pytest
import requests

from ferrum.common import tls


def _error(cls, reason, text='handshake'):
    error = cls(1, '[SSL: %s] %s' % (reason, text))
    error.reason = reason
    return error


def _as_requests(error):
    """As requests raises it: the SSL error wrapped twice."""
    try:
        try:
            raise error
        except ssl.SSLError as inner:
            raise ConnectionError(inner) from inner
    except ConnectionError as middle:
        return requests.ConnectionError(middle)


@pytest.mark.parametrize('reason', [
    'TLSV13_ALERT_CERTIFICATE_REQUIRED', 'SSLV3_ALERT_BAD_CERTIFICATE',
    'TLSV1_ALERT_UNKNOWN_CA', 'SSLV3_ALERT_HANDSHAKE_FAILURE',
    'WRONG_VERSION_NUMBER', 'CERTIFICATE_REQUIRED', 'NO_SHARED_CIPHER'])
def test_a_refused_handshake_names_the_settings(reason):
    failure = tls.client_failure(_as_requests(_error(ssl.SSLError, reason)))
    assert failure is not None
    assert failure.startswith('the TLS handshake failed (%s)' % reason)
    assert '[json_rpc] cafile' in failure


def test_an_untrusted_certificate_names_cafile():
    error = ssl.SSLCertVerificationError(1, 'certificate verify failed')
    error.reason = 'CERTIFICATE_VERIFY_FAILED'
    error.verify_message = 'unable to get local issuer certificate'
    failure = tls.client_failure(_as_requests(error))
    assert failure is not None
    assert failure.startswith('its TLS certificate is not trusted (unable '
                              'to get local issuer certificate)')


@pytest.mark.parametrize('cls, reason', [
    (ssl.SSLEOFError, 'UNEXPECTED_EOF_WHILE_READING'),
    (ssl.SSLEOFError, None),
    (ssl.SSLZeroReturnError, None),
    (ssl.SSLSyscallError, None),
])
def test_a_connection_lost_mid_handshake_does_not_blame_cafile(cls, reason):
    # A conductor killed mid-handshake, a reset; or a server that closed
    # on a missing client certificate before its alert arrived.
    failure = tls.client_failure(_as_requests(_error(cls, reason)))
    assert failure is not None
    assert failure.startswith('the connection closed during the TLS '
                              'handshake (')
    assert 'the conductor stopped or dropped it' in failure
    assert 'cafile' not in failure.replace('[ssl] ca_file', '')


def test_another_ssl_error_is_no_tls_failure():
    # A reason that says nothing about the settings.
    error = _error(ssl.SSLError, 'BAD_LENGTH')
    assert tls.client_failure(_as_requests(error)) is None
