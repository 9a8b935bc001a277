# SPDX-License-Identifier: Apache-2.0
"""What a failed OneView operation becomes: ferrum exceptions with a status.

:mod:`ferrum.drivers.oneview.session` turns every failure of hpOneView
into one of these (nothing else of hpOneView's reaches the rest of the
package), and the settings and the driver raise them too. Each class's
``code`` is the HTTP status a client gets when the API waits for the call.
:func:`error_code` and :func:`reason` read hpOneView's failures for their
messages. Importing this module needs no hpOneView.
"""

from ferrum.common import exception


class OneViewError(exception.DriverError):
    """A OneView operation failed; the message says which and why.

    409: the appliance refused what was asked in its current state; a
    retry as it is would fail the same way.
    """

    msg_fmt = 'OneView %(action)s failed: %(reason)s'
    code = 409


class OneViewUnreachable(OneViewError):
    """503: the appliance is down or busy; retrying later may work."""

    code = 503
    msg_fmt = ('OneView appliance %(address)s did not answer during '
               '%(action)s: %(reason)s. Check [oneview] manager_url, the '
               'network, and that the appliance is up.')


class OneViewLoginError(OneViewError):
    """400: the credentials are refused; ferrum's configuration must
    change. Not 409: python-ironicclient retries 409 and 503."""

    code = 400

    msg_fmt = ('Logging in to OneView appliance %(address)s as %(user)s '
               'failed: %(reason)s. Check [oneview] username and password.')


class OneViewTLSError(OneViewLoginError):
    msg_fmt = ('The TLS certificate of OneView appliance %(address)s was '
               'refused: %(reason)s. [oneview] tls_cacert_file (%(ca)s) must '
               'be the CA certificate that signed the appliance\'s.')


class OneViewTaskError(OneViewError):
    msg_fmt = 'The OneView task of %(action)s failed: %(reason)s'


class OneViewNotFound(OneViewError):
    """400: a URI in the node's driver_info or properties is wrong."""

    code = 400
    msg_fmt = ('%(what)s %(uri)s does not exist in OneView (%(action)s); '
               'correct the node\'s %(key)s.')


class OneViewConfigError(OneViewError):
    """400: the [oneview] options must be fixed (the conductor refuses to
    start with them)."""

    code = 400

    msg_fmt = '[oneview] options must be fixed: %(reason)s'


def error_code(exc: Exception) -> str:
    """hpOneView's ``errorCode`` of a failure, or ''."""
    code = getattr(exc, 'error_code', None)
    response = getattr(exc, 'oneview_response', None)
    if not code and isinstance(response, dict):
        code = response.get('errorCode')
    return str(code or '')


def reason(exc: BaseException) -> str:
    """A one-line reason: hpOneView puts whole tracebacks in some messages."""
    text = (getattr(exc, 'msg', None) or str(exc) or type(exc).__name__)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    last = lines[-1] if lines else type(exc).__name__
    code = error_code(exc) if isinstance(exc, Exception) else ''
    return ('%s (%s)' % (last, code) if code and code not in last
            else last)[:500]
