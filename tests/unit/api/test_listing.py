# SPDX-License-Identifier: Apache-2.0
"""listing.host_url: the environment's fast path builds werkzeug's URL."""

import flask
import pytest

from ferrum.api import listing

_HOSTS = ['127.0.0.1:6385', 'example.com', 'Example.COM:80', 'example.com:443',
          'a-b.c', '10.0.0.1:1', 'h:99999', '[::1]:6385', '[::1', 'é.com',
          'a b', 'host:port', 'x' * 300, '']
_PLAIN = set(_HOSTS[:6])


@pytest.mark.parametrize('scheme', ['http', 'https'])
@pytest.mark.parametrize('host', _HOSTS)
@pytest.mark.parametrize('script', ['', '/baremetal'])
def test_the_same_url_as_werkzeug(scheme, host, script):
    app = flask.Flask(__name__)
    environ = {'HTTP_HOST': host, 'wsgi.url_scheme': scheme,
               'SCRIPT_NAME': script}
    with app.test_request_context('/v1/nodes', environ_overrides=environ):
        try:
            expected = flask.request.host_url
        except ValueError as exc:
            # werkzeug refuses it: so does the fast path (it is werkzeug's).
            with pytest.raises(ValueError, match=str(exc)[:20] or None):
                listing.host_url()
            return
        assert listing.host_url() == expected
        plain = listing._PLAIN_HOST.fullmatch(host)
        fast = (not script and plain is not None
                and int(plain.group(1) or 1) <= 65535)
        # The fast path is taken for the usual Host headers.
        assert fast == (not script and host in _PLAIN)
